/* io_detail.h - jprof-top --io-detail: where the I/O waits went.
 *
 * The top remote endpoints (host:port) and file paths of the io kind's
 * events, with their event count and time blocked (model/iodetail.h), as a
 * batch text table, as JSON, and as a panel of the flame view (key i, in
 * place of the top table while the io kind is shown). Local only: nothing
 * here is uploaded or sent anywhere.
 *
 * Ownership: everything borrows the table; JSON functions return a new
 * reference. Not thread-safe. */
#ifndef JP_TUI_IO_DETAIL_H
#define JP_TUI_IO_DETAIL_H

#include <jansson.h>
#include <stdio.h>

#include "base/error.h"
#include "model/iodetail.h"
#include "tui/flame_view.h"

/* "# ..." header, then "TYPE EVENTS BLOCKED ENDPOINT" rows, sockets then
 * files, most time blocked first. */
jp_err tui_io_detail_write_text(FILE *out, const jp_io_detail *d, jp_error *err);

/* {"sockets": {"events", "blocked_ns", "unlisted_events", "unlisted_ns",
 *  "top": [{"endpoint", "events", "blocked_ns"}]}, "files": {... "path" ...}} */
json_t *tui_io_detail_json(const jp_io_detail *d);

/* The panel: render into rows [top, top + h), and its keys (scrolling);
 * v->io must be set. */
void tui_io_panel_render(const tui_flame_view *v, tui_canvas *c, int top, int h);
tui_action tui_io_panel_key(tui_flame_view *v, int key);

#endif
