/* remote_view.h - jprof-top's screens on a service read from jprof-server
 * (`-n NS -s SVC`), without a terminal.
 *
 * Like live_view.h: state in, canvas out, driven by src/tui/screen.c as a
 * tui_app. Screens: Threads, Locks, Deadlocks (the latest snapshots), Flame
 * (the flame view of view.h over a profile rebuilt from the server's flame
 * trees) and Status (pods and JVMs with state and reason, status history,
 * ingestion health). Keys: T L D F S or F5 F6 F7 F8 F4 switch screens;
 * '<' '>' step the flame range through 5m 15m 1h 6h 24h; p / P step the pod
 * filter (all pods, then each pod); e shows the threads' stacks; R reads
 * everything again; arrows and
 * PgUp/PgDn scroll; ? help; q quits. On the Flame screen every other key
 * goes to the flame view (zoom, search, kinds 1-9, v values, r reverse).
 *
 * tui_remote_view_tick() re-reads the snapshots every interval and the
 * flame when its range or pod changed; a failed read keeps the last data
 * and shows the error in the status line.
 *
 * Ownership: the view owns the tui_remote it is given (freed with the
 * view). Not thread-safe. */
#ifndef JP_TUI_REMOTE_VIEW_H
#define JP_TUI_REMOTE_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "jfr/jfr.h"
#include "tui/canvas.h"
#include "tui/live_report.h"
#include "tui/remote.h"
#include "tui/view.h"

typedef enum tui_rscreen {
    TUI_RSCR_THREADS = 0,
    TUI_RSCR_LOCKS,
    TUI_RSCR_DEADLOCKS,
    TUI_RSCR_FLAME,
    TUI_RSCR_STATUS,
    TUI_RSCR_COUNT
} tui_rscreen;

typedef struct tui_remote_view {
    tui_remote *r;
    int rows, cols;
    tui_rscreen screen;
    int scroll[TUI_RSCR_COUNT];
    tui_lines lines; /* the text of the current text screen */
    bool help;
    char msg[300];
    bool msg_error;
    bool stacks; /* Threads: each thread's stack under it (key e) */
    int range;   /* index into tui_range_names */
    int pod;     /* -1: every pod, else index into r->pods */
    char pod_name[256];
    int64_t interval_ns, next_refresh;
    bool refreshed; /* at least one refresh succeeded */
    /* flame */
    bool flame_dirty;
    jp_profile *prof;
    jfr_report rep;
    tui_remote_flame_meta fmeta;
    tui_view *flame;
    jp_kind flame_kind;
    bool flame_by_value, flame_kind_set;
    char flame_label[400];
    int64_t flame_loaded_ns;
} tui_remote_view;

/* interval_ns: between refreshes (0: 5 s); range: the flame range index;
 * pod: the pod filter's start (NULL: every pod); screen: the first one. */
tui_remote_view *tui_remote_view_new(tui_remote *r, int64_t interval_ns, int range, const char *pod,
                                     tui_rscreen screen);
void tui_remote_view_free(tui_remote_view *v);

void tui_remote_view_resize(tui_remote_view *v, int rows, int cols);
tui_action tui_remote_view_key(tui_remote_view *v, int key);
bool tui_remote_view_tick(tui_remote_view *v);
void tui_remote_view_render(tui_remote_view *v, tui_canvas *c);

/* Index of a range name ("5m", "15m", "1h", "6h", "24h"), or -1. */
int tui_range_parse(const char *s);

#endif
