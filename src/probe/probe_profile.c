#include "probe/probe_profile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "jvm/attach.h"
#include "jvm/jfc.h"

/* Kinds the JDK Flight Recorder records; wall and async-profiler's kinds
 * need async-profiler, which the probe does not carry. */
#define JFR_KINDS                                                                                  \
    ((1u << JP_KIND_CPU) | (1u << JP_KIND_ALLOC) | (1u << JP_KIND_LOCK) | (1u << JP_KIND_PARK) |   \
     (1u << JP_KIND_CPUTIME))

static jp_err write_settings(const char *path, const jvm_jfc_opts *o, jp_error *err)
{
    jp_strbuf sb;
    jp_strbuf_init(&sb, 64 * 1024);
    jp_err rc = jvm_jfc_build(o, &sb, err);
    if (rc == JP_OK) {
        /* the JVM reads it: same user as us in a pod (kubectl exec runs as
         * the container's user) */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0)
            rc = jp_error_set(err, JP_ERR_IO, "%s: %m", path);
        else {
            if (write(fd, sb.data, sb.len) != (ssize_t)sb.len)
                rc = jp_error_set(err, JP_ERR_IO, "%s: short write", path);
            close(fd);
        }
    }
    jp_strbuf_cleanup(&sb);
    return rc;
}

jp_err probe_profile_start(probe_profile *p, const jvm_proc *t, const char *dir, int jdk_major,
                           uint32_t kinds, int64_t interval_ns, int64_t window_ns, jp_error *err)
{
    if (p->running)
        return jp_error_set(err, JP_ERR_USAGE, "a profile is already running (profile_stop first)");
    if (kinds & ~JFR_KINDS)
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "the probe records with the JDK Flight Recorder, which has no "
                            "wall-clock or native kinds (use cpu, alloc, lock, park or cputime)");
    jvm_jfc_opts o;
    jvm_jfc_opts_init(&o);
    o.kinds = kinds;
    o.jdk_major = jdk_major;
    o.cpu_period_ns = interval_ns > 0 ? interval_ns : 10 * JP_NS_PER_MS;
    o.lock_threshold_ns = 1 * JP_NS_PER_MS;
    if ((size_t)snprintf(p->settings, sizeof p->settings, "%s/jprof.jfc", dir) >=
        sizeof p->settings)
        return jp_error_set(err, JP_ERR_USAGE, "private directory path too long");
    unlink(p->settings);
    jp_err rc = write_settings(p->settings, &o, err);
    if (rc != JP_OK)
        return rc;
    rc = jvm_jfr_start(t, NULL, p->settings, window_ns, &p->rec, err);
    if (rc != JP_OK) {
        unlink(p->settings);
        return rc;
    }
    p->running = true;
    p->kinds = kinds;
    p->interval_ns = o.cpu_period_ns;
    p->window_ns = window_ns;
    p->started_ns = jp_time_now_ns();
    return JP_OK;
}

jp_err probe_profile_read(probe_profile *p, jp_profile **out, jfr_report *rep, jp_error *err)
{
    *out = NULL;
    jfr_report_init(rep);
    if (!p->running)
        return jp_error_set(err, JP_ERR_USAGE, "no profile is running (profile_start first)");
    uint8_t *data = NULL;
    size_t len = 0;
    jp_err rc = jvm_jfr_dump(&p->rec, &data, &len, err);
    if (rc != JP_OK)
        return rc;
    jfr_options opt;
    jfr_options_init(&opt);
    opt.kinds = p->kinds;
    opt.jobs = 1; /* the probe is a guest in the pod: one core at most */
    jp_profile *prof = jp_profile_new();
    rc = jfr_read_buffer(data, len, "recording", &opt, prof, rep);
    free(data);
    /* the last chunk may be still in writing: what was read is the answer */
    if (rc != JP_OK && !rep->partial) {
        jp_profile_free(prof);
        return jp_error_set(err, rc, "%s", rep->error.msg);
    }
    *out = prof;
    return JP_OK;
}

jp_err probe_profile_stop(probe_profile *p, jp_error *err)
{
    if (!p->running)
        return JP_OK;
    p->running = false;
    jp_err rc = jvm_jfr_stop(&p->rec, err);
    unlink(p->settings);
    return rc;
}

int probe_profile_stop_orphans(const jvm_proc *t, int pid)
{
    char *text = NULL;
    if (jvm_jfr_check(t, NULL, &text, NULL) != JP_OK)
        return 0;
    char prefix[32];
    snprintf(prefix, sizeof prefix, "name=jprof-%d-", pid);
    int stopped = 0;
    for (const char *q = strstr(text, prefix); q; q = strstr(q + 1, prefix)) {
        const char *name = q + 5;
        size_t n = strcspn(name, " \n\t");
        char line[128];
        if (n > 64)
            continue;
        snprintf(line, sizeof line, "JFR.stop name=%.*s", (int)n, name);
        jvm_reply r;
        if (jvm_jcmd(t, NULL, line, &r, NULL) == JP_OK) {
            jvm_reply_cleanup(&r);
            stopped++;
        }
    }
    free(text);
    return stopped;
}
