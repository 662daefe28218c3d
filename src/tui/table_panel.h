/* table_panel.h - the top table panel of the flame view: self and total of
 * every frame under the zoom root, sorted by self, following the zoom. */
#ifndef JP_TUI_TABLE_PANEL_H
#define JP_TUI_TABLE_PANEL_H

#include "tui/canvas.h"
#include "tui/view.h"

/* Draws rows [top, top + h): a title row, then table rows. */
void tui_table_panel_render(const tui_view *v, tui_canvas *c, int top, int h);
/* Up/Down/PgUp/PgDn/Home/End move the row; Enter selects that frame in the
 * flame graph and gives it the focus; Esc gives the focus back. */
tui_action tui_table_panel_key(tui_view *v, int key);
/* Keeps the selected row valid and scrolled into view. */
void tui_table_panel_fix(tui_view *v);

#endif
