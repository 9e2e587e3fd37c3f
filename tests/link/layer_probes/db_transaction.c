/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes transaction.h. */
#include "transaction.h"

int cfdb_probe_db_transaction(void);
int cfdb_probe_db_transaction(void)
{
    return 0;
}
