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

void bench_machine_json(json_out *j)
{
    struct utsname u;
    char buf[512];
    jo_obj(j);
    if (uname(&u) == 0) {
        jo_key(j, "sysname"); jo_str(j, u.sysname);
        jo_key(j, "release"); jo_str(j, u.release);
        jo_key(j, "version"); jo_str(j, u.version);
        jo_key(j, "machine"); jo_str(j, u.machine);
        jo_key(j, "hostname"); jo_str(j, u.nodename);
    }
    jo_key(j, "libc");
    jo_str(j, gnu_get_libc_version());
    jo_key(j, "cpu_model");
    if (read_line_with("/proc/cpuinfo", "model name", buf, sizeof buf) == 0)
        jo_str(j, buf);
    else
        jo_null(j);
    jo_key(j, "cpus_online");
    jo_int(j, sysconf(_SC_NPROCESSORS_ONLN));
    jo_key(j, "cpus_configured");
    jo_int(j, sysconf(_SC_NPROCESSORS_CONF));
    jo_key(j, "mem_total");
    if (read_line_with("/proc/meminfo", "MemTotal", buf, sizeof buf) == 0)
        jo_str(j, buf);
    else
        jo_null(j);
    jo_key(j, "cpufreq_governor");
    if (read_line_with("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", NULL, buf,
                       sizeof buf) == 0)
        jo_str(j, buf);
    else
        jo_null(j);
    jo_key(j, "intel_no_turbo");
    if (read_line_with("/sys/devices/system/cpu/intel_pstate/no_turbo", NULL, buf, sizeof buf) == 0)
        jo_str(j, buf);
    else
        jo_null(j);
    jo_key(j, "loadavg_at_start");
    if (read_line_with("/proc/loadavg", NULL, buf, sizeof buf) == 0)
        jo_str(j, buf);
    else
        jo_null(j);
    jo_end_obj(j);
}
