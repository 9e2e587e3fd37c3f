/* fdb_transaction_on_error as an operation kind: classification, backoff, retry limit and the
 * cancelled state are retry_policy.c's (Transaction::onError and
 * ReadYourWritesTransaction::onError); here the backoff is waited for on the network thread,
 * then the transaction is reset for the next attempt (its options and backoff kept); the
 * attempt's watches that wait for its commit and its versionstamp future end with
 * transaction_cancelled, as libfdb_c's reset ends them.
 * The kind has its own lifetime: the transaction's timeout does not end it (a timeout that
 * passed answers it with transaction_timed_out instead), nor does a reset's sweep. */
#include "error_codes.h"
#include "txn_commit.h"
#include "txn_internal.h"
#include "txn_watch.h"

typedef struct on_error_op {
    op base;
    int error; /* the error the application asks about */
} on_error_op;

static void on_error_fire(cfdb_loop *loop, cfdb_timer *t, void *arg)
{
    (void)loop;
    (void)t;
    op *o = arg;
    cfdb_txn *tx = o->tx;
    pthread_mutex_lock(&tx->mu);
    if (txn_error_locked(tx) == CFDB_ERR_TRANSACTION_TIMED_OUT) {
        pthread_mutex_unlock(&tx->mu); /* timed out during the backoff: it stays so */
        op_finish(o, CFDB_ERR_TRANSACTION_TIMED_OUT);
        return;
    }
    txn_reset_locked(tx, true);
    pthread_mutex_unlock(&tx->mu);
    txn_complete_ops(tx, CFDB_ERR_TRANSACTION_CANCELLED, false);
    /* NativeAPI's reset (Transaction::onError) cancels the watches waiting for the commit and
     * RYW's reset promise fails the versionstamp: both end with transaction_cancelled */
    txn_cancel_watches(tx);
    txn_cancel_versionstamp(tx);
    op_finish(o, 0);
}

static void on_error_start(op *o)
{
    cfdb_txn *tx = o->tx;
    double delay = 0, r01 = (double)(cfdb_client_random(tx->cl) >> 11) / 9007199254740992.0;
    pthread_mutex_lock(&tx->mu);
    if (txn_error_locked(tx) == CFDB_ERR_TRANSACTION_TIMED_OUT) {
        pthread_mutex_unlock(&tx->mu); /* the reset promise is set: on_error answers with it */
        op_finish(o, CFDB_ERR_TRANSACTION_TIMED_OUT);
        return;
    }
    int rc = cfdb_retry_on_error(&tx->retry, TXN_OP_AS(on_error_op, o)->error, r01, 0.0, &delay);
    if (rc && tx->retry.cancelled_error) {
        /* a failed on_error leaves the transaction cancelled until reset (RYW onError) */
        tx->deferred_error = tx->retry.cancelled_error;
        tx->cancelled = true;
    }
    pthread_mutex_unlock(&tx->mu);
    if (rc) {
        op_finish(o, rc);
        return;
    }
    op_retry_after(o, (uint64_t)(delay * 1e9), on_error_fire);
}

static const txn_op_kind on_error_kind = {
    .name = "on_error",
    .flags = TXN_OP_OWN_LIFETIME,
    .start = on_error_start,
};

cfdb_future *cfdb_txn_on_error(cfdb_txn *tx, int error)
{
    op *o = op_new(tx, &on_error_kind, CFDB_FUTURE_VOID, sizeof(on_error_op));
    if (!o)
        return txn_future_no_memory(CFDB_FUTURE_VOID);
    TXN_OP_AS(on_error_op, o)->error = error;
    return op_launch(o);
}
