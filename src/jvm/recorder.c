#include "jvm/recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "jvm/cleanup.h"
#include "jvm/targetfs.h"

static unsigned rec_counter;

jp_err jvm_recorder_check_conflict(const jvm_proc *t, jp_error *err)
{
    if (t->async_profiler || jvm_proc_has_async_profiler(t->pid))
        return jp_error_set(err, JP_ERR_CONFLICT,
                            "pid %d already has an async-profiler loaded by someone else; jprof "
                            "leaves it alone (stop that profiler first)",
                            (int)t->pid);
    return JP_OK;
}

jp_err jvm_jfr_cmd(const jvm_proc *t, const jvm_attach_opts *ao, const char *line,
                   const char *ok_marker, jp_error *err)
{
    jvm_reply r;
    jp_err rc = jvm_jcmd(t, ao, line, &r, err);
    if (rc != JP_OK)
        return rc;
    const char *text = r.text ? r.text : "";
    if (ok_marker && !strstr(text, ok_marker)) {
        size_t n = strcspn(text, "\n");
        /* the JVM could not write its file (a full /tmp in the target) */
        bool full = strstr(text, "No space left on device") || strstr(text, "Disk quota exceeded");
        rc = jp_error_set(err, full ? JP_ERR_NOSPACE : JP_ERR_PROTOCOL, "pid %d: %s: %.*s",
                          (int)t->pid, line, (int)(n > 300 ? 300 : n), text);
    }
    jvm_reply_cleanup(&r);
    return rc;
}

static void stop_on_cleanup(void *arg)
{
    jvm_recording *rec = arg;
    rec->cleanup = 0; /* the registry already dropped the slot */
    jvm_jfr_stop(rec, NULL);
}

jp_err jvm_jfr_start(const jvm_proc *t, const jvm_attach_opts *ao, const char *settings,
                     int64_t window_ns, jvm_recording *rec, jp_error *err)
{
    memset(rec, 0, sizeof *rec);
    rec->target = *t;
    if (ao)
        rec->attach = *ao;
    else
        jvm_attach_opts_init(&rec->attach);
    /* JFR runs beside an async-profiler: only a second async-profiler conflicts */
    jp_err rc;
    snprintf(rec->name, sizeof rec->name, "jprof-%d-%u", (int)getpid(), ++rec_counter);
    int64_t window_s = window_ns > 0 ? (window_ns + JP_NS_PER_SEC - 1) / JP_NS_PER_SEC : 30;
    char line[JVM_ATTACH_ARG_MAX];
    int n = snprintf(line, sizeof line, "JFR.start name=%s settings=%s maxage=%llds disk=true",
                     rec->name, settings ? settings : "profile", (long long)window_s);
    if (n < 0 || (size_t)n >= sizeof line)
        return jp_error_set(err, JP_ERR_USAGE, "JFR settings path too long");
    /* register first: if we are interrupted right after the start, it is stopped */
    rec->cleanup = jvm_cleanup_register(stop_on_cleanup, rec);
    if (!rec->cleanup)
        return jp_error_set(err, JP_ERR_LIMIT, "too many pending cleanup actions");
    rec->running = true;
    rc = jvm_jfr_cmd(t, &rec->attach, line, "Started recording", err);
    if (rc != JP_OK) {
        jvm_cleanup_unregister(rec->cleanup);
        rec->cleanup = 0;
        rec->running = false;
        jvm_jfr_stop(rec, NULL); /* in case it started but answered oddly */
        rec->running = false;
    }
    return rc;
}

jp_err jvm_jfr_dump(jvm_recording *rec, uint8_t **data, size_t *len, jp_error *err)
{
    *data = NULL;
    *len = 0;
    if (!rec->running)
        return jp_error_set(err, JP_ERR_USAGE, "recording %s is not running", rec->name);
    jvm_tfile f;
    jp_err rc = jvm_tfile_name(&rec->target, ".jfr", &f, err);
    if (rc != JP_OK)
        return rc;
    char line[JVM_ATTACH_ARG_MAX];
    snprintf(line, sizeof line, "JFR.dump name=%s filename=%s", rec->name, f.inner);
    rc = jvm_jfr_cmd(&rec->target, &rec->attach, line, "Dumped recording", err);
    if (rc == JP_OK) {
        char *buf = NULL;
        rc = jvm_tfile_read(&f, JVM_JFR_MAX_DUMP, &buf, len, err);
        *data = (uint8_t *)buf;
    }
    jvm_tfile_remove(&f);
    return rc;
}

jp_err jvm_jfr_stop(jvm_recording *rec, jp_error *err)
{
    if (rec->cleanup) {
        jvm_cleanup_unregister(rec->cleanup);
        rec->cleanup = 0;
    }
    if (!rec->name[0])
        return JP_OK;
    char line[128];
    snprintf(line, sizeof line, "JFR.stop name=%s", rec->name);
    jp_err rc = jvm_jfr_cmd(&rec->target, &rec->attach, line, "Stopped recording", err);
    /* a JVM that has gone away has no recording left either */
    if (rc == JP_ERR_EXITED || rc == JP_ERR_NOT_FOUND)
        rc = JP_OK;
    rec->running = false;
    return rc;
}

jp_err jvm_jfr_check(const jvm_proc *t, const jvm_attach_opts *ao, char **text, jp_error *err)
{
    jvm_reply r;
    *text = NULL;
    jp_err rc = jvm_jcmd(t, ao, "JFR.check", &r, err);
    if (rc != JP_OK)
        return rc;
    *text = r.text;
    return JP_OK;
}

bool jvm_jfr_check_lists(const char *check_text, const char *name)
{
    /* lines look like: Recording 1: name=jprof-12-1 maxage=30s (running) */
    size_t n = strlen(name);
    for (const char *p = strstr(check_text, "name="); p; p = strstr(p + 5, "name=")) {
        const char *v = p + 5;
        if (strncmp(v, name, n) == 0 && (v[n] == ' ' || v[n] == '\n' || v[n] == '\0'))
            return true;
    }
    return false;
}
