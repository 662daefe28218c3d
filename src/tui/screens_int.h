/* screens_int.h - what the files of jprof-top's screens share (not for
 * other modules): screens.c (the manager: key routing, timed work, the rows
 * around every screen) and one file per screen - screen_threads.c,
 * screen_text.c (Locks, Deadlocks, Status, GC, a stack), screen_flame.c
 * (the Flame screen hosting the flame view) and screen_picker.c. */
#ifndef JP_TUI_SCREENS_INT_H
#define JP_TUI_SCREENS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "model/snapshot.h"
#include "tui/canvas.h"
#include "tui/screens.h"

/* Rows above the body: title, numbers, screen tabs; below: status, keys. */
#define TUI_SCREENS_HEAD 3
#define TUI_SCREENS_FOOT 2

/* The rows between the head and the foot. */
int tui_screens_body_rows(const tui_screens *v);
/* The status line: the filter prompt, a message, or what the screen says. */
void tui_screens_status_row(const tui_screens *v, tui_canvas *c, int row);

/* Threads: a thread's identity across snapshots (Java id, or -2 - native
 * id); the order shown (busy ranking or the sort, the filter, the cursor
 * kept on its thread); keys of the list and of the filter prompt; drawing. */
int64_t tui_screen_thread_key(const jp_thread *t);
void tui_screen_threads_build(tui_screens *v);
tui_action tui_screen_threads_key(tui_screens *v, int key);
tui_action tui_screen_threads_prompt_key(tui_screens *v, int key);
void tui_screen_threads_render(const tui_screens *v, tui_canvas *c, int top, int h);

/* The text screens (Locks, Deadlocks, Status, GC, a thread's stack): their
 * lines, scrolling, drawing. */
void tui_screen_text_build(tui_screens *v);
tui_action tui_screen_text_key(tui_screens *v, int key);
void tui_screen_text_render(const tui_screens *v, tui_canvas *c, int top, int h);

/* Flame: starts the recording when the screen opens; builds the flame view
 * of the latest window (with the baseline, if one is kept); the keys of the
 * screen (the source's own first, then B and the view's); drawing. */
void tui_screen_flame_enter(tui_screens *v);
void tui_screen_flame_rebuild(tui_screens *v);
bool tui_screen_flame_source_key(tui_screens *v, int key);
tui_action tui_screen_flame_key(tui_screens *v, int key);
void tui_screen_flame_render(tui_screens *v, tui_canvas *c, int top);

/* The picker: scans the list again, its keys (Enter opens), drawing. */
void tui_screen_picker_scan(tui_screens *v);
tui_action tui_screen_picker_key(tui_screens *v, int key);
void tui_screen_picker_render(const tui_screens *v, tui_canvas *c);

#endif
