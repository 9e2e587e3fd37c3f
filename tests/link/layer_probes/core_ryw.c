/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes ryw.h. */
#include "ryw.h"

int cfdb_probe_core_ryw(void);
int cfdb_probe_core_ryw(void)
{
    return 0;
}
