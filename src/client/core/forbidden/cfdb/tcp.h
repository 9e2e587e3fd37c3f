/* The sans-I/O core (src/client/core) may not use the event loop, connections or sockets:
 * this directory comes first on the core's include path, so that including cfdb/tcp.h
 * there stops the build. The layers above (db/, txn/, special/) see the real header. */
#error "src/client/core is sans-I/O: it may not include cfdb/tcp.h"
