#include "jvm/procstat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"

int64_t jvm_proc_cpu_ns(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (jvm_read_small_file(path, buf, sizeof buf) <= 0)
        return -1;
    const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p)
        return -1;
    /* after ")": state(3) ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime(14) stime(15) */
    int field = 2;
    long long ut = -1, st = -1;
    for (p++; *p && field < 15;) {
        while (*p == ' ')
            p++;
        field++;
        if (field == 14)
            ut = strtoll(p, NULL, 10);
        if (field == 15)
            st = strtoll(p, NULL, 10);
        while (*p && *p != ' ')
            p++;
    }
    long hz = sysconf(_SC_CLK_TCK);
    if (ut < 0 || st < 0 || hz <= 0)
        return -1;
    return (int64_t)(ut + st) * (1000000000LL / hz);
}

/* Finds "<key><N>[KMG]" on a line (len bytes); the bytes, -1 when absent. */
static int64_t bytes_after(const char *line, size_t len, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl < len; i++) {
        if (memcmp(line + i, key, kl) != 0)
            continue;
        char *end;
        errno = 0;
        long long v = strtoll(line + i + kl, &end, 10);
        if (errno || end == line + i + kl || v < 0 || v > (1LL << 40))
            return -1;
        switch (*end) {
        case 'K':
            return (int64_t)v << 10;
        case 'M':
            return (int64_t)v << 20;
        case 'G':
            return (int64_t)v << 30;
        default:
            return v;
        }
    }
    return -1;
}

bool jvm_heap_info_parse(const char *text, int64_t *used, int64_t *committed)
{
    /* one line per heap or generation, indented at most one space; deeper
     * lines are regions and spaces */
    int64_t u_sum = 0, c_sum = 0;
    bool found = false;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        const char *q = p[0] == ' ' ? p + 1 : p;
        bool top =
            *q != ' ' && strncmp(q, "Metaspace", 9) != 0 && strncmp(q, "class space", 11) != 0;
        if (top && n < 512) {
            int64_t u = bytes_after(p, n, "used ");
            int64_t c = bytes_after(p, n, "committed ");
            if (c < 0)
                c = bytes_after(p, n, "total ");
            if (c < 0)
                c = bytes_after(p, n, "capacity ");
            if (c >= 0 && u >= 0) {
                c_sum += c;
                u_sum += u;
                found = true;
            }
        }
        p += n;
        if (*p)
            p++;
    }
    if (found) {
        *used = u_sum;
        *committed = c_sum;
    }
    return found;
}

void jvm_procstat_read(const jvm_proc *t, const jvm_attach_opts *ao, jvm_procstat *out)
{
    out->cpu_ns = jvm_proc_cpu_ns(t->pid);
    out->mono_ns = jp_time_mono_ns();
    out->heap_used = out->heap_committed = -1;
    jvm_reply r;
    jp_error e;
    jp_error_init(&e);
    if (jvm_jcmd(t, ao, "GC.heap_info", &r, &e) != JP_OK)
        return;
    if (!jvm_heap_info_parse(r.text, &out->heap_used, &out->heap_committed))
        out->heap_used = out->heap_committed = -1;
    jvm_reply_cleanup(&r);
}

double jvm_procstat_cpu_pct(const jvm_procstat *prev, const jvm_procstat *cur)
{
    if (!prev || prev->cpu_ns < 0 || cur->cpu_ns < prev->cpu_ns || cur->mono_ns <= prev->mono_ns)
        return -1;
    return 100.0 * (double)(cur->cpu_ns - prev->cpu_ns) / (double)(cur->mono_ns - prev->mono_ns);
}

void jvm_procstat_to_snapshot(const jvm_procstat *prev, const jvm_procstat *cur, jp_snapshot *s)
{
    s->proc_cpu_ns = cur->cpu_ns;
    s->proc_cpu_pct = jvm_procstat_cpu_pct(prev, cur);
    s->heap_used = cur->heap_used;
    s->heap_committed = cur->heap_committed;
}
