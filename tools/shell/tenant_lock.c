/* SPDX-License-Identifier: Apache-2.0 */
/* tenant lock / tenant unlock, as fdbcli 7.3.77 runs them on a cluster that is not a
 * metacluster (tenantLockCommand in fdbcli/TenantCommands.actor.cpp, with
 * TenantAPI::changeLockState from fdbclient/TenantManagement.actor.h):
 *   tenant lock <NAME> [w|rw] [UID]   w: read-only, rw (the default): locked; without a UID a
 *                                     random one; "Locked tenant `NAME' with UID `UID'"
 *   tenant unlock <NAME> <UID>        "Unlocked tenant `NAME'"
 * A UID shorter than 32 hex digits is padded with leading zeros (fdbcli's UID parse:
 * exactly 32 characters, two sscanf %16llx fields).
 * The special key space has no lock parameter, so fdbcli (and this) reads the tenant's id
 * from \xff\xff/management/tenant/map/<NAME> and then changes the tenant map entry itself,
 * in one transaction with READ_SYSTEM_KEYS and ACCESS_SYSTEM_KEYS:
 *   \xff/metacluster/clusterRegistration  present: invalid_metacluster_operation (2161; the
 *                                          management-cluster path of fdbcli is not here)
 *   \xff/conf/tenant_mode                  disabled: tenants_disabled (2136)
 *   \xff/tenant/map/<id, 8 bytes BE>       the TenantMapEntry (absent: tenant_not_found); the
 *                                          same state and UID already: nothing to write; another
 *                                          UID holds it: tenant_locked, printed as "Tenant
 *                                          locked with a different UID" / "Wrong lock UID";
 *                                          else the entry with the new state and UID (none when
 *                                          unlocked), and \xff/tenant/lastModification stamped.
 * The entry's value codec is the wire core's (cfdb_msg_tenant_map_entry, fb_*_versioned). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "cfdb/arena.h"
#include "error_codes.h"
#include "fb.h"
#include "messages.h"
#include "tenant_keys.h"

#define MAP "\xff\xff/management/tenant/map/"

typedef struct lock_req {
    shell_token name;
    const char *key; /* MAP<name> */
    size_t kl;
    uint8_t state; /* the desired TENANT_* state */
    cfdb_uid uid;
} lock_req;

/* fdbcli's catch block for tenant_locked; any other error goes to on_error */
static int locked_elsewhere(const lock_req *q)
{
    fflush(stdout);
    fputs(q->state == TENANT_UNLOCKED ? "ERROR: Wrong lock UID\n" : "ERROR: Tenant locked with a different UID\n",
          stderr);
    return CMD_FAIL;
}

/* "<pre><name as it is><post>" on f */
static void print_raw(FILE *f, const char *pre, shell_token name, const char *post)
{
    fputs(pre, f);
    fwrite(name.p, 1, name.n, f);
    fputs(post, f);
}

static void print_done(const lock_req *q)
{
    char uid[33], tail[48];
    if (q->state == TENANT_UNLOCKED) {
        print_raw(stdout, "Unlocked tenant `", q->name, "'\n");
        return;
    }
    snprintf(tail, sizeof tail, "' with UID `%s'\n", cfdb_uid_format(q->uid, uid));
    print_raw(stdout, "Locked tenant `", q->name, tail);
}

/* TenantAPI::changeLockState: 0 (the entry written, or already as wanted), or the error */
static fdb_error_t change_lock_state(FDBTransaction *tr, const lock_req *q, int64_t id, cfdb_arena *a)
{
    bool present = false;
    char *mode = NULL;
    fdb_error_t e = admin_get(tr, TENANT_MODE_KEY, SL(TENANT_MODE_KEY), &present, &mode, NULL);
    int m = present ? atoi(mode) : 0; /* TenantMode::fromValue: a number, anything else disabled */
    free(mode);
    if (e)
        return e;
    if (m <= 0 || m >= 3)
        return CFDB_ERR_TENANTS_DISABLED;
    char key[SL(TENANT_MAP_PREFIX) + 8];
    memcpy(key, TENANT_MAP_PREFIX, SL(TENANT_MAP_PREFIX));
    cfdb_tenant_prefix(id, (uint8_t *)key + SL(TENANT_MAP_PREFIX));
    char *v = NULL;
    size_t vl = 0;
    if ((e = admin_get(tr, key, sizeof key, &present, &v, &vl)))
        return e;
    if (!present)
        return CFDB_ERR_TENANT_NOT_FOUND;
    cfdb_tenant_map_entry entry;
    memset(&entry, 0, sizeof entry);
    cfdb_bytes value = { 0 };
    e = (fdb_error_t)fb_decode_versioned(&cfdb_msg_tenant_map_entry, cfdb_bytes_make(v, vl), &entry, NULL,
                                         a); /* entry points into v */
    /* checkLockState: the same state and UID already, or another UID holds the lock */
    bool same_uid = !e && entry.tenantLockId.present && cfdb_uid_eq(entry.tenantLockId.value, q->uid);
    bool already = same_uid && entry.tenantLockState == q->state;
    if (!e && entry.tenantLockId.present && !same_uid)
        e = CFDB_ERR_TENANT_LOCKED;
    if (!e && !already) {
        entry.tenantLockState = (uint8_t)q->state;
        entry.tenantLockId.present = q->state != TENANT_UNLOCKED;
        entry.tenantLockId.value = entry.tenantLockId.present ? q->uid : (cfdb_uid){ 0, 0 };
        e = (fdb_error_t)fb_encode_versioned(&cfdb_msg_tenant_map_entry, &entry, a, &value);
    }
    free(v);
    if (e || already)
        return e;
    fdb_transaction_set(tr, (const uint8_t *)key, (int)sizeof key, value.ptr, (int)value.len);
    /* lastTenantModification: Versionstamp() (version -1, batch 0) then the offset 0 */
    static const uint8_t stamp[14] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0 };
    fdb_transaction_atomic_op(tr, (const uint8_t *)TENANT_LAST_MODIFICATION_KEY,
                              (int)SL(TENANT_LAST_MODIFICATION_KEY), stamp, (int)sizeof stamp,
                              FDB_MUTATION_TYPE_SET_VERSIONSTAMPED_VALUE);
    return 0;
}

