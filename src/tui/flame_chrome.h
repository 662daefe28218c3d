/* flame_chrome.h - the parts of the flame view around the panels: title, kinds
 * and legend, breadcrumb, status line, key bar, and the help screen.
 * Each draws one row (or the whole canvas for help) from the view's state. */
#ifndef JP_TUI_FLAME_CHROME_H
#define JP_TUI_FLAME_CHROME_H

#include "tui/canvas.h"
#include "tui/flame_view.h"

void tui_flame_chrome_title(const tui_flame_view *v, tui_canvas *c, int row);
void tui_flame_chrome_kinds(const tui_flame_view *v, tui_canvas *c, int row);
void tui_flame_chrome_breadcrumb(const tui_flame_view *v, tui_canvas *c, int row);
void tui_flame_chrome_status(const tui_flame_view *v, tui_canvas *c, int row);
void tui_flame_chrome_keybar(const tui_flame_view *v, tui_canvas *c, int row);
void tui_flame_chrome_help(const tui_flame_view *v, tui_canvas *c);

/* Formats v in the view's current measure ("1234" or "12.3 ms"). */
void tui_flame_view_format(const tui_flame_view *v, uint64_t value, char *buf, size_t len);
/* 100 * part / whole, 0 when whole is 0. */
double tui_percent(uint64_t part, uint64_t whole);

#endif
