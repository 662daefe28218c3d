/* screen_flame.c - the Flame screen: starts the source's recording when
 * it opens, shows each new window in a flame view (flame_view.h, which
 * carries the zoom, selection and search over), keeps a window as the baseline (B)
 * to compare later ones with, and lets the source handle its own keys (the
 * server's range and pods). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "model/units.h"
#include "tui/recording.h"
#include "tui/screens_int.h"

/* The flame view of the window (or of `want` when >= 0, a kind asked for
 * while comparing); with a baseline kept (B), the window compared with it. */
static void flame_rebuild_as(tui_screens *v, int want)
{
    tui_target_prof *p = &v->live->prof;
    if (!p->profile)
        return;
    tui_flame_view *old = v->flame;
    jp_diff *old_diff = v->flame_diff;
    v->flame = NULL;
    v->flame_diff = NULL;
    if (old) {
        v->flame_kind = old->kind;
        v->flame_by_value = old->by_value;
        v->flame_threads = old->threads;
    }
    if (old_diff)
        v->base_norm = old_diff->norm; /* m carries over to the next window */
    if (want >= 0)
        v->flame_kind = (jp_kind)want;
    jp_kind k = JP_KIND_CPU;
    tui_kind_default(p->profile, &k);
    if (v->flame_kind_set && (jp_profile_has_kind(p->profile, v->flame_kind) ||
                              (v->baseline && jp_profile_has_kind(v->baseline, v->flame_kind))))
        k = v->flame_kind;
    tui_target_prof_label(v->live, v->flame_label, sizeof v->flame_label);
    const char *problem = NULL;
    jp_error err;
    jp_error_init(&err);
    if (v->baseline && jp_diff_new(v->baseline, p->profile, k, v->flame_threads, v->flame_by_value,
                                   v->base_norm, &v->flame_diff, &err) != JP_OK) {
        v->flame_diff = NULL;
        problem = err.msg;
    }
    v->flame = tui_flame_view_new(v->flame_diff ? v->flame_diff->prof : p->profile, &p->rep,
                                  v->flame_label, k, v->flame_by_value, v->flame_threads);
    if (v->flame_diff)
        tui_flame_view_set_diff(v->flame, v->flame_diff, v->base_label);
    else
        tui_flame_view_set_io(v->flame, p->io);
    v->flame_kind_set = true;
    v->flame_kind = k;
    tui_flame_view_resize(v->flame, v->rows - TUI_SCREENS_HEAD, v->cols);
    if (old) {
        tui_flame_view_carry(v->flame, old);
        /* the old view borrowed the previous window's profile: free it now */
        tui_flame_view_free(old);
    }
    jp_diff_free(old_diff);
    if (problem)
        tui_flame_view_message(v->flame, true, "not compared with the baseline: %s", problem);
}

void tui_screen_flame_rebuild(tui_screens *v)
{
    flame_rebuild_as(v, -1);
}

/* B: the window shown becomes the baseline (a copy), and every later
 * window is drawn compared with it: the same differential view as
 * --jfr NEW --diff OLD, for any source (a pid, a pod, the server). B again
 * drops it. */
static void baseline_toggle(tui_screens *v)
{
    tui_target_prof *p = &v->live->prof;
    if (v->baseline) {
        jp_profile_free(v->baseline);
        v->baseline = NULL;
        tui_screen_flame_rebuild(v);
        tui_flame_view_message(v->flame, false, "baseline dropped: the window alone again");
        return;
    }
    if (!p->profile || !v->flame) {
        tui_screens_message(v, true, "no window yet to keep as the baseline");
        return;
    }
    v->baseline = jp_profile_new();
    jp_profile_merge(v->baseline, p->profile);
    v->baseline->start_ns = p->rep.start_ns;
    v->baseline->end_ns = p->rep.end_ns;
    char t[48] = "?";
    jp_rfc3339_format(p->rep.start_ns, t, sizeof t);
    char span[32] = "?";
    jp_format_ns(p->rep.end_ns > p->rep.start_ns ? (uint64_t)(p->rep.end_ns - p->rep.start_ns) : 0,
                 span, sizeof span);
    /* "baseline 17:21:05Z+10 s": the title has little room */
    snprintf(v->base_label, sizeof v->base_label, "baseline %.8sZ+%s", strlen(t) >= 19 ? t + 11 : t,
             span);
    v->base_norm = JP_DIFF_PER_SAMPLE;
    tui_screen_flame_rebuild(v);
    tui_flame_view_message(v->flame, false,
                           "baseline kept (%s): later windows are compared with it; m normalises, "
                           "B drops it",
                           v->base_label);
}

/* With a baseline, kind keys 1-9 and 0 build the comparison of that kind
 * (the comparison's own profile holds one kind only). */
