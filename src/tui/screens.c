/* screens.c - the screens' manager: one target and the screens that show
 * it (screens.h), the key routing (the help, the picker, the prompt, the
 * screen keys, then the screen shown), the timed work (a snapshot every
 * interval, a window while Flame or GC is shown), and the rows around every
 * screen (title, numbers, tabs, status, keys). Each screen is a file of its
 * own: screen_threads.c, screen_text.c, screen_flame.c, screen_picker.c. */
#include "tui/screens.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/units.h"
#include "tui/recording.h"
#include "tui/report_gc.h"
#include "tui/screens_int.h"
#include "tui/source_pid.h"

/* The first CPU% comes sooner than a long interval: half a second after
 * the first snapshot, so the first screen is useful at once. */
#define FIRST_DELTA_NS (JP_NS_PER_SEC / 2)

void tui_screens_message(tui_screens *v, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(v->msg, sizeof v->msg, fmt, ap);
    va_end(ap);
    v->msg_error = error;
}

static tui_screens *view_new(tui_target *live, tui_picker *picker, const tui_target_opts *opts)
{
    tui_screens *v = jp_xcalloc(1, sizeof *v);
    v->live = live;
    v->picker = picker;
    v->opts = *opts;
    v->rows = 24;
    v->cols = 80;
    v->sel_id = INT64_MIN;
    tui_lines_init(&v->lines);
    tui_pick_list_init(&v->picks);
    if (!live) {
        v->picking = true;
        tui_screen_picker_scan(v);
    } else {
        tui_screens_sync(v);
    }
    return v;
}

tui_screens *tui_screens_new(tui_target *live, const tui_target_opts *opts)
{
    return view_new(live, tui_picker_local(), opts);
}

tui_screens *tui_screens_new_with(tui_target *live, tui_picker *picker, const tui_target_opts *opts)
{
    return view_new(live, picker, opts);
}

void tui_screens_free(tui_screens *v)
{
    if (!v)
        return;
    tui_flame_view_free(v->flame);
    jp_diff_free(v->flame_diff);
    jp_profile_free(v->baseline);
    tui_target_free(v->live);
    tui_picker_free(v->picker);
    tui_pick_list_cleanup(&v->picks);
    tui_lines_cleanup(&v->lines);
    free(v->order);
    free(v->pct);
    free(v);
}

void tui_screens_resize(tui_screens *v, int rows, int cols)
{
    v->rows = rows < 1 ? 1 : rows;
    v->cols = cols < 1 ? 1 : cols;
    if (v->flame)
        tui_flame_view_resize(v->flame, v->rows - TUI_SCREENS_HEAD, v->cols);
}

int tui_screens_body_rows(const tui_screens *v)
{
    int h = v->rows - TUI_SCREENS_HEAD - TUI_SCREENS_FOOT;
    return h > 0 ? h : 0;
}

/* ---- threads: order, filter, selection ---- */

void tui_screens_sync(tui_screens *v)
{
    tui_screen_threads_build(v);
    tui_screen_text_build(v);
}

/* ---- timed work ---- */

static bool tick_refresh(tui_screens *v, int64_t now)
{
    if (v->exited || now < v->next_refresh)
        return false;
    jp_error err;
    jp_error_init(&err);
    jp_err rc = tui_target_refresh(v->live, &err);
    bool first = v->live->nrefresh == 1;
    v->next_refresh = now + (first && v->opts.interval_ns > FIRST_DELTA_NS ? FIRST_DELTA_NS
                                                                           : v->opts.interval_ns);
    if (rc != JP_OK) {
        if (rc == JP_ERR_EXITED) { /* the source says the target is gone */
            v->exited = true;
            tui_screens_message(v, true, "the JVM has exited; showing its last snapshot (q quits)");
        } else if (v->live->profiles_only && rc == JP_ERR_NOT_FOUND) {
            /* pushed profiles have no threads: said on the screens of threads only */
            if (v->screen < TUI_SCREEN_FLAME)
                tui_screens_message(v, false, "%s", err.msg);
        } else {
            tui_screens_message(v, true, "refresh failed: %s", err.msg);
        }
        return true;
    }
    tui_screens_sync(v);
    return true;
}

