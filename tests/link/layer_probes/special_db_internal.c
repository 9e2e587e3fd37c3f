/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes db_internal.h. */
#include "db_internal.h"

int cfdb_probe_special_db_internal(void);
int cfdb_probe_special_db_internal(void)
{
    return 0;
}
