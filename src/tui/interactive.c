#include "tui/interactive.h"

#include <stdio.h>
#include <unistd.h>

#include "jvm/cleanup.h"
#include "tui/batch.h"
#include "tui/batch_server.h"
#include "tui/exit.h"
#include "tui/flame_view.h"
#include "tui/report_profile.h"
#include "tui/screens.h"
#include "tui/source_kubectl.h"
#include "tui/source_pid.h"
#include "tui/source_server.h"
#include "tui/stop.h"
#include "tui/terminal.h"

int tui_interactive_run(const tui_args *a)
{
    if (!tui_have_terminal())
        return TUI_EXIT_USAGE;
    jp_error err, serr;
    jp_error_init(&err);
    jp_error_init(&serr);
    jfr_report rep;
    jp_profile *p = NULL;
    jp_io_detail io;
    jp_io_detail_init(&io);
    /* Every kind, with threads, so kind and thread switches need no re-read. */
    tui_load_status st = tui_load_jfr_io(a, 0, true, a->io_detail ? &io : NULL, &p, &rep, &err);
    if (st == TUI_LOAD_FAILED) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        jp_io_detail_cleanup(&io);
        return TUI_EXIT_ERROR;
    }
    jp_kind k = JP_KIND_CPU;
    bool have_default = tui_kind_default(p, &k);
    if (a->has_kind && jp_profile_has_kind(p, a->kind))
        k = a->kind;
    tui_flame_view *v = tui_flame_view_new(p, &rep, a->jfr_path, k, a->by_value, a->threads);
    if (a->has_kind && k != a->kind)
        tui_flame_view_message(v, true, "no %s events in this recording; showing %s",
                               jp_kind_name(a->kind), jp_kind_name(k));
    else if (!have_default)
        tui_flame_view_message(v, true, "no profile events in this recording");
    if (a->io_detail) {
        tui_flame_view_set_io(v, &io);
        v->io_panel = true;
    }
    if (st == TUI_LOAD_PARTIAL)
        tui_flame_view_message(v, true, "PARTIAL: %s", err.msg);
    jp_err rc = tui_terminal_run(v, &serr);
    tui_flame_view_free(v);
    jp_io_detail_cleanup(&io);
    jp_profile_free(p);
    if (rc != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", serr.msg);
        return TUI_EXIT_ERROR;
    }
    if (st == TUI_LOAD_PARTIAL) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        return TUI_EXIT_PARTIAL;
    }
    return TUI_EXIT_OK;
}

int tui_interactive_diff(const tui_args *a)
{
    if (!tui_have_terminal())
        return TUI_EXIT_USAGE;
    tui_diff_sides sd;
    /* with threads, so t works as in the plain view */
    if (tui_diff_open(a, true, &sd, stderr) != TUI_EXIT_OK)
        return TUI_EXIT_ERROR;
    tui_flame_view *v =
        tui_flame_view_new(sd.d->prof, &sd.rep, a->jfr_path, sd.d->kind, a->by_value, a->threads);
    tui_flame_view_set_diff(v, sd.d, a->diff_path);
    jp_error serr;
    jp_error_init(&serr);
    jp_err rc = tui_terminal_run(v, &serr);
    tui_flame_view_free(v);
    tui_diff_sides_cleanup(&sd);
    if (rc != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", serr.msg);
        return TUI_EXIT_ERROR;
    }
    return TUI_EXIT_OK;
}

/* The screens as a tui_app of the curses loop (terminal.h). */
static void screens_resize(void *ctx, int rows, int cols)
{
    tui_screens_resize(ctx, rows, cols);
}

static tui_action screens_key(void *ctx, int key)
{
    return tui_screens_key(ctx, key);
}

static bool screens_tick(void *ctx)
{
    return tui_screens_tick(ctx);
}

static void screens_render(void *ctx, tui_canvas *c)
{
    tui_screens_render(ctx, c);
}

int tui_interactive_live(const tui_args *a)
{
    if (!tui_have_terminal())
        return TUI_EXIT_USAGE;
    tui_stop_install();
    tui_target_opts o;
    tui_target_opts_from_args(a, &o);
    jp_error err;
    jp_error_init(&err);
    tui_target *l = NULL;
    /* Open before the screen takes over, so a failure is a plain message
     * and a documented exit status. */
    if (a->has_pid && tui_pid_open(&o, &l, &err) != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        return tui_exit_status(err.code);
    }
    tui_screens *v = tui_screens_new(l, &o);
    if (l)
        tui_screens_tick(v); /* the first snapshot before the first screen */
    if (l && a->heap) {      /* --heap: the Heap screen, with the histogram asked for */
        tui_screens_key(v, 'H');
        if (!o.heap_every_ns)
            tui_screens_key(v, 'r');
    }
    return tui_interactive_live_view(v, "the target");
}

