/* A database handle: creation from a connection string, the two reference counts (memory,
 * and users whose last departure stops discovery), shutdown and freeing on the network thread,
 * database options (transaction defaults replayed on every transaction, MAX_WATCHES) and the
 * watch slots. The other concerns live in db_*.c (see db_internal.h).
 *
 * Invariants: db->refs counts memory holders (the users together hold one, each request or
 * task in flight one); the last unref frees on the network thread, through db->free_task when
 * dropped elsewhere, so posting cannot fail. db->users reaching 0 posts db->shutdown_task. */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "future.h"
#include "global_config.h"

static void db_free(void *arg);
static void db_shutdown(void *arg);

cfdb_client *cfdb_db_client(cfdb_db *db)
{
    return db->cl;
}

int64_t cfdb_db_last_seen_version(const cfdb_db *db)
{
    return db->last_version;
}

void cfdb_db_note_version(cfdb_db *db, int64_t v)
{
    if (v > db->last_version)
        db->last_version = v;
}

int cfdb_db_create(cfdb_client *cl, const char *connection_string, cfdb_db **out)
{
    cfdb_cluster_string cs;
    int rc = cfdb_cluster_string_parse(connection_string, strlen(connection_string), &cs);
    if (rc)
        return rc;
    cfdb_db *db = calloc(1, sizeof *db);
    if (!db) {
        cfdb_cluster_string_free(&cs);
        return CFDB_ERR_INTERNAL_ERROR;
    }
    db->cl = cl;
    atomic_init(&db->refs, 1);
    atomic_init(&db->users, 1);
    atomic_init(&db->max_watches, 10000); /* DEFAULT_MAX_OUTSTANDING_WATCHES */
    db->min_acceptable_rv = INT64_MAX;
    db->memory_record_id = (cfdb_uid){ cfdb_monotonic_ns() * 0x9E3779B97F4A7C15ull, (uint64_t)(uintptr_t)db };
    pthread_mutex_init(&db->opt_mu, NULL);
    rc = db_install_coordinators(db, &cs);
    cfdb_cluster_string_free(&cs);
    if (rc) {
        free(db);
        return rc;
    }
    if (db_locations_init(db)) {
        pthread_mutex_destroy(&db->opt_mu);
        free(db);
        return CFDB_ERR_PLATFORM_ERROR;
    }
    db_discovery_init(db);
    db_grv_init(db);
    db_status_init(db);
    cfdb_task_init(&db->free_task, db_free, db);
    cfdb_task_init(&db->shutdown_task, db_shutdown, db);
    *out = db;
    return 0;
}

bool cfdb_db_uses_tls(const cfdb_db *db)
{
    for (int i = 0; i < db->ncoordinators; i++)
        if (db->coordinators[i].tls)
            return true;
    return false;
}

void cfdb_db_ref(cfdb_db *db)
{
    atomic_fetch_add(&db->refs, 1);
}

void db_fail_list(cfdb_waiter **list, int error)
{
    while (*list) {
        cfdb_waiter *w = *list;
        *list = w->next;
        w->fn(w, error, 0);
    }
}

static void db_free(void *arg)
{
    cfdb_db *db = arg;
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    cfdb_loop_timer_cancel(loop, &db->poll_retry);
    cfdb_loop_timer_cancel(loop, &db->gc_retry);
    db_status_monitor_stop(db);
    cfdb_client_forget(db->cl, db->poll_request);
    db_fail_list(&db->ready_waiters, CFDB_ERR_OPERATION_CANCELLED);
    db_grv_free(db);
    /* in-flight location/grv requests keep db alive through their own references */
    db_locations_free(db);
    db_release_proxies(db);
    if (db->persist_pending)
        cfdb_cluster_string_free(&db->forwarded);
    free(db->cluster_file);
    cfdb_gc_view_free(db->gc_view);
    for (int i = 0; i < CFDB_DB_SLOT_COUNT; i++)
        if (db->slots[i].state)
            db->slots[i].free_fn(db->slots[i].state);
    pthread_mutex_destroy(&db->opt_mu);
    free(db);
}

static pthread_mutex_t g_slot_mu = PTHREAD_MUTEX_INITIALIZER;

void *cfdb_db_slot(cfdb_db *db, cfdb_db_slot_id id, void *(*make)(void), void (*free_fn)(void *))
{
    pthread_mutex_lock(&g_slot_mu);
    void *s = db->slots[id].state;
    if (!s && (s = make()) != NULL) {
        db->slots[id].state = s;
        db->slots[id].free_fn = free_fn;
    }
    pthread_mutex_unlock(&g_slot_mu);
    return s;
}

struct cfdb_gc_view *cfdb_db_gc_view(cfdb_db *db)
{
    return db->gc_view;
}

void cfdb_db_set_cluster_file(cfdb_db *db, const char *path)
{
    free(db->cluster_file);
    db->cluster_file = path ? strdup(path) : NULL;
}

/* The last user gone (network thread): discovery stops, so that the long poll, which holds
 * a reference of its own, lets the database go. */
static void db_shutdown(void *arg)
{
    cfdb_db *db = arg;
    db->closing = true;
    db->poll_waiting_dns = false;
    cfdb_loop_timer_cancel(cfdb_client_loop(db->cl), &db->poll_retry);
    if (db->poll_request) {
        cfdb_client_forget(db->cl, db->poll_request);
        db->poll_request = 0;
        cfdb_db_unref(db); /* the poll's */
    }
    db_fail_list(&db->ready_waiters, CFDB_ERR_OPERATION_CANCELLED);
    db_status_monitor_stop(db);
    db_grv_shutdown(db);
    cfdb_db_unref(db); /* the users' */
}

void cfdb_db_user_ref(cfdb_db *db)
{
    atomic_fetch_add(&db->users, 1);
}

