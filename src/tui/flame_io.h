/* flame_io.h - the I/O panel of the flame view (--io-detail): the top
 * remote endpoints (host:port) and file paths of the io kind's events with
 * their event count and time blocked (model/iodetail.h), in place of the top
 * table while the io kind is shown (key i). The batch table and JSON of the
 * same are report_io.h's. */
#ifndef JP_TUI_FLAME_IO_H
#define JP_TUI_FLAME_IO_H

#include "tui/canvas.h"
#include "tui/flame_view.h"

/* The panel: render into rows [top, top + h), and its keys (scrolling);
 * v->io must be set. */
void tui_io_panel_render(const tui_flame_view *v, tui_canvas *c, int top, int h);
tui_action tui_io_panel_key(tui_flame_view *v, int key);

#endif
