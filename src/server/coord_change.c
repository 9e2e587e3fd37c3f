/* Coordinator changes: see coord_change.h.
 *
 * The connection string's form is ClusterConnectionString's (fdbclient/MonitorLeader.actor.cpp):
 * "description:id@address,address,...", the description [A-Za-z0-9_]+, the id [A-Za-z0-9]+,
 * each address "ip:port" with ":tls" after it when TLS is on. This process runs a
 * coordination server at its main listener and at each --coordinator listener, so a string is
 * taken only when every address is one of those, each once (the client's changeQuorumChecker
 * already made sure each new coordinator answered a GetLeaderRequest for the new key). */
#include <stdio.h>
#include <string.h>

#include "error_codes.h"
#include "coord_change.h"
#include "coordinator.h"
#include "mvcc_store.h"
#include "server.h"
#include "system_keys.h"

static const cfdb_bytes coordinators_key = { (const uint8_t *)"\xff/coordinators", 14 };

static bool alnum(char ch, bool underscore)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           (underscore && ch == '_');
}

/* Whether [p, e) is the address of one of our coordination servers; *listener its index. */
static bool our_coordinator(srv *s, const char *p, const char *e, int *listener)
{
    for (int i = 0; i < s->n_coord_listeners; i++) {
        char mine[96];
        int ml = snprintf(mine, sizeof mine, "%s:%u%s", s->cfg.listen_ip, s->listeners[s->coord_listeners[i]].port,
                          s->tls ? ":tls" : "");
        if ((size_t)(e - p) == (size_t)ml && memcmp(p, mine, (size_t)ml) == 0) {
            *listener = s->coord_listeners[i];
            return true;
        }
    }
    return false;
}

/* 0 when cs is a connection string naming only this process's coordination servers, each
 * once; the key's two parts and the coordinators (listener indexes) are copied out. */
static int parse_ours(srv *s, const char *cs, size_t len, char *desc, char *id, int *set, int *nset)
{
    const char *colon = memchr(cs, ':', len);
    const char *at = memchr(cs, '@', len);
    if (!colon || !at || colon > at)
        return CFDB_ERR_CONNECTION_STRING_INVALID;
    size_t dl = (size_t)(colon - cs), il = (size_t)(at - colon - 1);
    if (dl == 0 || il == 0 || dl >= sizeof s->cluster_desc || il >= sizeof s->cluster_id)
        return CFDB_ERR_CONNECTION_STRING_INVALID;
    for (size_t i = 0; i < dl; i++)
        if (!alnum(cs[i], true))
            return CFDB_ERR_CONNECTION_STRING_INVALID;
    for (size_t i = 0; i < il; i++)
        if (!alnum(colon[1 + i], false))
            return CFDB_ERR_CONNECTION_STRING_INVALID;
    const char *p = at + 1, *end = cs + len;
    if (p == end)
        return CFDB_ERR_CONNECTION_STRING_INVALID;
    *nset = 0;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        int l;
        if (!our_coordinator(s, p, e, &l))
            return CFDB_ERR_COORDINATORS_CHANGED; /* not a coordination server we run */
        for (int k = 0; k < *nset; k++)
            if (set[k] == l)
                return CFDB_ERR_CONNECTION_STRING_INVALID; /* named twice */
        if (*nset == SRV_MAX_COORDS)
            return CFDB_ERR_CONNECTION_STRING_INVALID;
        set[(*nset)++] = l;
        p = comma ? comma + 1 : end;
        if (comma && p == end)
            return CFDB_ERR_CONNECTION_STRING_INVALID;
    }
    memcpy(desc, cs, dl);
    desc[dl] = 0;
    memcpy(id, colon + 1, il);
    id[il] = 0;
    return 0;
}

