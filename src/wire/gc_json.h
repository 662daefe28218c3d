/* gc_json.h - the JSON form of a GC summary (model/gc.h), as printed by
 * `jprof-top -b --format json` (key "gc").
 *
 * Shape (every key always present; what the recording lacks is null):
 *   { "recorded": true when the window holds any GC event,
 *     "from_ns", "to_ns": the window (0, 0: the whole recording),
 *     "collections", "pauses",
 *     "pauses_from": "jdk.GCPhasePause" | "jdk.GarbageCollection" | null,
 *     "pause_total_ns", "pause_p50_ns", "pause_p99_ns", "pause_max_ns",
 *     "paused_pct": pause total / window length x 100, or null,
 *     "longest": null | {"start_ns", "gc_id", "phase", "collector", "cause"}
 *                (names "unknown" when not recorded),
 *     "heap": null | {"gcs", "before_bytes", "after_bytes", "after_min_bytes",
 *                     "after_max_bytes"}   (before/after: the last collection),
 *     "alloc": null | {"bytes_per_s", "bytes", "span_ns", "source"},
 *     "dropped": GC events over the reader's cap,
 *     "cannot_tell": JP_GC_CANNOT_TELL }
 *
 * The per-window record of the upload batch (key "gc", docs/API.md) and of
 * the stores is {"start": ns, "end": ns, "summary": <the shape above>,
 * "pause_ns": [ascending pause durations, at most JP_GC_WINDOW_PAUSES]};
 * the batch adds "target". GET /api/v1/gc adds points:
 * [{"start_ns", "end_ns", "pauses", "pause_total_ns", "pause_max_ns"}].
 *
 * Decoders take untrusted input: on a wrong shape they return false and
 * say what and where in why ("summary.heap.after_bytes: must be an integer
 * >= 0"); keys they do not know are ignored.
 *
 * Ownership: encoders return a new reference for the caller (json_decref).
 * Thread-safe. */
#ifndef JP_WIRE_GC_JSON_H
#define JP_WIRE_GC_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/gc.h"

/* window_ns: the length of the window for paused_pct (0: null). */
json_t *jp_gc_summary_json(const jp_gc_summary *s, bool recorded, int64_t window_ns);

/* Reads what jp_gc_summary_json wrote (recorded, paused_pct, cannot_tell
 * and bytes_per_s are derived, so not read). */
bool jp_gc_summary_from_json(const json_t *o, jp_gc_summary *s, char *why, size_t len);

json_t *jp_gc_window_json(const jp_gc_window *w);
bool jp_gc_window_from_json(const json_t *o, jp_gc_window *w, char *why, size_t len);

json_t *jp_gc_points_json(const jp_gc_point *p, size_t n);
/* At most max points; *n gets the count. */
bool jp_gc_points_from_json(const json_t *a, jp_gc_point *out, size_t max, size_t *n, char *why,
                            size_t len);

#endif
