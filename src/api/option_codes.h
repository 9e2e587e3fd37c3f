/* Every option code fdb_c_options.g.h declares, by scope (option_codes.c, generated at build
 * time by option_codes.sh from that header). fdb_c.c refuses any other code with 2007
 * invalid_option at the call, as libfdb_c 7.3 does. */
#ifndef CFDB_API_OPTION_CODES_H
#define CFDB_API_OPTION_CODES_H

#include <stdbool.h>

#include "foundationdb/fdb_c_options.g.h"

extern const int cfdb_net_option_codes[];
extern const int cfdb_net_option_count;
extern const int cfdb_db_option_codes[];
extern const int cfdb_db_option_count;
extern const int cfdb_tr_option_codes[];
extern const int cfdb_tr_option_count;

/* Whether code is one of the n codes. */
static inline bool cfdb_option_code_known(const int *codes, int n, int code)
{
    for (int i = 0; i < n; i++)
        if (codes[i] == code)
            return true;
    return false;
}

#endif
