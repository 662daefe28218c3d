/* screen_text.c - the text screens: Locks, Deadlocks, Status, GC and a
 * thread's stack, as lines of the reports (report_target.h, report_gc.h)
 * drawn with scrolling. */
#include <stdio.h>

#include "tui/report_gc.h"
#include "tui/report_heap.h"
#include "tui/report_target.h"
#include "tui/screens_int.h"

/* The Heap screen: the target's class histograms (report_heap.h); what the
 * keys do depends on whether the source takes them or the server stored
 * them. */
static void heap_build(tui_screens *v)
{
    const tui_target *l = v->live;
    char how[200];
    if (!l->ops->heap)
        snprintf(how, sizeof how, "the %s source has no class histograms", l->ops->name);
    else if (l->ops->heap_stored)
        snprintf(how, sizeof how, "%s",
                 "stored by the agent (jprof.io/heap-histogram windows) "
                 "over the Flame range; r reads again, < > the range");
    else
        snprintf(how, sizeof how, "r takes one now (pauses the JVM); a: -all is %s%s",
                 v->opts.heap_all ? "on (no full GC)" : "off (live objects, full GC first)",
                 v->opts.heap_every_ns ? "; one is taken every --heap-every" : "");
    tui_report_heap(&l->histograms, 50, how, &v->lines);
}

/* The GC screen reads the Flame screen's window (its recording has the GC
 * events: the JDK's profile settings, the agent's own settings). */
static void gc_build(tui_screens *v)
{
    const tui_target_prof *p = &v->live->prof;
    if (v->live->ops->gc) {
        char label[128];
        tui_target_prof_label(v->live, label, sizeof label);
        tui_lines_add(&v->lines, TUI_STYLE_DIM, 0, "window: %s", label);
        v->live->ops->gc(v->live, v->cols, &v->lines);
    } else if (p->profile) {
        char label[128];
        tui_target_prof_label(v->live, label, sizeof label);
        tui_lines_add(&v->lines, TUI_STYLE_DIM, 0, "window: %s", label);
        tui_report_gc(p->profile, v->cols, 10, &v->lines);
    } else if (p->running) {
        tui_lines_add(&v->lines, TUI_STYLE_DIM, 0,
                      "recording; the GC summary comes with the first window (%.0f s)",
                      (double)v->opts.interval_ns / 1e9);
    } else {
        tui_lines_add(&v->lines, TUI_STYLE_WARN, 0, "no recording: the GC screen needs one");
    }
}

void tui_screen_text_build(tui_screens *v)
{
    tui_lines_reset(&v->lines);
    if (!v->live || (!v->live->cur && v->screen != TUI_SCREEN_STATUS &&
                     v->screen != TUI_SCREEN_GC && v->screen != TUI_SCREEN_HEAP))
        return;
    if (v->stack) {
        const jp_snapshot *s = v->live->cur;
        long idx = -1;
        for (size_t i = 0; s && i < s->count && idx < 0; i++)
            if (tui_screen_thread_key(&s->threads[i]) == v->stack_id)
                idx = (long)i;
        if (idx >= 0)
            tui_report_stack(v->live, (size_t)idx, &v->lines);
        else
            tui_lines_add(&v->lines, TUI_STYLE_WARN, 0, "thread \"%s\" has ended", v->stack_name);
    } else if (v->screen == TUI_SCREEN_LOCKS) {
        tui_report_locks_idle(v->live, v->idle_expanded, &v->lines);
    } else if (v->screen == TUI_SCREEN_DEADLOCKS) {
        tui_report_deadlocks(v->live, &v->lines);
    } else if (v->screen == TUI_SCREEN_STATUS) {
        tui_report_status(v->live, &v->lines);
    } else if (v->screen == TUI_SCREEN_GC) {
        gc_build(v);
    } else if (v->screen == TUI_SCREEN_HEAP) {
        heap_build(v);
    }
}

/* Scrolling of the text screens (Locks, Deadlocks, a stack). */
tui_action tui_screen_text_key(tui_screens *v, int key)
{
    int *sc = &v->scroll[v->stack ? TUI_SCREEN_THREADS : v->screen];
    int h = tui_screens_body_rows(v), max = (int)v->lines.count - h;
    if (!tui_scroll_key(sc, key, h > 1 ? h - 1 : 1, max)) {
        switch (key) {
        case TUI_KEY_ESC:
        case TUI_KEY_BACKSPACE:
        case TUI_KEY_ENTER:
        case TUI_KEY_LEFT:
            if (!v->stack)
                return TUI_ACTION_NONE;
            v->stack = false;
            break;
        case 'i': /* the idle threads of each pool, by name */
            if (v->stack || v->screen != TUI_SCREEN_LOCKS)
                return TUI_ACTION_NONE;
            v->idle_expanded = !v->idle_expanded;
            tui_screen_text_build(v);
            break;
        default:
            return TUI_ACTION_NONE;
        }
    }
    if (*sc > max)
        *sc = max;
    if (*sc < 0)
        *sc = 0;
    return TUI_ACTION_REDRAW;
}

void tui_screen_text_render(const tui_screens *v, tui_canvas *c, int top, int h)
{
    int sc = v->scroll[v->stack ? TUI_SCREEN_THREADS : v->screen];
    for (int r = 0; r < h; r++) {
        size_t i = (size_t)sc + (size_t)r;
        if (i >= v->lines.count)
            break;
        const tui_line *ln = &v->lines.items[i];
        tui_canvas_puts(c, top + r, 0, ln->text, ln->style, ln->flags);
    }
    /* the Status screen of pushed profiles has its lines, no snapshot to wait for */
    if (!v->live->cur && !(v->live->profiles_only && v->screen == TUI_SCREEN_STATUS))
        tui_canvas_puts(c, top, 2, tui_target_no_snapshot(v->live), TUI_STYLE_DIM, 0);
}
