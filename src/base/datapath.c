/* datapath.c - data files next to the running program (see datapath.h). */
#include "base/datapath.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/jprof"
#endif

/* PREFIX of /PREFIX/bin/program (or sbin): the exe's directory's parent. */
static bool exe_prefix(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0 || (size_t)n >= len - 1)
        return false;
    buf[n] = '\0';
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(buf, '/');
        if (!slash)
            return false;
        *slash = '\0';
    }
    return true;
}

bool jp_data_find(const char *name, const char *build_path, char *buf, size_t len)
{
    char prefix[4096];
    if (exe_prefix(prefix, sizeof prefix)) {
        int n = snprintf(buf, len, "%s/share/jprof/%s", prefix, name);
        if (n > 0 && (size_t)n < len && access(buf, R_OK) == 0)
            return true;
    }
    if (build_path && access(build_path, R_OK) == 0) {
        snprintf(buf, len, "%s", build_path);
        return true;
    }
    snprintf(buf, len, "%s/%s", PKGDATADIR, name);
    return access(buf, R_OK) == 0;
}
