/* A source compiled with the include path of the layer its name starts with
 * (tests/link/CMakeLists.txt): it includes event_loop.h. */
#include "event_loop.h"

int cfdb_probe_core_event_loop(void);
int cfdb_probe_core_event_loop(void)
{
    return 0;
}