static bool tick_dump(tui_screens *v, int64_t now)
{
    if ((v->screen != TUI_SCREEN_FLAME && v->screen != TUI_SCREEN_GC) || v->stack ||
        !v->live->prof.running || v->exited || now < v->next_dump)
        return false;
    jp_error err;
    jp_error_init(&err);
    v->next_dump = now + v->opts.interval_ns;
    int64_t before = v->live->prof.dumped_mono;
    if (tui_target_prof_dump(v->live, &err) != JP_OK) {
        tui_screens_message(v, true, "profile window: %s", err.msg);
        return true;
    }
    if (v->live->prof.dumped_mono == before && v->flame)
        return false; /* unchanged */
    tui_screen_flame_rebuild(v);
    if (v->screen == TUI_SCREEN_GC)
        tui_screen_text_build(v);
    return true;
}

/* A class histogram now (r on the Heap screen, --heap-every): it pauses
 * the JVM, so never otherwise. */
static void take_heap(tui_screens *v)
{
    jp_error err;
    jp_error_init(&err);
    v->live->opts.heap_all = v->opts.heap_all;
    if (tui_target_heap(v->live, &err) != JP_OK)
        tui_screens_message(v, true, "%s", v->live->histograms.error);
    if (v->screen == TUI_SCREEN_HEAP)
        tui_screen_text_build(v);
}

static bool tick_heap(tui_screens *v, int64_t now)
{
    if (!v->opts.heap_every_ns || v->exited || now < v->next_heap)
        return false;
    v->next_heap = now + v->opts.heap_every_ns;
    take_heap(v);
    return true;
}

bool tui_screens_tick(tui_screens *v)
{
    int64_t now = jp_time_mono_ns();
    if (v->paused)
        return false;
    if (v->picking) {
        if (now < v->next_list)
            return false;
        tui_screen_picker_scan(v);
        return true;
    }
    if (!v->live)
        return false;
    bool changed = tick_refresh(v, now);
    if (tick_dump(v, now))
        changed = true;
    if (tick_heap(v, now))
        changed = true;
    return changed;
}

/* ---- keys ---- */

static void set_screen(tui_screens *v, tui_screen_id s)
{
    v->stack = false;
    v->screen = s;
    if (s == TUI_SCREEN_FLAME || s == TUI_SCREEN_GC)
        tui_screen_flame_enter(v);
    /* stored histograms (the server's) are read on entering: nothing pauses */
    if (s == TUI_SCREEN_HEAP && v->live && v->live->ops->heap && v->live->ops->heap_stored)
        take_heap(v);
    tui_screen_text_build(v);
}

/* The Heap screen's own keys: r takes a histogram (or reads the stored
 * ones again), a switches -all. */
static bool heap_key(tui_screens *v, int key)
{
    if (v->screen != TUI_SCREEN_HEAP || v->stack)
        return false;
    if (key == 'r') {
        tui_screens_message(v, false, "%s",
                            v->live->ops->heap_stored
                                ? "reading the stored class histograms"
                                : "class histogram: the JVM is paused while it walks the heap...");
        take_heap(v);
        if (!v->live->histograms.error[0]) {
            char took[32];
            jp_format_ns((uint64_t)v->live->histograms.latest.took_ns, took, sizeof took);
            tui_screens_message(v, false, "class histogram %u: it paused the JVM %s",
                                v->live->histograms.count, took);
        }
        return true;
    }
    if (key == 'a') {
        v->opts.heap_all = !v->opts.heap_all;
        tui_screens_message(v, false, "%s",
                            v->opts.heap_all ? "-all: every object, no full GC (r takes one)"
                                             : "live objects only, a full GC first (r takes one)");
        tui_screen_text_build(v);
        return true;
    }
    return false;
}

static bool screen_key(tui_screens *v, int key)
{
    switch (key) {
    case TUI_KEY_F5:
    case 'T':
        set_screen(v, TUI_SCREEN_THREADS);
        return true;
    case TUI_KEY_F6:
    case 'L':
        set_screen(v, TUI_SCREEN_LOCKS);
        return true;
    case TUI_KEY_F7:
    case 'D':
        set_screen(v, TUI_SCREEN_DEADLOCKS);
        return true;
    case TUI_KEY_F8:
    case 'F':
        set_screen(v, TUI_SCREEN_FLAME);
        return true;
    case TUI_KEY_F9:
    case 'S':
        set_screen(v, TUI_SCREEN_STATUS);
        return true;
    case 'G':
        set_screen(v, TUI_SCREEN_GC);
        return true;
    case 'H':
        set_screen(v, TUI_SCREEN_HEAP);
        return true;
    default:
        return false;
    }
}

