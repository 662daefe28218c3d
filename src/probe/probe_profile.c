#include "probe/probe_profile.h"

#include <string.h>

#include "base/timeutil.h"

jp_err probe_profile_start(probe_profile *p, const jvm_proc *t, int jdk_major, uint32_t kinds,
                           int64_t interval_ns, int64_t window_ns, jp_error *err)
{
    if (p->running)
        return jp_error_set(err, JP_ERR_USAGE, "a profile is already running (profile_stop first)");
    jvm_engine_opts eo;
    jvm_engine_opts_init(&eo);
    eo.role = JVM_ENGINE_VIEWER;
    eo.session = "jprof-probe";
    jp_err rc = jvm_engine_new(t, &eo, &p->engine, err);
    if (rc != JP_OK)
        return rc;
    if (jvm_engine_unsupported(p->engine, kinds)) {
        jvm_engine_free(p->engine);
        p->engine = NULL;
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "the probe records with the JDK Flight Recorder, which has no "
                            "wall-clock or native kinds (use cpu, alloc, lock, park or cputime)");
    }
    jvm_engine_window w;
    jvm_engine_window_init(&w);
    w.kinds = kinds;
    w.jdk_major = jdk_major;
    w.cpu_interval_ns = interval_ns > 0 ? interval_ns : 10 * JP_NS_PER_MS;
    w.lock_threshold_ns = 1 * JP_NS_PER_MS;
    w.span_ns = window_ns;
    rc = jvm_engine_start(p->engine, &w, err);
    if (rc != JP_OK) {
        jvm_engine_free(p->engine);
        p->engine = NULL;
        return rc;
    }
    p->running = true;
    p->kinds = kinds;
    p->interval_ns = w.cpu_interval_ns;
    p->window_ns = window_ns;
    p->started_ns = jp_time_now_ns();
    return JP_OK;
}

const char *probe_profile_name(const probe_profile *p)
{
    return p->running ? jvm_engine_session_name(p->engine) : "";
}

const char *probe_profile_engine(const probe_profile *p)
{
    return p->running ? jvm_engine_name(p->engine) : "";
}

jp_err probe_profile_read(probe_profile *p, jp_profile **out, jfr_report *rep, jp_error *err)
{
    *out = NULL;
    jfr_report_init(rep);
    if (!p->running)
        return jp_error_set(err, JP_ERR_USAGE, "no profile is running (profile_start first)");
    jfr_options opt;
    jfr_options_init(&opt);
    opt.kinds = p->kinds;
    opt.jobs = 1; /* the probe is a guest in the pod: one core at most */
    jp_profile *prof = jp_profile_new();
    bool tail = false;
    jp_err rc = jvm_engine_peek(p->engine, &opt, prof, rep, &tail, err);
    if (rc != JP_OK) {
        jp_profile_free(prof);
        return rc;
    }
    *out = prof;
    return JP_OK;
}

jp_err probe_profile_stop(probe_profile *p, jp_error *err)
{
    if (!p->running)
        return JP_OK;
    p->running = false;
    jp_err rc = jvm_engine_stop(p->engine, err);
    jvm_engine_free(p->engine);
    p->engine = NULL;
    return rc;
}

int probe_profile_stop_orphans(const jvm_proc *t, pid_t pid)
{
    return jvm_engine_stop_orphans(t, NULL, pid);
}
