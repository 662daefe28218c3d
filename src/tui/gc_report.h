/* gc_report.h - the GC screen and the GC part of the batch output, from the
 * GC log of a profile (model/gc.h).
 *
 * One summary of the whole profile (its recording range is the window),
 * the pauses over time as a text sparkline, the top allocators when the
 * profile has allocation samples, and the sentence saying what JFR cannot
 * tell. The same lines are the GC screen of every source and
 * `jprof-top -b --format gc`. The profile is only read. */
#ifndef JP_TUI_GC_REPORT_H
#define JP_TUI_GC_REPORT_H

#include <jansson.h>
#include <stddef.h>

#include "model/gc.h"
#include "model/profile.h"
#include "tui/lines.h"

/* The summary of the whole profile; the allocation profile (if any) is the
 * last resort for the rate. */
void tui_gc_summarize(const jp_profile *p, jp_gc_summary *s);

/* The GC lines for a screen `width` columns wide (the sparkline's width),
 * with at most `top` allocators. */
void tui_report_gc(const jp_profile *p, int width, size_t top, tui_lines *ls);

/* The "gc" object of the batch JSON (wire/gc_json.h), new reference. */
json_t *tui_gc_json(const jp_profile *p);

#endif
