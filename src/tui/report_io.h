/* report_io.h - jprof-top --io-detail: where the I/O waits went.
 *
 * The top remote endpoints (host:port) and file paths of the io kind's
 * events, with their event count and time blocked (model/iodetail.h), as a
 * batch text table and as JSON; the flame view's panel of the same is
 * flame_io.h's. Local only: nothing here is uploaded or sent anywhere.
 *
 * Ownership: everything borrows the table; JSON functions return a new
 * reference. Not thread-safe. */
#ifndef JP_TUI_REPORT_IO_H
#define JP_TUI_REPORT_IO_H

#include <jansson.h>
#include <stdio.h>

#include "base/error.h"
#include "model/iodetail.h"

/* "# ..." header, then "TYPE EVENTS BLOCKED ENDPOINT" rows, sockets then
 * files, most time blocked first. */
jp_err tui_io_detail_write_text(FILE *out, const jp_io_detail *d, jp_error *err);

/* {"sockets": {"events", "blocked_ns", "unlisted_events", "unlisted_ns",
 *  "top": [{"endpoint", "events", "blocked_ns"}]}, "files": {... "path" ...}} */
json_t *tui_io_detail_json(const jp_io_detail *d);

#endif
