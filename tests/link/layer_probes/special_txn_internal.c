/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes txn_internal.h. */
#include "txn_internal.h"

int cfdb_probe_special_txn_internal(void);
int cfdb_probe_special_txn_internal(void)
{
    return 0;
}
