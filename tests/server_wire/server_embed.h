/* An in-process cfdb-server on the test's own event loop, reached through the wire test
 * client: create the server (port 0), connect, open the database (the client learns the
 * proxies), and tear it all down again. One helper for every test that embeds the server. */
#ifndef CFDB_TESTS_SERVER_EMBED_H
#define CFDB_TESTS_SERVER_EMBED_H

#include "server.h"
#include "wire_client.h"

typedef struct se_fx {
    cfdb_loop *loop;
    cfdb_server *srv;
    wc w;
    cfdb_arena a;             /* for the test's replies; freed by se_stop */
    char key[128];            /* "description:id" of the connection string */
    cfdb_client_db_info info; /* the ClientDBInfo the open gave */
} se_fx;

/* Starts a server with cfg (its port is forced to 0), connects f->w and opens the database.
 * Returns 0, or -1 with everything already released when any step fails. */
int se_start(se_fx *f, const cfdb_server_config *cfg);
/* Closes the connection, destroys the server and the loop, frees the arena. */
void se_stop(se_fx *f);

#endif
