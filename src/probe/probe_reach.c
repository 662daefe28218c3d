#include "probe/probe_reach.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "jvm/proc.h"

/* The second number after key ("\nUid:" real, effective, saved, fs) in
 * /proc/PID/status text: the effective id; -1 when absent. */
static long status_effective(const char *status, const char *key)
{
    const char *p = strstr(status, key);
    if (!p)
        return -1;
    char *end;
    errno = 0;
    (void)strtol(p + strlen(key), &end, 10);
    long v = strtol(end, &end, 10);
    return errno || v < 0 ? -1 : v;
}

static int cmp_denied(const void *a, const void *b)
{
    pid_t x = ((const probe_denied *)a)->pid, y = ((const probe_denied *)b)->pid;
    return (x > y) - (x < y);
}

size_t probe_unreachable_java(probe_denied *out, size_t max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid == getpid() || pid == getppid())
            continue;
        char path[64], comm[32] = "", status[4096];
        snprintf(path, sizeof path, "/proc/%ld/comm", pid);
        if (jvm_read_small_file(path, comm, sizeof comm) <= 0)
            continue;
        comm[strcspn(comm, "\n")] = '\0';
        if (!strstr(comm, "java"))
            continue;
        jvm_proc t;
        jp_error er;
        jp_error_init(&er);
        if (jvm_proc_read((pid_t)pid, &t, &er) != JP_ERR_PERMISSION)
            continue;
        snprintf(path, sizeof path, "/proc/%ld/status", pid);
        if (jvm_read_small_file(path, status, sizeof status) <= 0)
            continue;
        /* the effective ids are the ones the JVM checks and acts with */
        long euid = status_effective(status, "\nUid:"), egid = status_effective(status, "\nGid:");
        if (euid < 0 || egid < 0)
            continue;
        probe_denied *x = &out[n++];
        x->pid = (pid_t)pid;
        x->uid = (uid_t)euid;
        x->gid = (gid_t)egid;
        snprintf(x->comm, sizeof x->comm, "%s", comm);
        x->main_class[0] = '\0';
        snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
        ssize_t len = jvm_read_small_file(path, status, sizeof status);
        if (len > 0)
            jvm_cmdline_main(status, (size_t)len, x->main_class, sizeof x->main_class);
    }
    closedir(d);
    qsort(out, n, sizeof *out, cmp_denied);
    return n;
}

void probe_denied_format(const probe_denied *d, size_t n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf + off, len - off, "%spid %d (%s, uid %lu)", i ? ", " : "",
                         (int)d[i].pid, d[i].comm, (unsigned long)d[i].uid);
        if (w < 0 || (size_t)w >= len - off)
            break;
        off += (size_t)w;
    }
}

int probe_become(uid_t uid, gid_t gid, const char *dir)
{
    /* the directory and what is in it (the probe itself) are removed at the
     * end by this process, which is then no longer root */
    if (dir) {
        if (chown(dir, uid, gid) != 0)
            return -errno;
        DIR *d = opendir(dir);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                    (void)fchownat(dirfd(d), e->d_name, uid, gid, 0);
            closedir(d);
        }
    }
    if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
        return -errno;
    return 0;
}
