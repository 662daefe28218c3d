#include "tui/interactive.h"

#include <stdio.h>
#include <unistd.h>

#include "tui/batch.h"
#include "tui/screen.h"
#include "tui/view.h"

int tui_interactive_run(const tui_args *a)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fputs("jprof-top: the interactive view needs a terminal; use -b for batch output\n",
              stderr);
        return TUI_EXIT_USAGE;
    }
    jp_error err, serr;
    jp_error_init(&err);
    jp_error_init(&serr);
    jfr_report rep;
    jp_profile *p = NULL;
    /* Every kind, with threads, so kind and thread switches need no re-read. */
    tui_load_status st = tui_load_jfr(a, 0, true, &p, &rep, &err);
    if (st == TUI_LOAD_FAILED) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        return TUI_EXIT_ERROR;
    }
    jp_kind k = JP_KIND_CPU;
    bool have_default = tui_kind_default(p, &k);
    if (a->has_kind && jp_profile_has_kind(p, a->kind))
        k = a->kind;
    tui_view *v = tui_view_new(p, &rep, a->jfr_path, k, a->by_value, a->threads);
    if (a->has_kind && k != a->kind)
        tui_view_message(v, true, "no %s events in this recording; showing %s",
                         jp_kind_name(a->kind), jp_kind_name(k));
    else if (!have_default)
        tui_view_message(v, true, "no profile events in this recording");
    if (st == TUI_LOAD_PARTIAL)
        tui_view_message(v, true, "PARTIAL: %s", err.msg);
    jp_err rc = tui_screen_run(v, &serr);
    tui_view_free(v);
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
