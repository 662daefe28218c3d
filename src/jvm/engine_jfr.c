/* engine_jfr.c - the JDK Flight Recorder engine (jvm/engine.h).
 *
 * Collector: one recording named after the session ("jprof-agent"),
 *   JFR.start name=S settings=X disk=true maxsize=256m
 *   JFR.stop name=S filename=/tmp/jprof-….jfr   (the window, read and deleted)
 * Viewer: a rolling recording of recorder.c (maxage = the span, a name
 * unique to this process), dumped at every peek.
 * Settings: jprof's own .jfc (jvm/jfc.h, written into the target, read by
 * the JVM while it starts the recording, removed), or one the user names;
 * a viewer on JDK 25+ asks for jdk.CPUTimeSample by name beside them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "jvm/cleanup.h"
#include "jvm/engine_int.h"
#include "jvm/jfc.h"

#define JFR_LIMITS "disk=true maxsize=256m"
/* JDK 25's CPU-time sampler (JEP 509) counts the CPU each sample stands
 * for; off in every .jfc of the JDK, so asked for by name (JFR.start takes
 * event settings since JDK 17). */
#define JFR_CPUTIME_OPTS "jdk.CPUTimeSample#enabled=true jdk.CPUTimeSample#throttle=10ms"

static bool own_settings(const jvm_engine *e)
{
    return strcmp(e->opts.jfr_settings, JVM_ENGINE_JFR_OWN) == 0;
}

bool jvm_engine_records_cputime(const jvm_engine *e, const jvm_engine_window *w)
{
    if (e->opts.kind != JVM_ENGINE_JFR)
        return false;
    if (!own_settings(e))
        return e->opts.role == JVM_ENGINE_VIEWER && w->jdk_major >= 25;
    jvm_jfc_opts jo;
    jvm_jfc_opts_init(&jo);
    jo.kinds = w->kinds;
    jo.jdk_major = w->jdk_major;
    return jvm_jfc_cputime(&jo);
}

static jp_err jfr_foreign(jvm_engine *e, jp_error *err)
{
    return jvm_recorder_check_conflict(&e->proc, err);
}

/* jprof's own settings for w, as a .jfc file in the target (the caller
 * removes it once the recording started). */
static jp_err write_own_jfc(jvm_engine *e, const jvm_engine_window *w, jvm_tfile *f, jp_error *err)
{
    jvm_jfc_opts jo;
    jvm_jfc_opts_init(&jo);
    jo.kinds = w->kinds;
    jo.jdk_major = w->jdk_major;
    if (w->cpu_interval_ns > 0)
        jo.cpu_period_ns = w->cpu_interval_ns;
    if (w->lock_threshold_ns > 0)
        jo.lock_threshold_ns = w->lock_threshold_ns;
    jp_strbuf xml;
    jp_strbuf_init(&xml, 0);
    jp_err rc = jvm_jfc_build(&jo, &xml, err);
    if (rc == JP_OK)
        rc = jvm_tfile_name(&e->proc, ".jfc", f, err);
    if (rc == JP_OK) {
        rc = jvm_tfile_write(&e->proc, f, jp_strbuf_str(&xml), xml.len, err);
        if (rc != JP_OK)
            jvm_tfile_remove(f);
    }
    jp_strbuf_cleanup(&xml);
    return rc;
}

static jp_err jfr_start(jvm_engine *e, const jvm_engine_window *w, jp_error *err)
{
    jvm_tfile jfc;
    memset(&jfc, 0, sizeof jfc);
    char settings[JVM_ATTACH_ARG_MAX / 2];
    jp_err rc = JP_OK;
    if (own_settings(e))
        rc = write_own_jfc(e, w, &jfc, err);
    if (rc != JP_OK)
        return rc;
    const char *base = jfc.inner[0] ? jfc.inner : e->opts.jfr_settings;
    bool cputime = !jfc.inner[0] && jvm_engine_records_cputime(e, w);
    int n = snprintf(settings, sizeof settings, "%s%s%s", base, cputime ? " " : "",
                     cputime ? JFR_CPUTIME_OPTS : "");
    if (n < 0 || (size_t)n >= sizeof settings)
        rc = jp_error_set(err, JP_ERR_USAGE, "JFR settings %.60s... are too long", base);
    if (rc == JP_OK && e->opts.role == JVM_ENGINE_VIEWER) {
        rc = jvm_jfr_start(&e->proc, &e->opts.attach, settings, w->span_ns, &e->rec, err);
    } else if (rc == JP_OK) {
        rc = jvm_engine_guard_on(e, err); /* first: an interrupted program stops it */
        char line[JVM_ATTACH_ARG_MAX];
        snprintf(line, sizeof line, "JFR.start name=%s settings=%s " JFR_LIMITS, e->session,
                 settings);
        if (rc == JP_OK)
            rc = jvm_jfr_cmd(&e->proc, &e->opts.attach, line, "Started recording", err);
    }
    if (jfc.inner[0])
        jvm_tfile_remove(&jfc);
    return rc;
}

