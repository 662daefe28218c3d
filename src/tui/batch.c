#include "tui/batch.h"

#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "jvm/cleanup.h"
#include "tui/exit.h"
#include "tui/report_io.h"
#include "tui/report_profile.h"
#include "tui/report_target.h"
#include "tui/source_kubectl.h"
#include "tui/source_pid.h"
#include "tui/stop.h"
#include "wire/snapshot_json.h"

#define TEXT_BUSY_MAX 20

void tui_target_opts_from_args(const tui_args *a, tui_target_opts *o)
{
    tui_target_opts_init(o);
    o->pid = (pid_t)a->pid;
    if (a->interval_ns > 0)
        o->interval_ns = a->interval_ns;
    if (a->window_ns > 0)
        o->window_ns = a->window_ns;
    o->source = (jvm_snap_source)a->snap_source;
    o->asprof = a->asprof;
    o->io_detail = a->io_detail;
    o->heap_all = a->heap_all;
    o->heap_every_ns = a->heap_every_ns;
}

int tui_batch_list_run(FILE *out, FILE *errout)
{
    jvm_proc_list list;
    jp_error err;
    jp_error_init(&err);
    if (jvm_proc_list_local(&list, &err) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return TUI_EXIT_ERROR;
    }
    fprintf(out, "%-8s %-12s %-8s %s\n", "PID", "USER", "UPTIME", "MAIN CLASS");
    for (size_t i = 0; i < list.count; i++) {
        const jvm_proc *p = &list.items[i];
        char up[32];
        tui_format_uptime(p->uptime_ns, up, sizeof up);
        fprintf(out, "%-8d %-12s %-8s %s%s\n", (int)p->pid, p->user, up,
                p->main_class[0] ? p->main_class : "?",
                p->attach_disabled ? "  (attach disabled)" : "");
    }
    if (!list.count)
        fprintf(errout, "jprof-top: no Java virtual machine found that this user may inspect "
                        "(run as the JVM's user or as root)\n");
    jvm_proc_list_cleanup(&list);
    return ferror(out) ? TUI_EXIT_ERROR : TUI_EXIT_OK;
}

json_t *tui_report_target_json(const tui_target *l)
{
    jp_snapjson_target tg = {.pid = (int)l->proc.pid,
                             .main_class = l->proc.main_class,
                             .user = l->proc.user,
                             .jvm_version = l->jvm_version[0] ? l->jvm_version : NULL,
                             .start_ns = l->proc.start_ns};
    jp_snapjson_opts jo;
    jp_snapjson_opts_init(&jo);
    jo.cpu = &l->cpu;
    if (l->ops->busy)
        jo.busy = &l->busy; /* the source's own snapshot evidence */
    jo.now_ns = jp_time_now_ns();
    json_t *j = jp_snapshot_json(l->cur, l->prev, &tg, &jo);
    /* the snapshot's process figures (bytes), with the header's words */
    json_t *proc = json_object_get(j, "process");
    json_object_set_new(proc, "cpu_pct",
                        l->proc_cpu_pct >= 0 ? json_real(l->proc_cpu_pct) : json_null());
    json_object_set_new(proc, "heap", l->heap[0] ? json_string(l->heap) : json_null());
    json_t *cost = json_object();
    json_object_set_new(cost, "refresh_ms", json_real(l->cost_ms));
    json_object_set_new(cost, "snapshot_ms", json_real(l->snapshot_ms));
    json_object_set_new(j, "jprof", cost);
    /* where the data came from: "pid" (attach on this machine), "kubectl" */
    json_object_set_new(j, "via", json_string(l->ops->name));
    json_object_set_new(j, "where", l->where[0] ? json_string(l->where) : json_null());
    json_object_set_new(j, "fallback",
                        l->fallback.code != JP_OK ? json_string(l->fallback.msg) : json_null());
    return j;
}

/* One JSON document as one line, flushed (a reader may be waiting for
 * it); takes j over. */
static jp_err json_line_write(json_t *j, FILE *out)
{
    int rc = json_dumpf(j, out, JSON_COMPACT | JSON_ENSURE_ASCII);
    json_decref(j);
    if (rc != 0 || fputc('\n', out) == EOF)
        return JP_ERR_IO;
    return fflush(out) == 0 ? JP_OK : JP_ERR_IO;
}

jp_err tui_report_target_write(const tui_target *l, tui_format format, long n, FILE *out)
{
    if (format == TUI_FORMAT_JSON) {
        json_t *j = tui_report_target_json(l);
        return json_line_write(j, out);
    }
    tui_lines ls;
    tui_lines_init(&ls);
    if (n > 0)
        tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_report_header(l, &ls);
    tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "BUSY THREADS (top %d)", TEXT_BUSY_MAX);
    tui_report_busy(l, TEXT_BUSY_MAX, &ls);
    tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "LOCKS");
    tui_report_locks_idle(l, true, &ls);
    tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "DEADLOCKS");
    tui_report_deadlocks(l, &ls);
    jp_err rc = tui_lines_write(&ls, out);
    tui_lines_cleanup(&ls);
    if (rc == JP_OK && fflush(out) != 0)
        rc = JP_ERR_IO;
    return rc;
}

