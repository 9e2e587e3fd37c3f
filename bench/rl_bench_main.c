/* SPDX-License-Identifier: Apache-2.0 */
/* cfdb-bench-records: the Record Layer phase of cfdb-bench (rl_bench.h); also reached as
 * `cfdb-bench records`. Workers: `_run`, `_populate`, `_placement`. */
#include <string.h>

#include "rl_bench.h"

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "_run") || !strcmp(argv[1], "_populate") || !strcmp(argv[1], "_placement")))
        return bench_rl_worker_main(argc - 1, argv + 1);
    return bench_rl_main(argc, argv);
}
