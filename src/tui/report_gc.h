/* report_gc.h - the GC screen and the GC part of the batch output, from the
 * GC log of a profile (model/gc.h).
 *
 * One summary of the whole profile (its recording range is the window),
 * the pauses over time as a text sparkline, the top allocators when the
 * profile has allocation samples, and the sentence saying what JFR cannot
 * tell. The same lines are the GC screen of every source and
 * `jprof-top -b --format gc`: a recording or pid gives its GC log, the
 * server its merged summaries (/api/v1/gc), a pod through kubectl the
 * probe's summary of its window; all become a tui_gc_data. The profile is
 * only read. */
#ifndef JP_TUI_REPORT_GC_H
#define JP_TUI_REPORT_GC_H

#include <jansson.h>
#include <stddef.h>

#include "model/gc.h"
#include "model/profile.h"
#include "tui/lines.h"

/* What the GC lines are made of, whatever the source. */
typedef struct tui_gc_data {
    jp_gc_summary s;
    bool recorded;     /* any GC event (or stored summary) at all */
    int64_t window_ns; /* the time the pauses were measured over; 0 unknown */
    const char *span;  /* "the recording", "the range": where the pauses were */
    bool estimated;    /* p50/p99 estimated (merged windows, docs/API.md) */
    const char *none;  /* the warning when !recorded */
    /* pause time over time: a GC log over [from_ns, to_ns), or points */
    const jp_gc_log *log;
    int64_t from_ns, to_ns;
    jp_gc_point *points; /* owned when from tui_gc_from_api (tui_gc_data_cleanup) */
    size_t npoints;
} tui_gc_data;

/* The lines of d (allocators from p's allocation samples when p has them). */
void tui_report_gc_data(const tui_gc_data *d, const jp_profile *p, int width, size_t top,
                        tui_lines *ls);

/* d from an answer of GET /api/v1/gc (wire/gc_json.h); false with why when
 * it is not one. d->points are heap (tui_gc_data_cleanup). */
bool tui_gc_from_api(const json_t *answer, tui_gc_data *d, char *why, size_t len);
void tui_gc_data_cleanup(tui_gc_data *d);

/* The summary of the whole profile; the allocation profile (if any) is the
 * last resort for the rate. */
void tui_gc_summarize(const jp_profile *p, jp_gc_summary *s);

/* The GC lines for a screen `width` columns wide (the sparkline's width),
 * with at most `top` allocators. */
void tui_report_gc(const jp_profile *p, int width, size_t top, tui_lines *ls);

/* The "gc" object of the batch JSON (wire/gc_json.h), new reference. */
json_t *tui_gc_json(const jp_profile *p);

#endif
