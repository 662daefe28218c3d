/* flame_table.h - the top table panel of the flame view: self and total of
 * every frame under the zoom root, sorted by self, following the zoom. */
#ifndef JP_TUI_FLAME_TABLE_H
#define JP_TUI_FLAME_TABLE_H

#include "tui/canvas.h"
#include "tui/flame_view.h"

/* Draws rows [top, top + h): a title row, then table rows. */
void tui_flame_table_render(const tui_flame_view *v, tui_canvas *c, int top, int h);
/* Up/Down/PgUp/PgDn/Home/End move the row; Enter selects that frame in the
 * flame graph and gives it the focus; Esc gives the focus back. */
tui_action tui_flame_table_key(tui_flame_view *v, int key);
/* Keeps the selected row valid and scrolled into view. */
void tui_flame_table_fix(tui_flame_view *v);

#endif
