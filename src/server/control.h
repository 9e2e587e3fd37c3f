/* Control port (control.c): the test-only command socket (--control-port) that injects
 * faults and changes the simulated cluster (listeners, generations, shards) at run time. */
#ifndef CFDB_SERVER_CONTROL_H
#define CFDB_SERVER_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "srv_core.h"

/* Listens on 127.0.0.1:port. 0, or the FoundationDB code of the listen or register failure. */
int control_start(srv *s, uint16_t port);
void control_stop(srv *s);
/* Runs one command line; writes a one-line answer to out. */
void control_execute(srv *s, const char *line, char *out, size_t cap);

#endif