static int lock_body(FDBTransaction *tr, void *ctx, fdb_error_t *e)
{
    const lock_req *q = ctx;
    bool registered = false, present = false;
    char *json = NULL;
    size_t jl = 0;
    *e = admin_get(tr, METACLUSTER_REGISTRATION_KEY, SL(METACLUSTER_REGISTRATION_KEY), &registered, NULL, NULL);
    if (!*e && registered)
        *e = CFDB_ERR_INVALID_METACLUSTER_OPERATION;
    if (*e)
        return ADMIN_ERROR;
    fdb_transaction_set_option(tr, FDB_TR_OPTION_ACCESS_SYSTEM_KEYS, NULL, 0);
    if ((*e = admin_get(tr, q->key, q->kl, &present, &json, &jl)))
        return ADMIN_ERROR;
    if (!present) {
        fflush(stdout);
        print_raw(stderr, "ERROR: Tenant `", q->name, "' does not exist\n");
        return CMD_FAIL;
    }
    int64_t id = shell_tenant_entry_id(json, jl);
    free(json);
    cfdb_arena a;
    cfdb_arena_init(&a);
    *e = change_lock_state(tr, q, id, &a);
    cfdb_arena_free(&a);
    if (!*e)
        *e = admin_commit(tr);
    if (*e == CFDB_ERR_TENANT_LOCKED)
        return locked_elsewhere(q);
    if (*e)
        return ADMIN_ERROR;
    print_done(q);
    return CMD_OK;
}

int shell_tenant_lock(shell *s, const shell_token *t, size_t n, fdb_error_t *err)
{
    bool unlock = shell_token_is(t[1], "unlock");
    if (!unlock && (n < 3 || n > 5)) {
        printf("Usage: tenant lock <NAME> [w|rw] [UID]\n\n"
               "Locks a tenant for read-write or read-only with a given UID.\n"
               "By default a read-write lock is created.\n"
               "If no UID is passed, fdbcli will generate one.\n"
               "UID has to be a 16-byte number represented in hex.\n");
        return CMD_FAIL;
    }
    if (unlock && n != 4) {
        printf("Usage: tenant unlock <NAME> <UID>\n\n");
        return CMD_FAIL;
    }
    lock_req q = { t[2], NULL, 0, unlock ? TENANT_UNLOCKED : TENANT_LOCKED, { 0, 0 } };
    size_t uid_at = unlock ? 3 : 4;
    if (!unlock && n > 3) {
        if (t[3].n == 1 && t[3].p[0] == 'w')
            q.state = TENANT_READ_ONLY;
        else if (!(t[3].n == 2 && memcmp(t[3].p, "rw", 2) == 0)) {
            fprintf(stderr, "ERROR: Invalid lock type `%.*s'\n", (int)t[3].n, t[3].p);
            return CMD_FAIL;
        }
    }
    if (n > uid_at) {
        /* zero-padded to 32 characters, then exactly 32 with two 16-digit hex fields */
        char buf[33];
        shell_token u = t[uid_at];
        uint64_t hi = 0, lo = 0;
        bool ok = u.n <= 32 && !memchr(u.p, 0, u.n);
        if (ok) {
            memset(buf, '0', 32 - u.n);
            memcpy(buf + 32 - u.n, u.p, u.n);
            buf[32] = 0;
            ok = sscanf(buf, "%16" SCNx64 "%16" SCNx64, &hi, &lo) == 2;
        }
        if (!ok) {
            fprintf(stderr, "ERROR: Couldn't not parse `%.*s' as a valid UID", (int)u.n, u.p);
            return CMD_FAIL;
        }
        q.uid = (cfdb_uid){ hi, lo };
    } else {
        uint8_t r[16];
        admin_random_bytes(r, sizeof r);
        memcpy(&q.uid.first, r, 8);
        memcpy(&q.uid.second, r + 8, 8);
    }
    char *key = admin_key(MAP, q.name, &q.kl);
    if (!key)
        return CMD_FAIL;
    q.key = key;
    int r = admin_run(s, ADMIN_READ_SYSTEM | ADMIN_NO_MESSAGE, lock_body, &q, err);
    free(key);
    return r;
}