void cfdb_db_user_unref(cfdb_db *db)
{
    if (atomic_fetch_sub(&db->users, 1) != 1)
        return;
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    if (cfdb_loop_on_loop_thread(loop))
        db_shutdown(db);
    else
        cfdb_loop_post_task(loop, &db->shutdown_task);
}

/* Any thread may drop a reference; the last one frees on the network thread, which owns
 * the timers and waiter lists. */
void cfdb_db_unref(cfdb_db *db)
{
    if (atomic_fetch_sub(&db->refs, 1) != 1)
        return;
    cfdb_loop *loop = cfdb_client_loop(db->cl);
    if (cfdb_loop_on_loop_thread(loop))
        db_free(db);
    else
        cfdb_loop_post_task(loop, &db->free_task);
}

cfdb_peer *cfdb_db_coordinator(cfdb_db *db)
{
    const cfdb_network_address *addr = db_coordinator_address(db, db->coordinator_index % db->ncoordinators);
    return addr ? cfdb_client_peer(db->cl, addr) : NULL;
}

const char *cfdb_db_cluster_key(const cfdb_db *db)
{
    return db->cluster_key;
}

/* FDBDatabaseOption -> the transaction option it sets by default (fdb.options). */
static int default_for(int db_option)
{
    switch (db_option) {
    case 26: return 600;  /* SNAPSHOT_RYW_ENABLE */
    case 27: return 601;  /* SNAPSHOT_RYW_DISABLE */
    case 500: return 500; /* TRANSACTION_TIMEOUT */
    case 501: return 501; /* TRANSACTION_RETRY_LIMIT */
    case 502: return 502; /* TRANSACTION_MAX_RETRY_DELAY */
    case 503: return 503; /* TRANSACTION_SIZE_LIMIT */
    case 504: return 20;  /* TRANSACTION_CAUSAL_READ_RISKY */
    case 506: return 505; /* TRANSACTION_AUTOMATIC_IDEMPOTENCY */
    case 700: return 1100; /* TRANSACTION_BYPASS_UNREADABLE */
    case 701: return 701; /* TRANSACTION_USED_DURING_COMMIT_PROTECTION_DISABLE */
    case 702: return 712; /* TRANSACTION_REPORT_CONFLICTING_KEYS */
    default: return 0;
    }
}

bool cfdb_db_watch_acquire(cfdb_db *db)
{
    if (db->watches >= atomic_load(&db->max_watches))
        return false;
    db->watches++;
    return true;
}

void cfdb_db_watch_release(cfdb_db *db)
{
    db->watches--;
}

int cfdb_db_set_option(cfdb_db *db, int option, const uint8_t *value, int length)
{
    if (option == 20) { /* MAX_WATCHES: 0 .. 1,000,000 */
        int64_t v;
        if (length != 8 || !value)
            return CFDB_ERR_INVALID_OPTION_VALUE;
        memcpy(&v, value, 8);
        if (v < 0 || v > 1000000)
            return CFDB_ERR_INVALID_OPTION_VALUE;
        atomic_store(&db->max_watches, (int)v);
        return 0;
    }
    if (option == 10) { /* LOCATION_CACHE_SIZE: extractIntOption(value, 0, INT_MAX) */
        int64_t v;
        if (length != 8 || !value)
            return CFDB_ERR_INVALID_OPTION_VALUE;
        memcpy(&v, value, 8);
        if (v < 0 || v > INT32_MAX)
            return CFDB_ERR_INVALID_OPTION_VALUE;
        atomic_store(&db->loc_max, (long long)v);
        return 0;
    }
    int txn_option = default_for(option);
    if (!txn_option)
        return 0; /* machine/datacenter ids...: accepted */
    if ((option >= 500 && option <= 503) && (length != 8 || !value))
        return CFDB_ERR_INVALID_OPTION_VALUE;
    pthread_mutex_lock(&db->opt_mu);
    int i;
    for (i = 0; i < db->ndefaults && db->defaults[i].option != txn_option; i++)
        ;
    /* the two snapshot RYW options replace each other */
    if (i == db->ndefaults && (txn_option == 600 || txn_option == 601))
        for (i = 0; i < db->ndefaults && db->defaults[i].option != (txn_option == 600 ? 601 : 600); i++)
            ;
    if (i < 16) {
        db->defaults[i].option = txn_option;
        db->defaults[i].length = length > 0 && length <= 8 ? length : 0;
        if (db->defaults[i].length)
            memcpy(db->defaults[i].value, value, (size_t)db->defaults[i].length);
        if (i == db->ndefaults)
            db->ndefaults++;
    }
    pthread_mutex_unlock(&db->opt_mu);
    return 0;
}

void cfdb_db_apply_defaults(cfdb_db *db, void *tx, int (*apply)(void *tx, int option, const uint8_t *v, int len))
{
    pthread_mutex_lock(&db->opt_mu);
    for (int i = 0; i < db->ndefaults; i++)
        apply(tx, db->defaults[i].option, db->defaults[i].length ? db->defaults[i].value : NULL,
              db->defaults[i].length);
    pthread_mutex_unlock(&db->opt_mu);
}

int cfdb_db_tenant_mode(const cfdb_db *db, bool *proxies_final)
{
    *proxies_final = db->tenant_mode_final;
    return db->tenant_mode;
}

/* DatabaseContext::validateVersion for a database made by fdb_create_database (switchable):
 * a read below every read version this database has been given cannot be served. */
int cfdb_db_validate_version(const cfdb_db *db, int64_t version)
{
    if (version == 0)
        return CFDB_ERR_CLIENT_INVALID_OPERATION;
    return version < db->min_acceptable_rv ? CFDB_ERR_TRANSACTION_TOO_OLD : 0;
}
