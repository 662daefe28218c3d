#include "jvm/proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/username.h"

#define CMDLINE_CAP (64 * 1024)
#define ENVIRON_CAP (256 * 1024)

ssize_t jvm_read_small_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t got = 0;
    while (got + 1 < cap) {
        ssize_t n = read(fd, buf + got, cap - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    close(fd);
    return (ssize_t)got;
}

/* Options of the java launcher that consume the next argument. */
static bool option_takes_value(const char *a)
{
    static const char *const with_value[] = {"-cp",
                                             "-classpath",
                                             "--class-path",
                                             "-p",
                                             "--module-path",
                                             "--upgrade-module-path",
                                             "--add-modules",
                                             "--limit-modules",
                                             "--add-reads",
                                             "--add-exports",
                                             "--add-opens",
                                             "--patch-module",
                                             "--enable-native-access",
                                             "--describe-module",
                                             "-d",
                                             NULL};
    for (size_t i = 0; with_value[i]; i++)
        if (strcmp(a, with_value[i]) == 0)
            return true;
    return false;
}

void jvm_cmdline_main(const char *args, size_t len, char *out, size_t outlen)
{
    out[0] = '\0';
    size_t off = 0;
    bool first = true;
    bool want_jar = false, want_module = false, skip = false;
    while (off < len) {
        const char *a = args + off;
        size_t alen = strnlen(a, len - off);
        off += alen + 1;
        if (first) { /* argv[0], the launcher */
            first = false;
            continue;
        }
        if (skip) {
            skip = false;
            continue;
        }
        if (want_jar || want_module) {
            snprintf(out, outlen, "%.*s", (int)alen, a);
            return;
        }
        if (strcmp(a, "-jar") == 0) {
            want_jar = true;
        } else if (strcmp(a, "-m") == 0 || strcmp(a, "--module") == 0) {
            want_module = true;
        } else if (strncmp(a, "--module=", 9) == 0) {
            snprintf(out, outlen, "%s", a + 9);
            return;
        } else if (option_takes_value(a)) {
            skip = true;
        } else if (a[0] != '-' && alen > 0) {
            snprintf(out, outlen, "%.*s", (int)alen, a);
            return;
        }
    }
}

/* Scans the maps for libjvm.so and libasyncProfiler; -1 with errno on failure. */
static int scan_maps(pid_t pid, jvm_proc *out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char line[4096 + 256];
    errno = 0;
    while (fgets(line, sizeof line, f)) {
        char *slash = strchr(line, '/');
        if (!slash)
            continue;
        if (!out->hotspot && strstr(slash, "/libjvm.so")) {
            out->hotspot = true;
            size_t n = strcspn(slash, "\n");
            snprintf(out->jvm_lib, sizeof out->jvm_lib, "%.*s", (int)n, slash);
        }
        if (strstr(slash, "libasyncProfiler"))
            out->async_profiler = true;
        if (strstr(slash, "/libj9vm"))
            out->openj9 = true;
    }
    if (out->openj9)
        out->hotspot = false;
    /* reading maps of a process we may not ptrace yields EACCES on read */
    int bad = ferror(f);
    int e = errno;
    fclose(f);
    if (bad) {
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}

bool jvm_proc_has_async_profiler(pid_t pid)
{
    jvm_proc tmp;
    memset(&tmp, 0, sizeof tmp);
    if (scan_maps(pid, &tmp) != 0)
        return false;
    return tmp.async_profiler;
}

/* Later options win, as in HotSpot's argument processing. */
static void scan_flags(const char *s, size_t len, jvm_proc *out)
{
    static const char on_attach[] = "-XX:+DisableAttachMechanism";
    static const char off_attach[] = "-XX:-DisableAttachMechanism";
    static const char off_agents[] = "-XX:-EnableDynamicAgentLoading";
    static const char on_agents[] = "-XX:+EnableDynamicAgentLoading";
    for (size_t i = 0; i < len; i++) {
        const char *p = s + i;
        size_t rest = len - i;
        if (rest >= sizeof on_attach - 1 && memcmp(p, on_attach, sizeof on_attach - 1) == 0)
            out->attach_disabled = true;
        else if (rest >= sizeof off_attach - 1 && memcmp(p, off_attach, sizeof off_attach - 1) == 0)
            out->attach_disabled = false;
        else if (rest >= sizeof off_agents - 1 && memcmp(p, off_agents, sizeof off_agents - 1) == 0)
            out->agents_disabled = true;
        else if (rest >= sizeof on_agents - 1 && memcmp(p, on_agents, sizeof on_agents - 1) == 0)
            out->agents_disabled = false;
    }
}

/* The JVM also takes options from these environment variables. */
static void scan_environ(pid_t pid, jvm_proc *out)
{
    static const char *const vars[] = {
        "JAVA_TOOL_OPTIONS=", "JDK_JAVA_OPTIONS=", "_JAVA_OPTIONS=", NULL};
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    char *buf = jp_xmalloc(ENVIRON_CAP);
    ssize_t n = jvm_read_small_file(path, buf, ENVIRON_CAP);
    for (ssize_t off = 0; n > 0 && off < n;) {
        const char *e = buf + off;
        size_t elen = strnlen(e, (size_t)(n - off));
        for (size_t i = 0; vars[i]; i++)
            if (strncmp(e, vars[i], strlen(vars[i])) == 0)
                scan_flags(e, elen, out);
        off += (ssize_t)elen + 1;
    }
    free(buf);
}

/* The Nth (from 1) decimal number of S, as in /proc's "Uid:\tR\tE\tS\tF";
 * false when it is missing or out of range. */
static bool nth_number(const char *s, int nth, unsigned long long *out)
{
    for (int i = 1; i <= nth; i++) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s < '0' || *s > '9')
            return false;
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno == ERANGE)
            return false;
        if (i == nth) {
            *out = v;
            return true;
        }
        s = end;
    }
    return false;
}

