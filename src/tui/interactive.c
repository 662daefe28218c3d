#include "tui/interactive.h"

#include <stdio.h>

#include "jvm/cleanup.h"
#include "tui/app_common.h"
#include "tui/report_profile.h"
#include "tui/batch.h"
#include "tui/screens.h"
#include "tui/terminal.h"
#include "tui/flame_view.h"

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

TUI_APP_CALLBACKS(tui_screens)

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
        return tui_target_exit_status(err.code);
    }
    tui_screens *v = tui_screens_new(l, &o);
    if (l)
        tui_screens_tick(v); /* the first snapshot before the first screen */
    return tui_interactive_live_view(v, "the target");
}

int tui_interactive_live_view(tui_screens *v, const char *where)
{
    tui_app app = TUI_APP_INIT(tui_screens, v, 100);
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
