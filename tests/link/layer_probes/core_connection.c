/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes connection.h. */
#include "connection.h"

int cfdb_probe_core_connection(void);
int cfdb_probe_core_connection(void)
{
    return 0;
}
