/* source_pid.c - a JVM on this machine as a source of jprof-top's screens
 * (source.h): thread snapshots over the HotSpot attach socket, the header
 * numbers from /proc and GC.heap_info, the Flame window from a profiling
 * engine (jvm/engine.h); and the picker of the JVMs on this machine. */
#include "tui/source_pid.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/cleanup.h"
#include "jvm/histogram.h"
#include "jvm/jfc.h"
#include "jvm/procstat.h"
#include "model/units.h"
#include "tui/lines.h"
#include "tui/report_target.h"

static const tui_source_ops pid_ops;

static double ms_since(int64_t mono)
{
    return (double)(jp_time_mono_ns() - mono) / 1e6;
}

/* "OpenJDK 64-Bit Server VM version 17.0.16+8-Debian-1\nJDK 17.0.16\n" */
static void parse_version(tui_target *l, const char *text)
{
    size_t n = strcspn(text, "\n");
    snprintf(l->jvm_vm, sizeof l->jvm_vm, "%.*s", (int)(n > 120 ? 120 : n), text);
    const char *jdk = strstr(text, "\nJDK ");
    if (jdk) {
        jdk++;
        n = strcspn(jdk, "\n");
        snprintf(l->jvm_version, sizeof l->jvm_version, "%.*s", (int)(n > 60 ? 60 : n), jdk);
    } else {
        const char *v = strstr(l->jvm_vm, " version ");
        snprintf(l->jvm_version, sizeof l->jvm_version, "%s", v ? v + 9 : l->jvm_vm);
    }
}

jp_err tui_pid_open(const tui_target_opts *o, tui_target **out, jp_error *err)
{
    *out = NULL;
    tui_target *l = tui_target_new(o, &pid_ops, NULL);
    jp_err rc = JP_OK;
    if (o->asprof && access(o->asprof, R_OK) != 0)
        rc = jp_error_set(err, JP_ERR_USAGE,
                          "--asprof %s: %s (give the path of libasyncProfiler.so)", o->asprof,
                          strerror(errno));
    if (rc == JP_OK)
        rc = jvm_proc_open(o->pid, &l->proc, err);
    jvm_reply r;
    if (rc == JP_OK)
        rc = jvm_jcmd(&l->proc, &l->attach, "VM.version", &r, err);
    if (rc != JP_OK) {
        free(l);
        return rc;
    }
    parse_version(l, r.text);
    jvm_reply_cleanup(&r);
    jvm_procstat_read(&l->proc, &l->attach, &l->stat); /* CPU % from the first refresh */
    *out = l;
    return JP_OK;
}

/* The pid source's snapshot: over the attach socket, then the header
 * numbers from /proc and GC.heap_info. */
static jp_err pid_refresh(tui_target *l, jp_snapshot **out, jp_error *err)
{
    int64_t t0 = jp_time_mono_ns();
    jp_error why;
    jp_err rc = jvm_snapshot_take(&l->proc, &l->attach, &l->snap, out, &why, err);
    if (rc != JP_OK) {
        if (rc != JP_ERR_EXITED && !jvm_proc_alive(&l->proc))
            rc = jp_error_set(err, JP_ERR_EXITED, "pid %d has exited", (int)l->proc.pid);
        return rc;
    }
    if (why.code != JP_OK && l->snap.source == JVM_SNAP_AUTO) {
        /* The helper cannot load here: do not pay for trying every time. */
        l->fallback = why;
        l->snap.source = JVM_SNAP_THREAD_PRINT;
    }
    l->snapshot_ms = ms_since(t0);
    /* the header's figures, as the probe and the agent read them too */
    jvm_procstat now;
    jvm_procstat_read(&l->proc, &l->attach, &now);
    jvm_procstat_to_snapshot(&l->stat, &now, *out);
    l->stat = now;
    return JP_OK;
}

/* The engine behind the Flame screen: a viewer (jvm/engine.h) of the JDK
 * Flight Recorder with the JDK's "profile" settings, or of async-profiler
 * with --asprof, sampling cpu, allocations, locks and wall clock (every
 * 50 ms: wall-clock sampling of every thread costs more than cpu). */
static jp_err prof_engine(tui_target *l, jp_error *err)
{
    if (l->prof.engine)
        return JP_OK;
    jvm_engine_opts eo;
    jvm_engine_opts_init(&eo);
    eo.role = JVM_ENGINE_VIEWER;
    eo.kind = l->opts.asprof ? JVM_ENGINE_ASPROF : JVM_ENGINE_JFR;
    eo.asprof_lib = l->opts.asprof;
    eo.jfr_settings = "profile";
    eo.attach = l->attach;
    return jvm_engine_new(&l->proc, &eo, &l->prof.engine, err);
}

static void prof_window(const tui_target *l, jvm_engine_window *w)
{
    jvm_engine_window_init(w);
    w->kinds = 1u << JP_KIND_CPU | 1u << JP_KIND_ALLOC | 1u << JP_KIND_LOCK | 1u << JP_KIND_WALL;
    w->jdk_major = jvm_jdk_major(l->jvm_version);
    w->wall_interval_ns = 50 * JP_NS_PER_MS;
    w->alloc_interval_bytes = -1; /* async-profiler's own: every TLAB */
    w->lock_threshold_ns = -1;
    w->span_ns = l->opts.window_ns;
}

static jp_err pid_prof_start(tui_target *l, jp_error *err)
{
    jvm_engine_window w;
    prof_window(l, &w);
    jp_err rc = prof_engine(l, err);
    if (rc == JP_OK)
        rc = jvm_engine_start(l->prof.engine, &w, err);
    if (rc == JP_ERR_CONFLICT && l->opts.asprof && err) {
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n,
                 "; or run without --asprof for a JFR flame graph");
    }
    if (rc == JP_OK)
        l->prof.cputime = jvm_engine_records_cputime(l->prof.engine, &w);
    return rc;
}

