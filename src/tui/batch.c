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
        jp_error err;
        jp_error_init(&err);
        return tui_write_json_line(out, j, JSON_ENSURE_ASCII, &err);
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

static bool source_gone(void *ctx)
{
    const tui_target *l = ctx;
    return l->ops->alive && !l->ops->alive(l);
}

jp_err tui_batch_snapshot(tui_target *l, bool wait, bool *stopped, jp_error *err)
{
    *stopped = wait && !tui_stop_sleep_until(l->opts.interval_ns, source_gone, l);
    return *stopped ? JP_OK : tui_target_refresh(l, err);
}

int tui_batch_samples(tui_target *l, long count, tui_format format, FILE *out, FILE *errout)
{
    jp_error err;
    jp_error_init(&err);
    int status = TUI_EXIT_OK;
    bool stopped = false;
    if (count <= 0)
        count = 1;
    /* The first sample's CPU% needs a second snapshot one interval later. */
    if (tui_batch_snapshot(l, false, &stopped, &err) != JP_OK) {
        status = fail(errout, &err);
        goto out;
    }
    if (l->fallback.code != JP_OK)
        fprintf(errout, "jprof-top: the helper could not load, used Thread.print: %s\n",
                l->fallback.msg);
    for (long n = 0; n < count; n++) {
        if (tui_batch_snapshot(l, true, &stopped, &err) != JP_OK) {
            status = fail(errout, &err);
            goto out;
        }
        if (stopped) {
            status = interrupted(errout);
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

void tui_batch_pods(const tui_pod_round *r, const jp_pod_list *pods)
{
    for (size_t i = 0; i < pods->count && !tui_stop_signal; i++) {
        const jp_pod *p = &pods->items[i];
        if (r->want && !r->want(r->ctx, p))
            continue;
        jp_error err;
        jp_error_init(&err);
        tui_target *l = NULL;
        bool stopped = false;
        jp_err rc = tui_kubectl_open(r->ko, p->name, r->container, p, r->opts, &l, &err);
        for (int k = 0; rc == JP_OK && !stopped && k < (r->snapshots > 0 ? r->snapshots : 1); k++)
            rc = tui_batch_snapshot(l, k > 0, &stopped, &err);
        if (!stopped)
            r->each(r->ctx, p, rc == JP_OK ? l : NULL, &err);
        tui_target_free(l); /* bye: the probe stops and removes itself */
    }
}

/* jprof-top -b through kubectl: a pod that does not run is left out */
static bool pod_running(void *ctx, const jp_pod *p)
{
    (void)ctx;
    if (!p->phase || !strcmp(p->phase, "Running"))
        return true;
    fprintf(stderr, "jprof-top: pod %s is %s; left out\n", p->name, p->phase);
    return false;
}

typedef struct kubectl_batch {
    const tui_args *a;
    json_t *jvms; /* JSON: each pod's sample */
    size_t n;     /* the pods that answered */
    int status;
} kubectl_batch;

static void kubectl_answer(void *ctx, const jp_pod *p, tui_target *l, const jp_error *err)
{
    kubectl_batch *b = ctx;
    if (!l) {
        fprintf(stderr, "jprof-top: pod %s: %s\n", p->name, err->msg);
        b->status = b->status == TUI_EXIT_OK ? tui_exit_status_kubectl(err) : b->status;
        return;
    }
    char others[1024];
    if (tui_kubectl_others(l, others, sizeof others))
        fprintf(stderr, "jprof-top: pod %s: this is pid %d %s; other JVMs: %s\n", p->name,
                (int)l->proc.pid, l->proc.main_class, others);
    if (b->a->format == TUI_FORMAT_JSON)
        json_array_append_new(b->jvms, tui_report_target_json(l));
    else if (tui_report_target_write(l, TUI_FORMAT_TEXT, (long)b->n, stdout) != JP_OK)
        b->status = TUI_EXIT_ERROR;
    b->n++;
}

int tui_batch_kubectl(const tui_args *a, const kube_opts *ko, jp_pod_list *pods,
                      const tui_target_opts *o)
{
    kubectl_batch b = {.a = a, .jvms = json_array(), .status = TUI_EXIT_OK};
    tui_pod_round r = {.ko = ko,
                       .container = a->container,
                       .opts = o,
                       .snapshots = 2, /* CPU% between two, one interval apart */
                       .want = pod_running,
                       .each = kubectl_answer,
                       .ctx = &b};
    tui_batch_pods(&r, pods);
    jp_error err;
    jp_error_init(&err);
    if (a->format == TUI_FORMAT_JSON) {
        json_t *j = json_pack("{s:s,s:s?,s:s?,s:s?,s:o}", "via", "kubectl", "namespace", ko->ns,
                              "service", a->ro.svc, "pod", a->pod, "jvms", b.jvms);
        if (tui_write_json_line(stdout, j, 0, &err) != JP_OK)
            b.status = TUI_EXIT_ERROR;
    } else {
        json_decref(b.jvms);
    }
    if (fflush(stdout) != 0)
        b.status = TUI_EXIT_ERROR;
    jvm_cleanup_run_all();
    if (tui_stop_signal) {
        fprintf(stderr, "jprof-top: interrupted (signal %d); nothing left in the pod\n",
                (int)tui_stop_signal);
        return 128 + (int)tui_stop_signal;
    }
    return b.status;
}
