/* terminal.h - the terminal: runs a flame view, or any tui_app (the
 * screens of a target), under ncursesw until the user quits. The only file
 * of jprof that calls curses.
 *
 * Borrows the view; restores the terminal before returning, on every path. */
#ifndef JP_TUI_TERMINAL_H
#define JP_TUI_TERMINAL_H

#include <signal.h>
#include <stdbool.h>

#include "base/error.h"
#include "tui/canvas.h"
#include "tui/flame_view.h"

/* Returns JP_OK when the user quit, an error (and err) when the terminal
 * could not be set up. */
jp_err tui_terminal_run(tui_flame_view *v, jp_error *err);

/* A screen that changes by itself (a live JVM): the loop waits for a key
 * at most poll_ms, calls tick() between keys (true = redraw), and stops
 * when key() says quit or *stop becomes non-zero (a signal handler's flag),
 * or when the terminal is gone. */
typedef struct tui_app {
    void *ctx;
    void (*resize)(void *ctx, int rows, int cols);
    tui_action (*key)(void *ctx, int key);
    bool (*tick)(void *ctx);
    void (*render)(void *ctx, tui_canvas *c);
    volatile sig_atomic_t *stop;
    int poll_ms;
} tui_app;

jp_err tui_terminal_run_app(const tui_app *app, jp_error *err);

#endif