/* o: back to the list the target was opened from (its recording stops) */
static tui_action back_to_list(tui_screens *v)
{
    if (!v->picker) {
        tui_screens_message(v, false, "no list to go back to (this target was named)");
        return TUI_ACTION_REDRAW;
    }
    tui_flame_view_free(v->flame);
    v->flame = NULL;
    jp_diff_free(v->flame_diff);
    v->flame_diff = NULL;
    jp_profile_free(v->baseline); /* a window of another JVM is no baseline */
    v->baseline = NULL;
    tui_target_free(v->live);
    v->live = NULL;
    v->exited = v->paused = v->stack = false;
    v->screen = TUI_SCREEN_THREADS;
    v->norder = 0;
    tui_lines_reset(&v->lines);
    v->picking = true;
    tui_screen_picker_scan(v);
    return TUI_ACTION_REDRAW;
}

tui_action tui_screens_key(tui_screens *v, int key)
{
    if (v->help) {
        v->help = false;
        return TUI_ACTION_REDRAW;
    }
    if (key == TUI_KEY_RESIZE)
        return TUI_ACTION_REDRAW;
    if (v->picking)
        return tui_screen_picker_key(v, key);
    if (v->prompt)
        return tui_screen_threads_prompt_key(v, key);
    v->msg[0] = '\0';
    if (screen_key(v, key) || heap_key(v, key))
        return TUI_ACTION_REDRAW;
    if (key == 'o')
        return back_to_list(v);
    if (key == 'R') { /* everything again now: snapshot and window */
        v->next_refresh = v->next_dump = 0;
        tui_screens_message(v, false, "reading again");
        return TUI_ACTION_REDRAW;
    }
    if (key == 'p' || key == 'P') {
        v->paused = !v->paused;
        tui_screens_message(v, false, "%s",
                            v->paused ? "paused: p resumes the refresh" : "refreshing again");
        if (v->flame)
            tui_flame_view_message(v->flame, false, "%s",
                                   v->paused ? "paused: p resumes the refresh"
                                             : "refreshing again");
        return TUI_ACTION_REDRAW;
    }
    /* the server's range and pod keys scope its GC screen too */
    if (v->screen == TUI_SCREEN_GC && !v->stack && v->live->ops->gc &&
        tui_screen_flame_source_key(v, key)) {
        tui_screen_text_build(v);
        return TUI_ACTION_REDRAW;
    }
    if (v->screen == TUI_SCREEN_FLAME && !v->stack)
        return tui_screen_flame_key(v, key);
    tui_action a = TUI_ACTION_NONE;
    if (v->stack || v->screen != TUI_SCREEN_THREADS)
        a = tui_screen_text_key(v, key);
    else
        a = tui_screen_threads_key(v, key);
    if (a != TUI_ACTION_NONE)
        return a;
    switch (key) {
    case 'q':
    case TUI_KEY_F10:
        return TUI_ACTION_QUIT;
    case '?':
    case 'h':
    case TUI_KEY_F1:
        v->help = true;
        return TUI_ACTION_REDRAW;
    case 'r':
        v->next_refresh = 0; /* refresh now */
        return TUI_ACTION_REDRAW;
    default:
        return TUI_ACTION_NONE;
    }
}

/* ---- drawing: the rows around every screen, then the screen shown ---- */

static const char *const screen_names[TUI_SCREEN_COUNT] = {"Threads", "Locks", "Deadlocks", "Flame",
                                                           "Status",  "GC",    "Heap"};
static const char *const screen_keys[TUI_SCREEN_COUNT] = {"F5", "F6", "F7", "F8", "F9", "G", "H"};

