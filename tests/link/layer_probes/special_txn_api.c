/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes txn_api.h. */
#include "txn_api.h"

int cfdb_probe_special_txn_api(void);
int cfdb_probe_special_txn_api(void)
{
    return 0;
}
