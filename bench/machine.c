/* SPDX-License-Identifier: Apache-2.0 */
#include "machine.h"

#include <gnu/libc-version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static int read_line_with(const char *path, const char *prefix, char *out, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int rc = -1;
    while (fgets(line, sizeof line, f)) {
        if (!prefix || !strncmp(line, prefix, strlen(prefix))) {
            char *v = prefix ? strchr(line, ':') : line;
            v = v ? (prefix ? v + 1 : v) : line;
            while (*v == ' ' || *v == '\t')
                v++;
            v[strcspn(v, "\n")] = 0;
            snprintf(out, len, "%s", v);
            rc = 0;
            break;
        }
    }
    fclose(f);
    return rc;
}

void bench_machine_json(cfdb_json *j)
{
    struct utsname u;
    char buf[512];
    cfdb_json_begin_object(j);
    if (uname(&u) == 0) {
        cfdb_json_key(j, "sysname"); cfdb_json_string(j, u.sysname);
        cfdb_json_key(j, "release"); cfdb_json_string(j, u.release);
        cfdb_json_key(j, "version"); cfdb_json_string(j, u.version);
        cfdb_json_key(j, "machine"); cfdb_json_string(j, u.machine);
        cfdb_json_key(j, "hostname"); cfdb_json_string(j, u.nodename);
    }
    cfdb_json_key(j, "libc");
    cfdb_json_string(j, gnu_get_libc_version());
    cfdb_json_key(j, "cpu_model");
    if (read_line_with("/proc/cpuinfo", "model name", buf, sizeof buf) == 0)
        cfdb_json_string(j, buf);
    else
        cfdb_json_null(j);
    cfdb_json_key(j, "cpus_online");
    cfdb_json_int(j, sysconf(_SC_NPROCESSORS_ONLN));
    cfdb_json_key(j, "cpus_configured");
    cfdb_json_int(j, sysconf(_SC_NPROCESSORS_CONF));
    cfdb_json_key(j, "mem_total");
    if (read_line_with("/proc/meminfo", "MemTotal", buf, sizeof buf) == 0)
        cfdb_json_string(j, buf);
    else
        cfdb_json_null(j);
    cfdb_json_key(j, "cpufreq_governor");
    if (read_line_with("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", NULL, buf,
                       sizeof buf) == 0)
        cfdb_json_string(j, buf);
    else
        cfdb_json_null(j);
    cfdb_json_key(j, "intel_no_turbo");
    if (read_line_with("/sys/devices/system/cpu/intel_pstate/no_turbo", NULL, buf, sizeof buf) == 0)
        cfdb_json_string(j, buf);
    else
        cfdb_json_null(j);
    cfdb_json_key(j, "loadavg_at_start");
    if (read_line_with("/proc/loadavg", NULL, buf, sizeof buf) == 0)
        cfdb_json_string(j, buf);
    else
        cfdb_json_null(j);
    cfdb_json_end_object(j);
}
