/* SPDX-License-Identifier: Apache-2.0 */
/* A TCP port on 127.0.0.1 that nothing listens on right now (the kernel's choice), for tests
 * that start servers on ports they choose. 0 when no socket could be bound. */
#ifndef CFDB_TESTS_FREE_PORT_H
#define CFDB_TESTS_FREE_PORT_H

#include <stdint.h>

uint16_t test_free_port(void);

#endif
