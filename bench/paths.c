/* SPDX-License-Identifier: Apache-2.0 */
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bench_self_exe(char *out, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", out, len - 1);
    if (n <= 0)
        return -1;
    out[n] = 0;
    return 0;
}

int bench_self_dir(char *out, size_t len)
{
    if (bench_self_exe(out, len) < 0)
        return -1;
    char *slash = strrchr(out, '/');
    if (!slash)
        return -1;
    *slash = 0;
    return 0;
}

int bench_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int bench_is_executable(const char *path)
{
    return bench_file_exists(path) && access(path, X_OK) == 0;
}

static int first_existing(const char *const *rel, int exec, char *out, size_t len)
{
    char dir[PATH_MAX];
    if (bench_self_dir(dir, sizeof dir) < 0)
        return -1;
    for (int i = 0; rel[i]; i++) {
        char cand[PATH_MAX + 256];
        snprintf(cand, sizeof cand, "%s/%s", dir, rel[i]);
        if (exec ? bench_is_executable(cand) : bench_file_exists(cand)) {
            char *r = realpath(cand, NULL);
            snprintf(out, len, "%s", r ? r : cand);
            free(r);
            return 0;
        }
    }
    return -1;
}

int bench_find_cfdb_lib(char *out, size_t len)
{
    static const char *const rel[] = {
        "../src/api/libcfdb.so", "../src/api/libfdb_c.so", "libcfdb.so",
        "../lib/libcfdb.so",     "../lib64/libcfdb.so",    "../lib/x86_64-linux-gnu/libcfdb.so",
        NULL};
    return first_existing(rel, 0, out, len);
}

int bench_find_server(char *out, size_t len)
{
    static const char *const rel[] = {"../src/server/cfdb-server", "cfdb-server",
                                      "../bin/cfdb-server", "../sbin/cfdb-server", NULL};
    return first_existing(rel, 1, out, len);
}

int bench_find_malloc_lib(char *out, size_t len)
{
    static const char *const rel[] = {"libcfdb-bench-malloc.so", "../lib/cfdb/libcfdb-bench-malloc.so",
                                      "../lib/libcfdb-bench-malloc.so",
                                      "../lib/x86_64-linux-gnu/libcfdb-bench-malloc.so", NULL};
    return first_existing(rel, 0, out, len);
}

int bench_find_system_fdb_c(char out[][4096], int max)
{
    static const char *const cand[] = {"/usr/lib/libfdb_c.so", "/usr/lib64/libfdb_c.so",
                                       "/usr/local/lib/libfdb_c.so",
                                       "/usr/lib/x86_64-linux-gnu/libfdb_c.so",
                                       "/usr/lib/aarch64-linux-gnu/libfdb_c.so", NULL};
    int n = 0;
    for (int i = 0; cand[i] && n < max; i++) {
        if (!bench_file_exists(cand[i]))
            continue;
        char *r = realpath(cand[i], NULL);
        if (!r)
            continue;
        int dup = 0;
        for (int j = 0; j < n; j++)
            if (!strcmp(out[j], r))
                dup = 1;
        if (!dup)
            snprintf(out[n++], 4096, "%s", r);
        free(r);
    }
    return n;
}