/* Stops the collector's recording into a fresh file in the target. */
static jp_err stop_into(jvm_engine *e, jvm_tfile *out, jp_error *err)
{
    jp_err rc = jvm_tfile_name(&e->proc, ".jfr", out, err);
    if (rc != JP_OK)
        return rc;
    char line[JVM_ATTACH_ARG_MAX];
    snprintf(line, sizeof line, "JFR.stop name=%s filename=%s", e->session, out->inner);
    return jvm_jfr_cmd(&e->proc, &e->opts.attach, line, "Stopped recording", err);
}

static jp_err jfr_recover(jvm_engine *e, jvm_tfile *salvage, bool *found, jp_error *err)
{
    char *check = NULL;
    jp_err rc = jvm_jfr_check(&e->proc, &e->opts.attach, &check, err);
    if (rc != JP_OK)
        return rc;
    *found = jvm_jfr_check_lists(check, e->session);
    free(check);
    return *found ? stop_into(e, salvage, err) : JP_OK;
}

static jp_err jfr_finish(jvm_engine *e, jvm_tfile *out, jp_error *err)
{
    return stop_into(e, out, err);
}

static jp_err jfr_fetch(jvm_engine *e, uint8_t **data, size_t *len, bool *tail, jp_error *err)
{
    *tail = false;
    return jvm_jfr_dump(&e->rec, data, len, err);
}

static jp_err jfr_stop(jvm_engine *e, jp_error *err)
{
    if (e->opts.role == JVM_ENGINE_VIEWER)
        return e->rec.name[0] ? jvm_jfr_stop(&e->rec, err) : JP_OK;
    char line[128];
    snprintf(line, sizeof line, "JFR.stop name=%s", e->session);
    return jvm_jfr_cmd(&e->proc, &e->opts.attach, line, NULL, err);
}

int jvm_engine_stop_orphans(const jvm_proc *t, const jvm_attach_opts *ao, pid_t owner)
{
    char *text = NULL;
    if (jvm_jfr_check(t, ao, &text, NULL) != JP_OK)
        return 0;
    /* recorder.c names a viewer's recordings jprof-<pid>-<n> */
    char prefix[32];
    snprintf(prefix, sizeof prefix, "name=jprof-%d-", (int)owner);
    int stopped = 0;
    for (const char *q = strstr(text, prefix); q; q = strstr(q + 1, prefix)) {
        const char *name = q + 5;
        size_t n = strcspn(name, " \n\t");
        char line[128];
        if (n > 64)
            continue;
        snprintf(line, sizeof line, "JFR.stop name=%.*s", (int)n, name);
        if (jvm_jfr_cmd(t, ao, line, NULL, NULL) == JP_OK)
            stopped++;
    }
    free(text);
    return stopped;
}

static void jfr_release(jvm_engine *e)
{
    (void)e; /* every file of this engine is removed as soon as it was used */
}

static void jfr_forget(jvm_engine *e)
{
    jvm_cleanup_unregister(e->rec.cleanup);
    e->rec.cleanup = 0;
    e->rec.running = false;
}

const jvm_engine_ops jvm_engine_jfr_ops = {
    .name = "jfr",
    .unsupported = 1u << JP_KIND_WALL | 1u << JP_KIND_NATIVEMEM | 1u << JP_KIND_LIVE |
                   1u << JP_KIND_NATIVELOCK,
    .foreign = jfr_foreign,
    .recover = jfr_recover,
    .start = jfr_start,
    .finish = jfr_finish,
    .fetch = jfr_fetch,
    .stop = jfr_stop,
    .release = jfr_release,
    .forget = jfr_forget,
};