static void title_row(const tui_screens *v, tui_canvas *c)
{
    const tui_target *l = v->live;
    tui_canvas_fill(c, 0, 0, c->cols, ' ', TUI_STYLE_TITLE, 0);
    char up[32];
    tui_format_uptime(l->cur && l->cur->uptime_ns >= 0 ? l->cur->uptime_ns : l->proc.uptime_ns, up,
                      sizeof up);
    const char *src = l->snap.source == JVM_SNAP_THREAD_PRINT ? "thread-print" : "helper";
    if (l->cur)
        src = l->cur->source;
    else if (l->source_label[0])
        src = l->source_label;
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

typedef struct keybar_key {
    const char *key, *label;
} keybar_key;

static const keybar_key thread_keys[] = {{"F1", "Help"},  {"Enter", "Stack"}, {"s", "Sort"},
                                         {"/", "Filter"}, {"F5", "Thr"},      {"F6", "Locks"},
                                         {"F7", "Dead"},  {"F8", "Flame"},    {"q", "Quit"}},
                        text_keys[] = {{"F1", "Help"},    {"Up/Dn", "Scroll"}, {"Esc", "Back"},
                                       {"F5", "Threads"}, {"F6", "Locks"},     {"F7", "Deadlocks"},
                                       {"F8", "Flame"},   {"q", "Quit"}},
                        heap_keys[] = {{"F1", "Help"},    {"r", "Histogram (pauses the JVM)"},
                                       {"a", "-all"},     {"Up/Dn", "Scroll"},
                                       {"F5", "Threads"}, {"G", "GC"},
                                       {"q", "Quit"}};

static void keybar(const tui_screens *v, tui_canvas *c, int row)
{
    bool th = v->screen == TUI_SCREEN_THREADS && !v->stack;
    bool hp = v->screen == TUI_SCREEN_HEAP && !v->stack;
    const keybar_key *keys = th ? thread_keys : hp ? heap_keys : text_keys;
    size_t n = th   ? sizeof thread_keys / sizeof thread_keys[0]
               : hp ? sizeof heap_keys / sizeof heap_keys[0]
                    : sizeof text_keys / sizeof text_keys[0];
    int x = 0;
    for (size_t i = 0; i < n && x < c->cols; i++) {
        x += tui_canvas_puts(c, row, x, keys[i].key, TUI_STYLE_KEY, TUI_F_BOLD);
        x += tui_canvas_puts(c, row, x, keys[i].label, TUI_STYLE_KEYLABEL, 0);
        x += tui_canvas_puts(c, row, x, " ", TUI_STYLE_NORMAL, 0);
    }
}

void tui_screens_status_row(const tui_screens *v, tui_canvas *c, int row)
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
    "  H            Heap: class histograms (what is on the heap by class) and what",
    "               grows between the first and the latest; r takes one - it PAUSES",
    "               the JVM (a full GC and a heap walk; a: -all, no GC), so never",
    "               by itself (--heap-every asks for one every N); from jprof-server",
    "               what the agent stored (jprof.io/heap-histogram windows)",
    "",
    "Threads:  Up/Down/PgUp/PgDn/Home/End move; Enter shows the stack (Esc back)",
    "          s sorts by CPU%, total CPU, state, name; / or F4 filter by",
    "          name or state (Enter applies, empty clears; Esc clears)",
    "Locks, Deadlocks, Status, GC, Heap, stacks:  Up/Down/PgUp/PgDn/Home/End scroll",
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
        tui_screen_picker_render(v, c);
        return;
    }
    title_row(v, c);
    if (c->rows > 1)
        numbers_row(v, c);
    if (c->rows > 2)
        tabs_row(v, c);
    if (v->screen == TUI_SCREEN_FLAME && !v->stack) {
        tui_screen_flame_render(v, c, TUI_SCREENS_HEAD);
        /* over the flame graph only a failed window read: the graph is stale */
        bool stale = v->live->prof.error.code != JP_OK;
        if (v->msg[0] && (!v->flame || stale) && c->rows > TUI_SCREENS_HEAD + 1)
            tui_screens_status_row(v, c, c->rows - 2);
        return;
    }
    int h = c->rows - TUI_SCREENS_HEAD - 2;
    if (h > 0) {
        if (v->screen == TUI_SCREEN_THREADS && !v->stack)
            tui_screen_threads_render(v, c, TUI_SCREENS_HEAD, h);
        else
            tui_screen_text_render(v, c, TUI_SCREENS_HEAD, h);
    }
    if (c->rows > TUI_SCREENS_HEAD + 1) {
        tui_screens_status_row(v, c, c->rows - 2);
        keybar(v, c, c->rows - 1);
    }
}
