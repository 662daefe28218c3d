/* screen.h - the terminal: runs a flame view under ncursesw until the user
 * quits. The only file of jprof that calls curses.
 *
 * Borrows the view; restores the terminal before returning, on every path. */
#ifndef JP_TUI_SCREEN_H
#define JP_TUI_SCREEN_H

#include "base/error.h"
#include "tui/view.h"

/* Returns JP_OK when the user quit, an error (and err) when the terminal
 * could not be set up. */
jp_err tui_screen_run(tui_view *v, jp_error *err);

#endif