static jp_err read_status(pid_t pid, jvm_proc *out, jp_error *err)
{
    char path[64], buf[8192];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (jvm_read_small_file(path, buf, sizeof buf) < 0) {
        if (errno == ENOENT || errno == ESRCH)
            return jp_error_set(err, JP_ERR_NOT_FOUND, "no process with pid %d", (int)pid);
        return jp_error_set(err, JP_ERR_IO, "%s: %s", path, strerror(errno));
    }
    out->nspid = pid;
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        unsigned long long e;
        if (strncmp(line, "Uid:", 4) == 0) {
            if (nth_number(line + 4, 2, &e)) /* real, effective, saved, fs */
                out->euid = (uid_t)e;
        } else if (strncmp(line, "Gid:", 4) == 0) {
            if (nth_number(line + 4, 2, &e))
                out->egid = (gid_t)e;
        } else if (strncmp(line, "NStgid:", 7) == 0) {
            /* the last value is the pid in the innermost namespace */
            char *last = strrchr(line, '\t');
            char *end = NULL;
            long v = strtol(last ? last + 1 : line + 7, &end, 10);
            if (end && end != (last ? last + 1 : line + 7) && v > 0 && v <= INT_MAX)
                out->nspid = (pid_t)v;
        }
    }
    return JP_OK;
}

