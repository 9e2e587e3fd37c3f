/* fdb_transaction_get_addresses_for_key through the system keys, as libfdb_c reads them
 * (txn_addresses.c). */
#ifndef CFDB_CLIENT_TXN_ADDRESSES_H
#define CFDB_CLIENT_TXN_ADDRESSES_H

struct op;
/* Starts an OP_ADDRESSES operation (o->key) on the network thread. */
void cfdb_addresses_op_start(struct op *o);

#endif
