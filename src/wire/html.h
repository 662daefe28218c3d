/* html.h - a profile as one self-contained HTML file: the web page's own
 * flame graph (zoom, search, reverse, sandwich) and top table, for
 * attaching to a ticket. Written by `jprof-top -b --format html` and by
 * jprof-server's `/api/v1/flamegraph?format=html`.
 *
 * The file inlines web/util.js, web/flame.js, web/app.css and web/export.js
 * from the copy compiled into the program (libjpweb.a) and carries the
 * profile as a flame JSON document ({"meta": {kind, unit, samples, total,
 * ...}, "tree": {name, self, total, children}, "title"}) in a
 * <script type="application/json">, every '<' escaped so no frame name can
 * end it. A Content Security Policy in the file forbids every request: it
 * opens the same offline.
 *
 * Ownership: doc is borrowed; out is caller storage appended to. */
#ifndef JP_WIRE_HTML_H
#define JP_WIRE_HTML_H

#include <jansson.h>

#include "base/error.h"
#include "base/strbuf.h"

/* title: what the file shows (a file name, "shop/checkout cpu"). */
jp_err jp_html_encode(const json_t *doc, const char *title, jp_strbuf *out, jp_error *err);

#endif