static int fail(FILE *errout, const jp_error *err)
{
    fprintf(errout, "jprof-top: %s\n", err->msg);
    return tui_exit_status(err->code);
}

static int interrupted(FILE *errout)
{
    jvm_cleanup_run_all();
    fprintf(errout, "jprof-top: interrupted (signal %d); nothing left in the target\n",
            (int)tui_stop_signal);
    return 128 + (int)tui_stop_signal;
}

/* The pid source of the command line, opened with the stop signals
 * caught; NULL and the exit status (the error printed) when it fails. */
static int open_pid(const tui_args *a, tui_target **l, FILE *errout)
{
    tui_stop_install();
    tui_target_opts o;
    tui_target_opts_from_args(a, &o);
    jp_error err;
    jp_error_init(&err);
    return tui_pid_open(&o, l, &err) == JP_OK ? TUI_EXIT_OK : fail(errout, &err);
}

int tui_batch_pid_run(const tui_args *a, FILE *out, FILE *errout)
{
    if (a->asprof) {
        fprintf(errout, "jprof-top: --asprof applies to the interactive Flame screen; batch mode "
                        "prints thread snapshots (drop --asprof, or drop -b)\n");
        return TUI_EXIT_USAGE;
    }
    tui_target *l = NULL;
    int status = open_pid(a, &l, errout);
    return l ? tui_batch_samples(l, a->count, a->format, out, errout) : status;
}

int tui_batch_io_run(const tui_args *a, FILE *out, FILE *errout)
{
    tui_stop_install();
    tui_target_opts o;
    tui_target_opts_from_args(a, &o);
    o.io_detail = true;
    int64_t span = a->interval_ns > 0 ? a->interval_ns : 10 * JP_NS_PER_SEC;
    jp_error err;
    jp_error_init(&err);
    tui_target *l = NULL;
    int status = TUI_EXIT_OK;
    if (tui_pid_open(&o, &l, &err) != JP_OK)
        return fail(errout, &err);
    if (tui_target_prof_start(l, &err) != JP_OK) {
        status = fail(errout, &err);
        goto out;
    }
    tui_stop_sleep(span);
    if (tui_stop_signal) {
        status = interrupted(errout);
        goto out;
    }
    if (tui_target_prof_dump(l, &err) != JP_OK) {
        status = fail(errout, &err);
        goto out;
    }
    jp_io_detail none;
    jp_io_detail_init(&none);
    const jp_io_detail *io = l->prof.io ? l->prof.io : &none;
    jp_err rc;
    if (a->format == TUI_FORMAT_JSON) {
        json_t *doc = json_object();
        json_object_set_new(doc, "pid", json_integer(a->pid));
        json_object_set_new(doc, "seconds", json_real((double)span / 1e9));
        json_object_set_new(doc, "io_detail", tui_io_detail_json(io));
        rc = json_dumpf(doc, out, JSON_COMPACT) ? JP_ERR_IO : JP_OK;
        json_decref(doc);
        putc('\n', out);
        if (fflush(out) != 0)
            rc = JP_ERR_IO;
    } else {
        rc = tui_io_detail_write_text(out, io, &err);
    }
    jp_io_detail_cleanup(&none);
    if (rc != JP_OK) {
        fprintf(errout, "jprof-top: cannot write the output\n");
        status = TUI_EXIT_ERROR;
    }
out:
    tui_target_free(l);
    jvm_cleanup_run_all();
    return status;
}

int tui_batch_heap_run(const tui_args *a, FILE *out, FILE *errout)
{
    tui_target *l = NULL;
    int status = open_pid(a, &l, errout);
    if (!l)
        return status;
    return tui_batch_heap(l, a->count, a->interval_ns > 0 ? a->interval_ns : 10 * JP_NS_PER_SEC,
                          a->format, out, errout);
}

static jp_err heap_write(const tui_target *l, tui_format format, long n, FILE *out)
{
    if (format == TUI_FORMAT_JSON) {
        json_t *j = tui_heap_json(&l->histograms, 0);
        json_object_set_new(j, "via", json_string(l->ops->name));
        json_object_set_new(j, "where", l->where[0] ? json_string(l->where) : json_null());
        json_object_set_new(j, "target",
                            json_pack("{s:i,s:s,s:s}", "pid", (int)l->proc.pid, "main_class",
                                      l->proc.main_class, "user", l->proc.user));
        return json_line_write(j, out);
    }
    tui_lines ls;
    tui_lines_init(&ls);
    if (n > 0)
        tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_lines_add(&ls, TUI_STYLE_TITLE, 0, "JVM %d %s%s%s", (int)l->proc.pid,
                  l->proc.main_class[0] ? l->proc.main_class : "?", l->where[0] ? " in " : "",
                  l->where);
    tui_report_heap(&l->histograms, 20, "", &ls);
    jp_err rc = tui_lines_write(&ls, out);
    tui_lines_cleanup(&ls);
    if (rc == JP_OK && fflush(out) != 0)
        rc = JP_ERR_IO;
    return rc;
}

