/* flame_panel.h - the text flame graph panel of the flame view: draws the
 * laid-out bars (icicle: zoom root on top) and handles the keys that move
 * the selection and zoom. */
#ifndef JP_TUI_FLAME_PANEL_H
#define JP_TUI_FLAME_PANEL_H

#include <stddef.h>

#include "tui/canvas.h"
#include "tui/flame_view.h"

/* Draws rows [top, top + h) of the canvas. */
void tui_flame_panel_render(const tui_flame_view *v, tui_canvas *c, int top, int h);
/* Arrows, Home, PgUp/PgDn, Enter (zoom in), Esc/Backspace (zoom out). */
tui_action tui_flame_panel_key(tui_flame_view *v, int key);

/* Picks the label of a bar `room` columns wide: the name when it fits,
 * else (Java frames) "Class.method", else a prefix. Returns the bytes to
 * show; *cut says whether ".." should follow them. */
size_t tui_bar_label(const char *name, size_t len, bool java, int room, const char **out,
                     bool *cut);

#endif
