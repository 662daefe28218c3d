/* heap_json.h - the JSON forms of a heap histogram and of a growth
 * (model/heap.h): jprof-top -b --heap --format json, the upload batch's
 * "heap" records, GET /api/v1/heap, and the web page's Memory view.
 *
 * Histogram (every key always present):
 *   { "time_ns": when the JVM finished it, "took_ns": how long it took (0 unknown),
 *     "all": true when unreachable objects were counted too (-all),
 *     "total_instances", "total_bytes": the JVM's Total line,
 *     "classes_total": classes the JVM listed, "undercounted": instances it
 *     could not count, "cut": true when "classes" holds fewer than classes_total,
 *     "classes": [{"name", "module" ("" none), "instances", "bytes"}, ...]
 *                biggest first }
 * Growth:
 *   { "from_ns", "to_ns", "span_ns", "histograms", "approximate",
 *     "total_instances_delta", "total_bytes_delta", "total_bytes_per_min",
 *     "classes_total": rows in all, "classes": [{"name", "module",
 *     "instances_from", "instances_to", "bytes_from", "bytes_to",
 *     "instances_delta", "bytes_delta", "instances_per_min",
 *     "bytes_per_min"}, ...] fastest growing (bytes) first }
 *
 * The decoder takes untrusted input: on a wrong shape it returns false and
 * says what and where in why ("classes[3].bytes: must be an integer >= 0");
 * keys it does not know are ignored.
 *
 * Ownership: encoders return a new reference (json_decref). Thread-safe. */
#ifndef JP_WIRE_HEAP_JSON_H
#define JP_WIRE_HEAP_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/heap.h"

/* The histogram with its first `top` classes (0: all). */
json_t *jp_heap_histo_json(const jp_heap_histo *h, size_t top);
/* Reads what jp_heap_histo_json wrote into *h (cleaned first); at most
 * max_classes classes (more: refused). "cut" is derived, not read. */
bool jp_heap_histo_from_json(const json_t *o, jp_heap_histo *h, size_t max_classes, char *why,
                             size_t len);

/* The growth with its first `top` rows (0: all). */
json_t *jp_heap_growth_json(const jp_heap_growth *g, size_t top);
/* Reads what jp_heap_growth_json wrote into *g (cleaned first); at most
 * max_rows rows. The rows' names are copied into *names (cleaned first, one
 * class per row), which must outlive g. The per-minute rates are derived
 * again from the deltas and the span, not read. */
bool jp_heap_growth_from_json(const json_t *o, jp_heap_growth *g, jp_heap_histo *names,
                              size_t max_rows, char *why, size_t len);

#endif
