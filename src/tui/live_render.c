/* live_render.c - drawing the live screens (live_view.h) into a canvas. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/timeutil.h"
#include "model/units.h"
#include "tui/screens.h"

#define HEAD_ROWS 3

static const char *const screen_names[TUI_SCREEN_COUNT] = {"Threads", "Locks",  "Deadlocks",
                                                           "Flame",   "Status", "GC"};
static const char *const screen_keys[TUI_SCREEN_COUNT] = {"F5", "F6", "F7", "F8", "F9", "G"};
static const char *const sort_names[TUI_SORT_COUNT] = {"CPU%", "total CPU", "state", "name"};

static void title_row(const tui_screens *v, tui_canvas *c)
{
    const tui_target *l = v->live;
    tui_canvas_fill(c, 0, 0, c->cols, ' ', TUI_STYLE_TITLE, 0);
    char up[32];
    tui_format_uptime(l->cur && l->cur->uptime_ns >= 0 ? l->cur->uptime_ns : l->proc.uptime_ns, up,
                      sizeof up);
    const char *src = l->cur
                          ? l->cur->source
                          : (l->snap.source == JVM_SNAP_THREAD_PRINT ? "thread-print" : "helper");
    int x = tui_canvas_printf(c, 0, 0, TUI_STYLE_TITLE, TUI_F_BOLD, "jprof-top  %s%spid %d %s",
                              l->where, l->where[0] ? " " : "", (int)l->proc.pid,
                              l->proc.main_class[0] ? l->proc.main_class : "(unknown)");
    x += tui_canvas_printf(c, 0, x, TUI_STYLE_TITLE, 0, "  %s  up %s  source: %s%s  every %.3gs",
                           l->jvm_version[0] ? l->jvm_version : "JVM ?", up, src,
                           l->fallback.code != JP_OK ? " (helper refused)" : "",
                           (double)v->opts.interval_ns / 1e9);
    if (v->exited)
        tui_canvas_puts(c, 0, x, "  EXITED", TUI_STYLE_WARN, TUI_F_BOLD);
    else if (v->paused)
        tui_canvas_puts(c, 0, x, "  PAUSED", TUI_STYLE_WARN, TUI_F_BOLD);
}

static void numbers_row(const tui_screens *v, tui_canvas *c)
{
    const tui_target *l = v->live;
    static const char *const abbrev[JP_TSTATE_COUNT] = {"vm",   "new",   "run", "blocked",
                                                        "wait", "timed", "term"};
    int x = 0;
    size_t total = l->cur ? l->cur->count : 0;
    x += tui_canvas_printf(c, 1, x, TUI_STYLE_NORMAL, TUI_F_BOLD, "Threads %zu:", total);
    for (int s = 1; s <= JP_TSTATE_COUNT; s++) {
        int st = s % JP_TSTATE_COUNT; /* VM-internal last */
        if (!l->states[st])
            continue;
        x += tui_canvas_printf(c, 1, x, st == JP_TSTATE_BLOCKED ? TUI_STYLE_WARN : TUI_STYLE_NORMAL,
                               0, " %s %zu", abbrev[st], l->states[st]);
    }
    char cpu[32] = "?";
    if (l->proc_cpu_pct >= 0)
        snprintf(cpu, sizeof cpu, "%.0f%%", l->proc_cpu_pct);
    x += tui_canvas_printf(c, 1, x, TUI_STYLE_NORMAL, 0, "  CPU %s  heap %s  cost %.0f ms", cpu,
                           l->heap[0] ? l->heap : "?", l->cost_ms);
    if (v->screen == TUI_SCREEN_FLAME && l->prof.dumped_mono)
        tui_canvas_printf(c, 1, x, TUI_STYLE_NORMAL, 0, " + window %.0f ms", l->prof.cost_ms);
}

