/* report_diff.h - a comparison of two profiles as text and JSON, for
 * --jfr NEW --diff OLD and the server's baselines (--base-*) alike. */
#ifndef JP_TUI_REPORT_DIFF_H
#define JP_TUI_REPORT_DIFF_H

#include <stdio.h>

#include "base/error.h"
#include "model/diff.h"
#include "tui/recording.h"

/* Writes a comparison as collapsed "stack OLD NEW" lines, the top table of
 * changes (TUI_FORMAT_TOP) or the JSON diff tree (TUI_FORMAT_JSON); the
 * labels name the two sides (files, or ranges of jprof-server). */
jp_err tui_diff_write(FILE *out, jp_diff *d, tui_format f, const char *old_label,
                      const char *new_label, jp_error *err);

#endif
