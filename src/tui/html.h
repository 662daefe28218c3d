/* html.h - `--format html`: one self-contained HTML file with the flame
 * graph (zoom, search, reverse, sandwich) and the top table of a profile,
 * for attaching to a ticket.
 *
 * It is the web page's own flame graph (web/flame.js, web/util.js, the
 * flame rules of web/app.css, started by web/export.js), inlined from the
 * copy compiled into the program, with the profile as the JSON document of
 * `--format json` (meta, tree). The file loads nothing: a Content Security
 * Policy forbids every request, so it opens the same offline. */
#ifndef JP_TUI_HTML_H
#define JP_TUI_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include "base/error.h"
#include "jfr/jfr.h"
#include "model/profile.h"

/* title names the profile (the file's name); may be NULL. */
jp_err tui_write_html(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, const char *title, jp_error *err);

#endif
