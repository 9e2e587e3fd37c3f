/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench: counterbalanced arm orders for the blocks of a comparison. */
#ifndef CFDB_BENCH_ORDERS_H
#define CFDB_BENCH_ORDERS_H

#include <stddef.h>

#define BENCH_MAX_ARMS 6

/* k! for k <= BENCH_MAX_ARMS. */
size_t bench_factorial(int k);

/* Smallest block count >= requested that is a multiple of k!, so that every
 * order of the arms is used equally often. */
int bench_blocks_for(int arms, int requested);

/* Fill orders[blocks][arms]: block b runs the arms in permutation
 * (b mod k!) of the lexicographic list of all permutations of 0..k-1.
 * blocks must be a multiple of k!. Returns 0 or -1. */
int bench_orders(int arms, int blocks, int *orders);

#endif
