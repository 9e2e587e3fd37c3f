/* The database configuration (db_config.c): \xff/conf/ as a one-process fdbserver has it
 * after `configure new single memory` (or `... ssd-2` when durable), the tenant mode and
 * the database lock, kept in step with what commits write there. */
#ifndef CFDB_SERVER_DB_CONFIG_H
#define CFDB_SERVER_DB_CONFIG_H

#include "srv_core.h"

/* Writes the \xff/conf/ keys that are missing (a new database; a restarted durable one
 * keeps what it has, including what `configure` changed), then the --tenant-mode flag's
 * value when given. */
int srv_config_init(srv *s);
/* Whether any of these mutations touch \xff/conf/ or \xff/dbLocked. */
bool srv_config_touched(const cfdb_mutation *m, size_t n);
/* Re-reads tenant mode and lock state from the store at the newest version; a changed
 * tenant mode publishes a new ClientDBInfo (as the recovery a configuration change
 * causes on fdbserver does). */
void srv_config_refresh(srv *s);

#endif