/* Start time from /proc/PID/stat field 22 (ticks after boot) + btime. */
static int64_t read_start_ns(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (jvm_read_small_file(path, buf, sizeof buf) <= 0)
        return 0;
    char *p = strrchr(buf, ')'); /* comm may contain spaces and ')' */
    if (!p)
        return 0;
    p++;
    unsigned long long ticks = 0;
    /* after ") " comes field 3 (state); starttime is field 22 */
    for (int field = 3; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    if (!p || !nth_number(p + 1, 1, &ticks))
        return 0;
    static int64_t btime_s = -1;
    if (btime_s < 0) {
        char sbuf[16384];
        btime_s = 0;
        if (jvm_read_small_file("/proc/stat", sbuf, sizeof sbuf) > 0) {
            char *b = strstr(sbuf, "\nbtime ");
            unsigned long long v = 0;
            if (b && nth_number(b + 7, 1, &v) && v <= INT64_MAX / JP_NS_PER_SEC)
                btime_s = (int64_t)v;
        }
    }
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        hz = 100;
    return btime_s * JP_NS_PER_SEC + (int64_t)(ticks * (JP_NS_PER_SEC / hz));
}

static void fill_user(jvm_proc *out)
{
    jvm_user_name(out->euid, out->user, sizeof out->user);
}

jp_err jvm_proc_read(pid_t pid, jvm_proc *out, jp_error *err)
{
    memset(out, 0, sizeof *out);
    if (pid <= 0)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no process with pid %d", (int)pid);
    out->pid = pid;
    jp_err rc = read_status(pid, out, err);
    if (rc != JP_OK)
        return rc;
    fill_user(out);
    out->start_ns = read_start_ns(pid);
    out->uptime_ns = out->start_ns ? jp_time_now_ns() - out->start_ns : 0;
    if (scan_maps(pid, out) != 0) {
        if (errno == ENOENT || errno == ESRCH)
            return jp_error_set(err, JP_ERR_NOT_FOUND, "no process with pid %d", (int)pid);
        if (errno == EACCES || errno == EPERM)
            return jp_error_set(err, JP_ERR_PERMISSION,
                                "pid %d belongs to user %s: run jprof as that user or as root",
                                (int)pid, out->user);
        return jp_error_set(err, JP_ERR_IO, "/proc/%d/maps: %s", (int)pid, strerror(errno));
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    char *cmd = jp_xmalloc(CMDLINE_CAP);
    ssize_t n = jvm_read_small_file(path, cmd, CMDLINE_CAP);
    if (n > 0) {
        jvm_cmdline_main(cmd, (size_t)n, out->main_class, sizeof out->main_class);
        scan_flags(cmd, (size_t)n, out);
    }
    free(cmd);
    if (out->hotspot)
        scan_environ(pid, out);
    return JP_OK;
}

jp_err jvm_proc_open(pid_t pid, jvm_proc *out, jp_error *err)
{
    jp_err rc = jvm_proc_read(pid, out, err);
    if (rc != JP_OK)
        return rc;
    if (out->openj9)
        return jp_error_set(err, JP_ERR_NOT_JVM,
                            "pid %d is an Eclipse OpenJ9 JVM: jprof speaks HotSpot's attach "
                            "protocol only (SIGQUIT would make OpenJ9 write a javacore); left "
                            "untouched",
                            (int)pid);
    if (!out->hotspot)
        return jp_error_set(err, JP_ERR_NOT_JVM,
                            "pid %d is not a HotSpot JVM (no libjvm.so mapped); left untouched",
                            (int)pid);
    return JP_OK;
}

bool jvm_proc_alive(const jvm_proc *p)
{
    if (kill(p->pid, 0) != 0 && errno == ESRCH)
        return false;
    int64_t s = read_start_ns(p->pid);
    return s != 0 && (p->start_ns == 0 || s == p->start_ns);
}

static int cmp_pid(const void *a, const void *b)
{
    const jvm_proc *x = a, *y = b;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

jp_err jvm_proc_list_local(jvm_proc_list *out, jp_error *err)
{
    memset(out, 0, sizeof *out);
    DIR *d = opendir("/proc");
    if (!d)
        return jp_error_set(err, JP_ERR_IO, "/proc: %s", strerror(errno));
    struct dirent *de;
    pid_t self = getpid();
    while ((de = readdir(d)) != NULL) {
        if (!isdigit((unsigned char)de->d_name[0]))
            continue;
        char *end = NULL;
        long v = strtol(de->d_name, &end, 10);
        if (*end || v <= 0 || v > INT_MAX || (pid_t)v == self)
            continue;
        jvm_proc p;
        if (jvm_proc_read((pid_t)v, &p, NULL) != JP_OK || !p.hotspot)
            continue;
        out->items = jp_xgrow(out->items, &out->alloc, out->count + 1, sizeof *out->items);
        out->items[out->count++] = p;
    }
    closedir(d);
    if (out->count)
        qsort(out->items, out->count, sizeof *out->items, cmp_pid);
    return JP_OK;
}

void jvm_proc_list_cleanup(jvm_proc_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}