static void tabs_row(const tui_screens *v, tui_canvas *c)
{
    const tui_target *l = v->live;
    int x = 0;
    for (int s = 0; s < TUI_SCREEN_COUNT; s++) {
        bool active = (int)v->screen == s;
        char label[48];
        if (s == TUI_SCREEN_LOCKS && l->cur)
            snprintf(label, sizeof label, "%s(%zu)", screen_names[s], l->locks.ncontended);
        else if (s == TUI_SCREEN_DEADLOCKS && l->cur)
            snprintf(label, sizeof label, "%s(%zu)", screen_names[s], l->deadlocks.count);
        else if (s == TUI_SCREEN_FLAME && l->prof.running)
            snprintf(label, sizeof label, "%s(rec)", screen_names[s]);
        else
            snprintf(label, sizeof label, "%s", screen_names[s]);
        x += tui_canvas_puts(c, 2, x, screen_keys[s], TUI_STYLE_KEY, TUI_F_BOLD);
        bool lit = (s == TUI_SCREEN_DEADLOCKS && l->deadlocks.count) ||
                   (s == TUI_SCREEN_LOCKS && l->cur && l->locks.ncontended);
        tui_style st = active ? TUI_STYLE_ACTIVE : lit ? TUI_STYLE_WARN : TUI_STYLE_KEYLABEL;
        x += tui_canvas_puts(c, 2, x, label, st, active ? TUI_F_BOLD | TUI_F_UNDERLINE : 0);
        x += tui_canvas_puts(c, 2, x, " ", TUI_STYLE_NORMAL, 0);
    }
}

static void threads_render(const tui_screens *v, tui_canvas *c, int top, int h)
{
    const jp_snapshot *s = v->live->cur;
    tui_canvas_fill(c, top, 0, c->cols, ' ', TUI_STYLE_TABLEHEAD, 0);
    tui_canvas_printf(c, top, 0, TUI_STYLE_TABLEHEAD, TUI_F_BOLD, "%6s %9s %-13s %6s %-28s %s",
                      "CPU%", "CPU", "STATE", "BLOCKS", "THREAD", "TOP FRAME");
    char sorted[96];
    int sw = snprintf(sorted, sizeof sorted, "sort: %s%s%s ", sort_names[v->sort],
                      v->filter[0] ? "  filter: " : "", v->filter);
    if (sw > 0 && sw < c->cols / 2)
        tui_canvas_puts(c, top, c->cols - sw, sorted, TUI_STYLE_TABLEHEAD, TUI_F_BOLD);
    if (!s) {
        tui_canvas_puts(c, top + 1, 2, "taking the first snapshot...", TUI_STYLE_DIM, 0);
        return;
    }
    int rows = h - 1, first = 0;
    if (v->sel >= rows)
        first = v->sel - rows + 1;
    for (int r = 0; r < rows && (size_t)first + (size_t)r < v->norder; r++) {
        size_t i = v->order[first + r];
        const jp_thread *t = &s->threads[i];
        char pct[32] = "-", cpu[32] = "-", blocks[32] = "", frame[512] = "";
        if (v->pct[i] >= 0)
            snprintf(pct, sizeof pct, "%.1f", v->pct[i]);
        if (t->cpu_ns >= 0)
            jp_format_ns((uint64_t)t->cpu_ns, cpu, sizeof cpu);
        if (v->live->blocks && v->live->blocks[i])
            snprintf(blocks, sizeof blocks, "%zu", v->live->blocks[i]);
        if (t->nframes)
            jp_snap_frame_format(&t->frames[0], frame, sizeof frame);
        bool cursor = first + r == v->sel;
        unsigned fl = cursor ? TUI_F_REVERSE : 0;
        int row = top + 1 + r;
        if (cursor)
            tui_canvas_fill(c, row, 0, c->cols, ' ', TUI_STYLE_NORMAL, fl);
        tui_style st = t->state == JP_TSTATE_BLOCKED ? TUI_STYLE_WARN : TUI_STYLE_NORMAL;
        tui_canvas_printf(c, row, 0, st, fl, "%6s %9s %-13.13s %6s %-28.28s %s", pct, cpu,
                          t->vm_internal ? "(VM)" : jp_thread_state_name(t->state), blocks,
                          t->name ? t->name : "?", frame);
    }
    if (!v->norder)
        tui_canvas_printf(c, top + 1, 2, TUI_STYLE_DIM, 0, "no thread matches \"%s\"", v->filter);
}

static void text_render(const tui_screens *v, tui_canvas *c, int top, int h)
{
    int sc = v->scroll[v->stack ? TUI_SCREEN_THREADS : v->screen];
    for (int r = 0; r < h; r++) {
        size_t i = (size_t)sc + (size_t)r;
        if (i >= v->lines.count)
            break;
        const tui_line *ln = &v->lines.items[i];
        tui_canvas_puts(c, top + r, 0, ln->text, ln->style, ln->flags);
    }
    if (!v->live->cur)
        tui_canvas_puts(c, top, 2, "taking the first snapshot...", TUI_STYLE_DIM, 0);
}

