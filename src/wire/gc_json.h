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
 * Ownership: a new reference for the caller (json_decref). Thread-safe. */
#ifndef JP_WIRE_GC_JSON_H
#define JP_WIRE_GC_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/gc.h"

/* window_ns: the length of the window for paused_pct (0: null). */
json_t *jp_gc_summary_json(const jp_gc_summary *s, bool recorded, int64_t window_ns);

#endif