int tui_interactive_live_view(tui_screens *v, const char *where)
{
    tui_app app = {.ctx = v,
                   .resize = screens_resize,
                   .key = screens_key,
                   .tick = screens_tick,
                   .render = screens_render,
                   .stop = &tui_stop_signal,
                   .poll_ms = 100};
    int rc = tui_stop_signal ? TUI_EXIT_OK : tui_app_run(&app);
    /* Stops the recording and removes jprof's files in the target. */
    tui_screens_free(v);
    jvm_cleanup_run_all();
    if (rc != TUI_EXIT_OK)
        return rc;
    if (tui_stop_signal) {
        fprintf(stderr, "jprof-top: stopped by signal %d; nothing left in %s\n",
                (int)tui_stop_signal, where);
        return 128 + (int)tui_stop_signal;
    }
    return TUI_EXIT_OK;
}

bool tui_have_terminal(void)
{
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
        return true;
    fputs("jprof-top: the interactive view needs a terminal; use -b for batch output\n", stderr);
    return false;
}

int tui_app_run(const tui_app *app)
{
    jp_error err;
    jp_error_init(&err);
    if (tui_terminal_run_app(app, &err) != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        return TUI_EXIT_ERROR;
    }
    return TUI_EXIT_OK;
}

/* The screens every source has, on the service's newest snapshot (or
 * --pod's); o lists the service's pods and JVMs. */
int tui_interactive_server(tui_client *r, const tui_args *a)
{
    tui_stop_install();
    tui_target_opts o;
    tui_target_opts_init(&o);
    o.interval_ns = a->interval_ns > 0 ? a->interval_ns : 5 * JP_NS_PER_SEC;
    char pod[256];
    long long pid = -1;
    jp_error err;
    jp_error_init(&err);
    tui_target *l = NULL;
    bool found = tui_server_first(r, a->pod, pod, sizeof pod, &pid, &err) == JP_OK;
    if (found && tui_server_open(&a->ro, pod, pid, a->range, &o, &l, &err) != JP_OK)
        found = false;
    tui_screens *v = tui_screens_new_with(l, tui_picker_server(r, &a->ro, a->range), &o);
    if (!found)
        tui_screens_message(v, true, "%s", err.msg);
    /* the first snapshot before the first screen; pushed profiles have no
     * threads to show, they open on Flame */
    if (l)
        tui_screens_tick(v);
    if (l && (a->screen || l->profiles_only))
        tui_screens_key(v, "TLDFSGH"[a->screen ? a->screen : TUI_SCREEN_FLAME]);
    return tui_interactive_live_view(v, "the service (jprof-server is only read)");
}

/* --base-*: the differential flame graph of the range against the
 * baseline, the same view as --jfr NEW --diff OLD. */
int tui_interactive_server_diff(tui_client *r, const tui_args *a)
{
    tui_args o = *a;
    if (!o.has_kind) { /* cpu when the service has it, else its first kind */
        uint32_t kinds = tui_client_kinds(r);
        o.kind = JP_KIND_CPU;
        for (int k = 0; k < JP_KIND_COUNT && !(kinds & (1u << JP_KIND_CPU)); k++)
            if (kinds & (1u << k)) {
                o.kind = (jp_kind)k;
                break;
            }
    }
    if (!o.from_text && a->range != 1) {
        static char from[16];
        snprintf(from, sizeof from, "-%s", tui_range_names[a->range]);
        o.from_text = from;
    }
    jp_diff *d = NULL;
    static char cl[256], bl[256];
    int rc = tui_batch_server_diff_open(r, &o, false, &d, cl, bl, sizeof cl, stderr);
    if (!d)
        return rc;
    jfr_report rep;
    jfr_report_init(&rep);
    rep.start_ns = d->prof->start_ns;
    rep.end_ns = d->prof->end_ns;
    tui_flame_view *v = tui_flame_view_new(d->prof, &rep, cl, d->kind, false, false);
    tui_flame_view_set_diff(v, d, bl);
    jp_error serr;
    jp_error_init(&serr);
    jp_err src = tui_terminal_run(v, &serr);
    tui_flame_view_free(v);
    jp_diff_free(d);
    if (src != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", serr.msg);
        return TUI_EXIT_ERROR;
    }
    return TUI_EXIT_OK;
}
/* Through kubectl: one pod opens at once; several, the list first (a pod
 * named with --pod has no list). Freeing the view says bye: the probe
 * stops its recording, removes itself. */
int tui_interactive_kubectl(const tui_args *a, const kube_opts *ko, jp_pod_list *pods,
                            const tui_target_opts *o)
{
    tui_target *l = NULL;
    if (pods->count == 1) {
        jp_error err;
        jp_error_init(&err);
        if (tui_kubectl_open(ko, pods->items[0].name, a->container, &pods->items[0], o, &l, &err) !=
            JP_OK) {
            fprintf(stderr, "jprof-top: %s\n", err.msg);
            return tui_exit_status_kubectl(&err);
        }
    }
    tui_picker *pk = a->ro.svc ? tui_picker_kubectl(ko, a->ro.svc, a->container, pods) : NULL;
    tui_screens *v = tui_screens_new_with(l, pk, o);
    if (l)
        tui_screens_tick(v); /* the first snapshot before the first screen */
    if (l && a->screen)
        tui_screens_key(v, "TLDFSGH"[a->screen]);
    return tui_interactive_live_view(v, "the pod");
}