static void flame_render(tui_screens *v, tui_canvas *c, int top)
{
    const tui_target_prof *p = &v->live->prof;
    if (!v->flame) {
        int row = top + (c->rows - top) / 2 - 1;
        if (p->error.code != JP_OK)
            tui_canvas_printf(c, row, 2, TUI_STYLE_WARN, TUI_F_BOLD, "%s", p->error.msg);
        else if (p->running)
            tui_canvas_printf(c, row, 2, TUI_STYLE_DIM, 0,
                              "recording a %.0f s window with %s; the first flame graph comes "
                              "after %.3g s",
                              (double)v->opts.window_ns / 1e9, tui_target_prof_engine(v->live),
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

static const struct {
    const char *key, *label;
} thread_keys[] = {{"F1", "Help"},  {"Enter", "Stack"}, {"s", "Sort"},
                   {"/", "Filter"}, {"F5", "Thr"},      {"F6", "Locks"},
                   {"F7", "Dead"},  {"F8", "Flame"},    {"q", "Quit"}},
  text_keys[] = {{"F1", "Help"},  {"Up/Dn", "Scroll"}, {"Esc", "Back"}, {"F5", "Threads"},
                 {"F6", "Locks"}, {"F7", "Deadlocks"}, {"F8", "Flame"}, {"q", "Quit"}};

static void keybar(const tui_screens *v, tui_canvas *c, int row)
{
    bool th = v->screen == TUI_SCREEN_THREADS && !v->stack;
    size_t n =
        th ? sizeof thread_keys / sizeof thread_keys[0] : sizeof text_keys / sizeof text_keys[0];
    int x = 0;
    for (size_t i = 0; i < n && x < c->cols; i++) {
        x += tui_canvas_puts(c, row, x, th ? thread_keys[i].key : text_keys[i].key, TUI_STYLE_KEY,
                             TUI_F_BOLD);
        x += tui_canvas_puts(c, row, x, th ? thread_keys[i].label : text_keys[i].label,
                             TUI_STYLE_KEYLABEL, 0);
        x += tui_canvas_puts(c, row, x, " ", TUI_STYLE_NORMAL, 0);
    }
}

static void status(const tui_screens *v, tui_canvas *c, int row)
{
    if (v->prompt) {
        int x =
            tui_canvas_puts(c, row, 0, "Filter (name or state): ", TUI_STYLE_ACTIVE, TUI_F_BOLD);
        x += tui_canvas_text(c, row, x, v->input, v->input_len, -1, TUI_STYLE_NORMAL, 0);
        tui_canvas_fill(c, row, x, 1, ' ', TUI_STYLE_NORMAL, TUI_F_REVERSE);
    } else if (v->msg[0]) {
        tui_canvas_puts(c, row, 0, v->msg, v->msg_error ? TUI_STYLE_WARN : TUI_STYLE_ACTIVE,
                        TUI_F_BOLD);
    } else if (v->live && v->live->fallback.code != JP_OK) {
        tui_canvas_printf(c, row, 0, TUI_STYLE_DIM, 0, "helper not used: %s",
                          v->live->fallback.msg);
    } else if (v->stack) {
        tui_canvas_printf(c, row, 0, TUI_STYLE_DIM, 0, "stack of \"%s\" (Esc: back)",
                          v->stack_name);
    }
}

static const char *const help_lines[] = {
    "jprof-top: one JVM - on this machine (-p), in a pod (kubectl), or from jprof-server",
    "",
    "  F5 or T      Threads: busiest first (CPU% since the last refresh, or of",
    "               the Flame window when that is fresher)",
    "  F6 or L      Locks: contended locks (BLOCKED, or parked on an owned lock),",
    "               owner chains; idle pool workers one line per pool (i: names)",
    "  F7 or D      Deadlocks: each cycle, where each thread waits and what it holds",
    "  F8 or F      Flame: a live profile (rolling window); keys as in --jfr,",
    "               1-9 or k kind, / search, Enter zoom, r callers, ? its help;",
    "               from jprof-server: < > range (5m 15m 1h 6h 24h), a all pods;",
    "               B keeps the window shown as a baseline: later windows are",
    "               compared with it (red grew, blue shrank; m normalises; B drops)",
    "  F9 or S      Status: where the data comes from and what it costs",
    "  G            GC: pauses (count, total, p50/p99/max, the longest and why),",
    "               heap before/after, allocation rate, top allocators; from the",
    "               Flame screen's recording (G starts it too)",
    "",
    "Threads:  Up/Down/PgUp/PgDn/Home/End move; Enter shows the stack (Esc back)",
    "          s sorts by CPU%, total CPU, state, name; / or F4 filter by",
    "          name or state (Enter applies, empty clears; Esc clears)",
    "Locks, Deadlocks, Status, GC, stacks:  Up/Down/PgUp/PgDn/Home/End scroll",
    "",
    "  r refresh now   R read all again   p pause/resume   o back to the list",
    "  ?, F1 this help   q, F10 quit",
    "",
    "The header: JVM version and uptime, snapshot source, thread counts by",
    "state, process CPU (% of one core), heap used of committed, and what one",
    "refresh cost jprof (attach and parse).",
    "",
    "Press any key to return.",
};

static void picker_render(const tui_screens *v, tui_canvas *c)
{
    tui_canvas_fill(c, 0, 0, c->cols, ' ', TUI_STYLE_TITLE, 0);
    const tui_picker *pk = v->picker;
    tui_canvas_printf(c, 0, 0, TUI_STYLE_TITLE, TUI_F_BOLD, "jprof-top: %s (%zu)", pk->title,
                      v->picks.count);
    tui_canvas_fill(c, 1, 0, c->cols, ' ', TUI_STYLE_TABLEHEAD, 0);
    tui_canvas_puts(c, 1, 0, pk->head, TUI_STYLE_TABLEHEAD, TUI_F_BOLD);
    int h = c->rows - 4, first = v->pick_sel >= h && h > 0 ? v->pick_sel - h + 1 : 0;
    for (int r = 0; r < h && (size_t)first + (size_t)r < v->picks.count; r++) {
        const tui_pick_row *row = &v->picks.rows[first + r];
        unsigned fl = first + r == v->pick_sel ? TUI_F_REVERSE : 0;
        if (fl)
            tui_canvas_fill(c, 2 + r, 0, c->cols, ' ', TUI_STYLE_NORMAL, fl);
        tui_canvas_puts(c, 2 + r, 0, row->text, row->disabled ? TUI_STYLE_DIM : TUI_STYLE_NORMAL,
                        fl);
    }
    if (!v->picks.count)
        tui_canvas_puts(c, 3, 2, pk->empty, TUI_STYLE_DIM, 0);
    if (c->rows >= 4)
        status(v, c, c->rows - 2);
    int x = tui_canvas_puts(c, c->rows - 1, 0, "Enter", TUI_STYLE_KEY, TUI_F_BOLD);
    x += tui_canvas_puts(c, c->rows - 1, x, "Open", TUI_STYLE_KEYLABEL, 0);
    x += tui_canvas_puts(c, c->rows - 1, x, " q", TUI_STYLE_KEY, TUI_F_BOLD);
    tui_canvas_puts(c, c->rows - 1, x, "Quit", TUI_STYLE_KEYLABEL, 0);
}

void tui_screens_render(tui_screens *v, tui_canvas *c)
{
    tui_canvas_resize(c, v->rows, v->cols);
    if (v->help) {
        for (size_t i = 0; i < sizeof help_lines / sizeof help_lines[0]; i++)
            tui_canvas_puts(c, (int)i, 0, help_lines[i],
                            i == 0 ? TUI_STYLE_TITLE : TUI_STYLE_NORMAL, i == 0 ? TUI_F_BOLD : 0);
        return;
    }
    if (v->picking || !v->live) {
        picker_render(v, c);
        return;
    }
    title_row(v, c);
    if (c->rows > 1)
        numbers_row(v, c);
    if (c->rows > 2)
        tabs_row(v, c);
    if (v->screen == TUI_SCREEN_FLAME && !v->stack) {
        flame_render(v, c, HEAD_ROWS);
        /* over the flame graph only a failed window read: the graph is stale */
        bool stale = v->live->prof.error.code != JP_OK;
        if (v->msg[0] && (!v->flame || stale) && c->rows > HEAD_ROWS + 1)
            status(v, c, c->rows - 2);
        return;
    }
    int h = c->rows - HEAD_ROWS - 2;
    if (h > 0) {
        if (v->screen == TUI_SCREEN_THREADS && !v->stack)
            threads_render(v, c, HEAD_ROWS, h);
        else
            text_render(v, c, HEAD_ROWS, h);
    }
    if (c->rows > HEAD_ROWS + 1) {
        status(v, c, c->rows - 2);
        keybar(v, c, c->rows - 1);
    }
}