int tui_batch_heap(tui_target *l, long count, int64_t every, tui_format format, FILE *out,
                   FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    int status = TUI_EXIT_OK;
    for (long n = 0; n < (count > 0 ? count : 1); n++) {
        if (n)
            tui_stop_sleep(every);
        if (tui_stop_signal) {
            status = interrupted(errout);
            break;
        }
        if (tui_target_heap(l, &err) != JP_OK) {
            status = fail(errout, &err);
            break;
        }
        if (heap_write(l, format, n, out) != JP_OK) {
            fprintf(errout, "jprof-top: cannot write the output\n");
            status = TUI_EXIT_ERROR;
            break;
        }
    }
    tui_target_free(l);
    jvm_cleanup_run_all();
    return status;
}

int tui_batch_samples(tui_target *l, long count, tui_format format, FILE *out, FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    int status = TUI_EXIT_OK;
    const tui_target_opts o = l->opts;
    if (count <= 0)
        count = 1;
    /* The first sample's CPU% needs a second snapshot one interval later. */
    if (tui_target_refresh(l, &err) != JP_OK) {
        status = fail(errout, &err);
        goto out;
    }
    if (l->fallback.code != JP_OK)
        fprintf(errout, "jprof-top: the helper could not load, used Thread.print: %s\n",
                l->fallback.msg);
    for (long n = 0; n < count; n++) {
        tui_stop_sleep(o.interval_ns);
        if (tui_stop_signal) {
            status = interrupted(errout);
            goto out;
        }
        if (tui_target_refresh(l, &err) != JP_OK) {
            status = fail(errout, &err);
            goto out;
        }
        if (tui_report_target_write(l, format, n, out) != JP_OK) {
            fprintf(errout, "jprof-top: cannot write the output\n");
            status = TUI_EXIT_ERROR;
            goto out;
        }
    }
out:
    tui_target_free(l);
    jvm_cleanup_run_all();
    return status;
}

static bool pod_running(const jp_pod *p)
{
    return !p->phase || !strcmp(p->phase, "Running");
}

/* -b through kubectl: every running pod of the service (or --pod), each
 * JVM as `-b -p PID` prints one (two snapshots one interval apart, for
 * CPU%); JSON: one object with "via": "kubectl" and jvms[] in that shape,
 * as the server's batch output has. */
int tui_batch_kubectl(const tui_args *a, const kube_opts *ko, jp_pod_list *pods,
                      const tui_target_opts *o)
{
    int status = TUI_EXIT_OK;
    json_t *jvms = json_array();
    size_t n = 0;
    for (size_t i = 0; i < pods->count && !tui_stop_signal; i++) {
        const jp_pod *p = &pods->items[i];
        if (!pod_running(p)) {
            fprintf(stderr, "jprof-top: pod %s is %s; left out\n", p->name, p->phase);
            continue;
        }
        jp_error err;
        jp_error_init(&err);
        tui_target *l = NULL;
        jp_err rc = tui_kubectl_open(ko, p->name, a->container, p, o, &l, &err);
        char others[1024];
        if (rc == JP_OK && tui_kubectl_others(l, others, sizeof others))
            fprintf(stderr, "jprof-top: pod %s: this is pid %d %s; other JVMs: %s\n", p->name,
                    (int)l->proc.pid, l->proc.main_class, others);
        if (rc == JP_OK)
            rc = tui_target_refresh(l, &err);
        if (rc == JP_OK) {
            tui_stop_sleep(o->interval_ns);
            rc = tui_target_refresh(l, &err);
        }
        if (rc != JP_OK) {
            fprintf(stderr, "jprof-top: pod %s: %s\n", p->name, err.msg);
            status = status == TUI_EXIT_OK ? tui_exit_status_kubectl(&err) : status;
        } else if (a->format == TUI_FORMAT_JSON) {
            json_array_append_new(jvms, tui_report_target_json(l));
        } else if (tui_report_target_write(l, TUI_FORMAT_TEXT, (long)n, stdout) != JP_OK) {
            status = TUI_EXIT_ERROR;
        }
        n += rc == JP_OK;
        tui_target_free(l); /* bye: the probe removes itself */
    }
    if (a->format == TUI_FORMAT_JSON) {
        json_t *j = json_pack("{s:s,s:s?,s:s?,s:s?,s:o}", "via", "kubectl", "namespace", ko->ns,
                              "service", a->ro.svc, "pod", a->pod, "jvms", jvms);
        if (json_dumpf(j, stdout, JSON_COMPACT) != 0 || fputc('\n', stdout) == EOF)
            status = TUI_EXIT_ERROR;
        json_decref(j);
    } else {
        json_decref(jvms);
    }
    if (fflush(stdout) != 0)
        status = TUI_EXIT_ERROR;
    jvm_cleanup_run_all();
    if (tui_stop_signal) {
        fprintf(stderr, "jprof-top: interrupted (signal %d); nothing left in the pod\n",
                (int)tui_stop_signal);
        return 128 + (int)tui_stop_signal;
    }
    return status;
}
