/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes special_keys.h. */
#include "special_keys.h"

int cfdb_probe_txn_special_keys(void);
int cfdb_probe_txn_special_keys(void)
{
    return 0;
}
