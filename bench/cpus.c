/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include "cpus.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Parses `list` into `set`; -1 on a syntax error or a CPU number past CPU_SETSIZE. */
static int parse(const char *list, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *s = list;
    if (!*s)
        return -1;
    for (;;) {
        char *end;
        errno = 0;
        long a = strtol(s, &end, 10), b;
        if (end == s || errno || a < 0)
            return -1;
        b = a;
        if (*end == '-') {
            s = end + 1;
            b = strtol(s, &end, 10);
            if (end == s || errno || b < a)
                return -1;
        }
        if (b >= CPU_SETSIZE)
            return -1;
        for (long i = a; i <= b; i++)
            CPU_SET((int)i, set);
        if (*end == 0)
            return 0;
        if (*end != ',')
            return -1;
        s = end + 1;
    }
}

int bench_cpus_check(const char *list, char *err, size_t errlen)
{
    cpu_set_t want, have;
    if (parse(list, &want) < 0) {
        snprintf(err, errlen, "bad CPU list '%s' (want e.g. 0 or 0-1 or 0,2)", list);
        return -1;
    }
    if (sched_getaffinity(0, sizeof have, &have) < 0) {
        snprintf(err, errlen, "sched_getaffinity failed");
        return -1;
    }
    for (int i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &want) && !CPU_ISSET(i, &have)) {
            snprintf(err, errlen, "CPU %d in '%s' is not available to this process", i, list);
            return -1;
        }
    return 0;
}

int bench_cpus_pin(const char *list)
{
    if (!list || !*list)
        return 0;
    cpu_set_t set;
    if (parse(list, &set) < 0) {
        errno = EINVAL;
        return -1;
    }
    return sched_setaffinity(0, sizeof set, &set);
}
