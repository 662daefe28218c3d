/* screens.h - jprof-top's screens of one target, whatever its source,
 * without a terminal.
 *
 * Like flame_view.h: state in, canvas out. Screens: the list a target is
 * opened from (a picker, source.h), Threads (busiest first, sortable,
 * filterable; Enter shows a thread's stack), Locks, Deadlocks, Flame (the
 * source's windows, drawn by the flame view), Status and GC.
 * tui_screens_tick() does the timed work (a snapshot every interval, a
 * profile window while Flame or GC is shown) and says when to redraw;
 * tui_screens_key() handles keys: the screen shown first, then the global
 * ones (F5-F9 / T L D F S G switch screens, q quits).
 *
 * Ownership: the screens own the tui_target they are given or open from
 * the list (tui_screens_free frees it, which stops its recording). Not
 * thread-safe. */
#ifndef JP_TUI_SCREENS_H
#define JP_TUI_SCREENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvm/proc.h"
#include "model/diff.h"
#include "tui/canvas.h"
#include "tui/flame_view.h"
#include "tui/report_target.h"
#include "tui/target.h"

typedef enum tui_screen_id {
    TUI_SCREEN_THREADS = 0,
    TUI_SCREEN_LOCKS,
    TUI_SCREEN_DEADLOCKS,
    TUI_SCREEN_FLAME,
    TUI_SCREEN_STATUS,
    TUI_SCREEN_GC,   /* G: pauses, heap, allocation rate of the Flame window */
    TUI_SCREEN_HEAP, /* H: class histograms and what grows (report_heap.h) */
    TUI_SCREEN_COUNT
} tui_screen_id;

typedef enum tui_thread_sort {
    TUI_SORT_CPU_PCT = 0, /* busiest first (analyze.h's order) */
    TUI_SORT_CPU_TOTAL,
    TUI_SORT_STATE,
    TUI_SORT_NAME,
    TUI_SORT_COUNT
} tui_thread_sort;

#define TUI_FILTER_MAX 128

typedef struct tui_screens {
    tui_target *live;     /* NULL while the JVM list is shown */
    tui_target_opts opts; /* for a JVM opened from the list */
    int rows, cols;
    bool help;
    char msg[256];
    bool msg_error;
    /* the list of targets (the JVMs of this machine, the pods of a service) */
    bool picking;
    tui_picker *picker;
    tui_pick_list picks;
    int pick_sel;
    /* screens */
    tui_screen_id screen;
    int scroll[TUI_SCREEN_COUNT]; /* first line shown on text screens */
    tui_lines lines;              /* text of the Locks / Deadlocks / stack screen */
    bool idle_expanded;           /* Locks: i lists the idle threads of each pool */
    /* threads */
    size_t *order; /* thread indices shown, in order */
    size_t norder, order_cap;
    double *pct; /* per thread of the snapshot: CPU% or -1 */
    size_t pct_cap;
    int sel, top;
    int64_t sel_id; /* Java id (or -2 - native id) kept across refreshes */
    tui_thread_sort sort;
    char filter[TUI_FILTER_MAX];
    bool prompt;
    char input[TUI_FILTER_MAX];
    size_t input_len;
    /* the stack of one thread (over the Threads screen) */
    bool stack;
    int64_t stack_id;
    char stack_name[128];
    /* flame */
    tui_flame_view *flame;
    jp_kind flame_kind;
    bool flame_by_value, flame_threads, flame_kind_set;
    char flame_label[128];
    /* B: a window kept as the baseline; later windows are shown compared
     * with it (flame_diff, owned; the flame view borrows its profile) */
    jp_profile *baseline;
    char base_label[64];
    jp_diff *flame_diff;
    jp_diff_norm base_norm;
    /* timing */
    int64_t next_refresh, next_dump, next_list;
    int64_t next_heap; /* --heap-every: when the next class histogram is due */
    bool exited;
    bool paused; /* p: no refresh until p again */
} tui_screens;

/* live may be NULL: the view starts with the list of local JVMs and opens
 * the one picked with opts; o goes back to that list. */
tui_screens *tui_screens_new(tui_target *live, const tui_target_opts *opts);
/* The same with another list (picker, taken over; NULL: none, o says so):
 * live NULL starts with the list. */
tui_screens *tui_screens_new_with(tui_target *live, tui_picker *picker,
                                  const tui_target_opts *opts);
void tui_screens_free(tui_screens *v);

void tui_screens_resize(tui_screens *v, int rows, int cols);
tui_action tui_screens_key(tui_screens *v, int key);
/* Timed work; true when the screen changed. */
bool tui_screens_tick(tui_screens *v);
void tui_screens_render(tui_screens *v, tui_canvas *c);

/* Rebuilds what depends on the snapshot (call after l->cur changed; the
 * tick does it itself). */
void tui_screens_sync(tui_screens *v);
void tui_screens_message(tui_screens *v, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