/* The pid source's window: the engine's last span, parsed. */
static jp_err pid_prof_read(tui_target *l, jp_profile **out, jfr_report *rep, bool *tail,
                            jp_error *err)
{
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    if (l->opts.io_detail) {
        tui_target_io_free(l->prof.io_next);
        l->prof.io_next = jp_xmalloc(sizeof *l->prof.io_next);
        jp_io_detail_init(l->prof.io_next);
        opt.io_detail = l->prof.io_next;
    }
    jp_profile *p = jp_profile_new();
    jp_err rc = jvm_engine_peek(l->prof.engine, &opt, p, rep, tail, err);
    /* async-profiler starts a fresh session every window; one that did not
     * start leaves the screen to start it again */
    l->prof.running = jvm_engine_running(l->prof.engine);
    if (rc != JP_OK) {
        jp_profile_free(p);
        return rc;
    }
    *out = p;
    return JP_OK;
}

static void pid_prof_stop(tui_target *l)
{
    jvm_engine_free(l->prof.engine); /* stops it, removes its files */
    l->prof.engine = NULL;
}

static void pid_prof_label(const tui_target *l, char *buf, size_t len)
{
    double w = (double)l->opts.window_ns / 1e9;
    if (l->opts.asprof)
        snprintf(buf, len, "async-profiler live, last %.0fs", w);
    else if (l->prof.cputime)
        snprintf(buf, len, "JFR window %.0fs, cpu also as cputime (JDK 25 CPU-time sampling)", w);
    else
        snprintf(buf, len, "JFR window %.0fs", w);
}

static void pid_status(const tui_target *l, tui_lines *ls)
{
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "process: pid %d (pid %d in its namespace), user %s",
                  (int)l->proc.pid, (int)l->proc.nspid, l->proc.user);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "thread snapshots: %s",
                  l->snap.source == JVM_SNAP_THREAD_PRINT
                      ? "Thread.print over the attach socket"
                      : "the helper jar (ThreadMXBean: CPU time and lock owners), else "
                        "Thread.print");
    if (l->opts.asprof)
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "Flame engine: async-profiler %s", l->opts.asprof);
    else
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0,
                      "Flame engine: JDK Flight Recorder (JFR.start, "
                      "settings \"profile\")");
}

/* A class histogram over the attach socket (it pauses the JVM: only when
 * the user asks). */
static jp_err pid_heap(tui_target *l, bool all, jp_error *err)
{
    jp_heap_histo h;
    jp_heap_histo_init(&h);
    jp_err rc = jvm_histogram_take(&l->proc, &l->attach, all, &h, err);
    if (rc == JP_OK)
        tui_heap_add(&l->histograms, &h);
    jp_heap_histo_cleanup(&h);
    return rc;
}

static const char *pid_prof_engine(const tui_target *l)
{
    return l->opts.asprof ? "async-profiler" : "the JDK Flight Recorder";
}

static const tui_source_ops pid_ops = {
    .name = "pid",
    .heap = pid_heap,
    .how = "attach on this machine (jcmd protocol, src/jvm)",
    .prof_engine = pid_prof_engine,
    .status = pid_status,
    .refresh = pid_refresh,
    .prof_start = pid_prof_start,
    .prof_read = pid_prof_read,
    .prof_stop = pid_prof_stop,
    .prof_label = pid_prof_label,
    .close = NULL,
};

static jp_err local_scan(tui_picker *p, tui_pick_list *out, jp_error *err)
{
    jvm_proc_list *procs = p->ctx;
    jvm_proc_list_cleanup(procs);
    out->count = 0;
    jp_err rc = jvm_proc_list_local(procs, err);
    if (rc != JP_OK)
        return rc;
    for (size_t i = 0; i < procs->count; i++) {
        const jvm_proc *j = &procs->items[i];
        char up[32];
        tui_format_uptime(j->uptime_ns, up, sizeof up);
        snprintf(tui_pick_list_add(out)->text, TUI_PICK_TEXT, "%8d  %-12.12s %8s  %s%s",
                 (int)j->pid, j->user, up, j->main_class[0] ? j->main_class : "?",
                 j->attach_disabled ? "  (attach disabled)" : "");
    }
    return JP_OK;
}

static jp_err local_open(tui_picker *p, size_t i, const tui_target_opts *o, tui_target **out,
                         jp_error *err)
{
    const jvm_proc_list *procs = p->ctx;
    if (i >= procs->count)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no such JVM in the list");
    tui_target_opts lo = *o;
    lo.pid = procs->items[i].pid;
    return tui_pid_open(&lo, out, err);
}

static void local_free(tui_picker *p)
{
    jvm_proc_list_cleanup(p->ctx);
    free(p->ctx);
}

tui_picker *tui_picker_local(void)
{
    tui_picker *p = jp_xcalloc(1, sizeof *p);
    snprintf(p->title, sizeof p->title, "Java virtual machines on this machine");
    snprintf(p->head, sizeof p->head, "%8s  %-12s %8s  %s", "PID", "USER", "UPTIME", "MAIN CLASS");
    snprintf(p->empty, sizeof p->empty,
             "no JVM found that this user may inspect (run as its user or as root)");
    p->rescan_ns = 2 * JP_NS_PER_SEC;
    p->scan = local_scan;
    p->open = local_open;
    p->free = local_free;
    p->ctx = jp_xcalloc(1, sizeof(jvm_proc_list));
    return p;
}