int coord_change_check(srv *s, const cfdb_mutation *m, size_t n, char *out, size_t cap)
{
    const cfdb_mutation *last = NULL;
    for (size_t i = 0; i < n; i++)
        if (m[i].type == CFDB_MUT_SET_VALUE && cfdb_bytes_eq(m[i].param1, coordinators_key))
            last = &m[i];
    if (!last)
        return 0;
    cfdb_bytes v = last->param2;
    const char *cur = cfdb_server_connection_string(s);
    if (v.len == strlen(cur) && memcmp(v.ptr, cur, v.len) == 0)
        return 0; /* the value it already has */
    char desc[sizeof s->cluster_desc], id[sizeof s->cluster_id];
    int set[SRV_MAX_COORDS], nset;
    if (v.len >= cap || parse_ours(s, (const char *)v.ptr, v.len, desc, id, set, &nset)) {
        srv_log(s, "refused a coordinators change to %.*s: not this process's coordination servers, each once (now %s)",
                (int)(v.len > 200 ? 200 : v.len), (const char *)v.ptr, cur);
        return CFDB_ERR_COORDINATORS_CHANGED;
    }
    memcpy(out, v.ptr, v.len);
    out[v.len] = 0;
    return 1;
}

static void forward_parked(srv *s)
{
    for (srv_parked *p = s->parked.next; p != &s->parked;) {
        srv_parked *nx = p->next;
        if (p->kind == PARK_OPEN_DATABASE || p->kind == PARK_GET_LEADER) {
            /* polls for the old key: answered by coord_forward_reply as a forward */
            coord_forward_reply(s, p->c, p->reply, p->kind == PARK_GET_LEADER);
            srv_unpark(s, p);
        }
        p = nx;
    }
}

static void adopt(srv *s, const char *desc, const char *id, const int *set, int nset)
{
    snprintf(s->cluster_desc, sizeof s->cluster_desc, "%s", desc);
    snprintf(s->cluster_id, sizeof s->cluster_id, "%s", id);
    memcpy(s->coord_set, set, (size_t)nset * sizeof *set);
    s->n_coord_set = nset;
}

void coord_change_apply(srv *s, const char *cs)
{
    char desc[sizeof s->cluster_desc], id[sizeof s->cluster_id];
    int set[SRV_MAX_COORDS], nset;
    if (parse_ours(s, cs, strlen(cs), desc, id, set, &nset))
        return; /* checked before the batch was applied */
    if (s->n_old_keys == SRV_OLD_KEYS) {
        memmove(s->old_keys[0], s->old_keys[1], sizeof s->old_keys[0] * (SRV_OLD_KEYS - 1));
        s->n_old_keys--;
    }
    snprintf(s->old_keys[s->n_old_keys++], sizeof s->old_keys[0], "%s:%s", s->cluster_desc, s->cluster_id);
    srv_log(s, "coordinators changed: %s -> %s", cfdb_server_connection_string(s), cs);
    adopt(s, desc, id, set, nset);
    s->leader_change_id = srv_random_uid(s);
    forward_parked(s);
    srv_write_system_keys(s);
    if (s->cfg.cluster_file)
        srv_write_cluster_file(s);
    coord_new_generation(s); /* the generation that took the change ends, as fdbserver's */
}

void coord_change_recover(srv *s)
{
    cfdb_bytes v;
    bool present = false;
    if (cfdb_mvcc_get(s->store, cfdb_mvcc_latest_version(s->store), coordinators_key, &v, &present) || !present)
        return;
    char desc[sizeof s->cluster_desc], id[sizeof s->cluster_id];
    int set[SRV_MAX_COORDS], nset;
    if (parse_ours(s, (const char *)v.ptr, v.len, desc, id, set, &nset)) {
        srv_log(s, "the recorded coordinators %.*s are not this process's coordination servers now: keeping %s",
                (int)(v.len > 200 ? 200 : v.len), (const char *)v.ptr, cfdb_server_connection_string(s));
        return;
    }
    adopt(s, desc, id, set, nset);
    srv_log(s, "coordinators as recorded in the data directory: %s", cfdb_server_connection_string(s));
}

bool coord_key_forwarded(const srv *s, cfdb_bytes key)
{
    for (int i = 0; i < s->n_old_keys; i++) {
        size_t l = strlen(s->old_keys[i]);
        if (key.len == l && memcmp(key.ptr, s->old_keys[i], l) == 0)
            return true;
    }
    return false;
}
