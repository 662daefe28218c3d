/* flame_json.h - the JSON form of a flame tree (jansson).
 *
 * jprof-top's --format json and HTML export write it. A node is {"name", "type", "self", "total",
 * "children"} where type is the frame kind used for colouring (absent on the root) and self/total
 * are samples or the kind's value.
 *
 * Ownership: functions return a new jansson reference (json_decref), never
 * NULL. Not thread-safe. */
#ifndef JP_WIRE_FLAME_JSON_H
#define JP_WIRE_FLAME_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "model/diff.h"
#include "model/flame.h"

/* The subtree of `root` (0 for the whole tree). Iterative, so stack depth
 * does not depend on the tree's depth. */
json_t *jp_flame_json(const jp_flame *f, uint32_t root, bool by_value);

/* The tree of a comparison (jp_diff_tree is run) in the shape of
 * jprof-server's /api/v1/flamegraph/diff (and the web page's flame.js): the
 * new side as self and total, the old side as base_self and base_total,
 * normalised (integers when the normalisation is none). */
json_t *jp_flame_diff_json(jp_diff *d);

/* A JSON string of len bytes; invalid UTF-8 bytes become '?'. */
json_t *jp_json_string(const char *s, size_t len);

#endif