static bool baseline_kind_key(tui_screens *v, int key)
{
    int k = key >= '1' && key <= '9' ? key - '1' : key == '0' ? (int)JP_KIND_IO : -1;
    if (!v->baseline || k < 0 || k >= JP_KIND_COUNT)
        return false;
    if (!jp_profile_has_kind(v->live->prof.profile, (jp_kind)k) &&
        !jp_profile_has_kind(v->baseline, (jp_kind)k)) {
        tui_flame_view_message(v->flame, true, "no %s events in the window nor in the baseline",
                               jp_kind_name((jp_kind)k));
        return true;
    }
    flame_rebuild_as(v, k);
    tui_flame_view_message(v->flame, false, "comparing %s", jp_kind_name((jp_kind)k));
    return true;
}

void tui_screen_flame_enter(tui_screens *v)
{
    if (!v->live || v->live->prof.running)
        return;
    jp_error err;
    jp_error_init(&err);
    if (tui_target_prof_start(v->live, &err) != JP_OK) {
        tui_screens_message(v, true, "%s", err.msg);
        return;
    }
    const tui_source_ops *ops = v->live->ops;
    if (!ops->prof_engine) { /* the server: the agents recorded it, read it now */
        v->next_dump = 0;
        tui_screens_message(v, false, "reading the flame graph from jprof-server");
        return;
    }
    /* the first window after one interval, later ones every interval */
    v->next_dump = jp_time_mono_ns() + v->opts.interval_ns;
    tui_screens_message(v, false, "recording started (%s); first window in %.0f s",
                        ops->prof_engine(v->live), (double)v->opts.interval_ns / 1e9);
}

/* Flame keys a source handles itself (the server's range and pod scope):
 * the window is read again at once. */
bool tui_screen_flame_source_key(tui_screens *v, int key)
{
    const tui_source_ops *ops = v->live->ops;
    char msg[200] = "";
    bool changed = ops->flame_key && ops->flame_key(v->live, key, msg, sizeof msg);
    if (!changed && !msg[0])
        return false; /* not the source's key */
    tui_screens_message(v, false, "%s", msg);
    if (v->flame)
        tui_flame_view_message(v->flame, false, changed ? "%s (reading)" : "%s", msg);
    if (changed)
        v->next_dump = 0;
    return true;
}

/* Why there is no flame graph, folded at spaces into lines of the screen's
 * width from `row` on (above the status row and key bar): the message
 * names what the user must act on, often a path, which one line of a
 * narrow terminal (or a long path) would cut off. */
static void render_folded(tui_canvas *c, int row, const char *s, tui_style style)
{
    int width = c->cols - 4 > 20 ? c->cols - 4 : c->cols;
    while (*s && row < c->rows - 2) {
        size_t n = strlen(s);
        if (n > (size_t)width) {
            n = (size_t)width;
            while (n > 0 && s[n] != ' ')
                n--;
            if (n == 0)
                n = (size_t)width; /* one word longer than the line: cut it */
        }
        tui_canvas_text(c, row++, 2, s, n, width, style, TUI_F_BOLD);
        s += n;
        while (*s == ' ')
            s++;
    }
}

void tui_screen_flame_render(tui_screens *v, tui_canvas *c, int top)
{
    const tui_target_prof *p = &v->live->prof;
    if (!v->flame) {
        int row = top + (c->rows - top) / 2 - 1;
        if (p->error.code != JP_OK)
            render_folded(c, row, p->error.msg, TUI_STYLE_WARN);
        else if (p->running && !v->live->ops->prof_engine) /* stored already */
            tui_canvas_printf(c, row, 2, TUI_STYLE_DIM, 0,
                              "reading the flame graph from jprof-server");
        else if (p->running)
            tui_canvas_printf(c, row, 2, TUI_STYLE_DIM, 0,
                              "recording a %.0f s window with %s; the first flame graph comes "
                              "after %.3g s",
                              (double)v->opts.window_ns / 1e9, v->live->ops->prof_engine(v->live),
                              (double)v->opts.interval_ns / 1e9);
        return;
    }
    tui_canvas sub;
    tui_canvas_init(&sub, 1, 1);
    tui_flame_view_update(v->flame);
    tui_flame_view_render(v->flame, &sub);
    for (int r = 0; r < sub.rows && top + r < c->rows; r++)
        for (int x = 0; x < sub.cols && x < c->cols; x++)
            *tui_canvas_at(c, top + r, x) = *tui_canvas_at(&sub, r, x);
    tui_canvas_cleanup(&sub);
}

tui_action tui_screen_flame_key(tui_screens *v, int key)
{
    if (tui_screen_flame_source_key(v, key))
        return TUI_ACTION_REDRAW;
    if (!v->flame) {
        if (key == 'q' || key == TUI_KEY_F10)
            return TUI_ACTION_QUIT;
        return TUI_ACTION_NONE;
    }
    if (key == 'B' && !v->flame->prompt && !v->flame->help && !v->flame->gc) {
        baseline_toggle(v);
        return TUI_ACTION_REDRAW;
    }
    if (!v->flame->prompt && !v->flame->help && !v->flame->gc && baseline_kind_key(v, key))
        return TUI_ACTION_REDRAW;
    tui_action a = tui_flame_view_key(v->flame, key);
    v->flame_kind = v->flame->kind;
    return a;
}
