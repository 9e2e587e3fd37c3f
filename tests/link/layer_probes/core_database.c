/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes database.h. */
#include "database.h"

int cfdb_probe_core_database(void);
int cfdb_probe_core_database(void)
{
    return 0;
}
