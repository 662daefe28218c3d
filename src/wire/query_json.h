/* query_json.h - decoding jprof-server's query answers (docs/API.md,
 * "Queries") into model types.
 *
 * A flamegraph answer's tree is folded back into a jp_profile, one stack per
 * node that has self time, so the flame view, the top table and the batch
 * writers of jprof-top work on server data exactly as on a recording. The
 * server may have cut the tree (max_nodes); what the cut children carried
 * stays in the totals as a "[omitted]" child, so every total is exact.
 *
 * Input is untrusted: wrong types read as absent, names are cut at
 * JP_FRAME_NAME_MAX, depth and node count are capped.
 *
 * Ownership: the profile is the caller's; json values are borrowed. Not
 * thread-safe on one profile. */
#ifndef JP_WIRE_QUERY_JSON_H
#define JP_WIRE_QUERY_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "model/profile.h"

#define JP_QUERY_MAX_DEPTH 4096
#define JP_QUERY_MAX_NODES 1000000

/* The name of the synthetic frame holding what a cut tree left out. */
#define JP_QUERY_OMITTED "[omitted]"

/* Adds the "tree" of a flamegraph answer to p as kind k: its self/total
 * are samples (by_value false: by=samples) or the kind's value. Call it
 * once with each measure to fill both. JP_ERR_FORMAT when there is no
 * tree, JP_ERR_LIMIT past the caps. */
jp_err jp_query_flame_add(jp_profile *p, jp_kind k, const json_t *answer, bool by_value,
                          jp_error *err);

/* The same for one side of a /api/v1/flamegraph/diff answer: the current
 * side (self/total) or, with base, the baseline (base_self/base_total).
 * Both sides read from one answer have the same frames and cut. */
jp_err jp_query_flame_add_side(jp_profile *p, jp_kind k, const json_t *answer, bool by_value,
                               bool base, jp_error *err);

/* The message of an error answer ({"error": {"message"}}), or NULL. */
const char *jp_query_error_message(const json_t *answer);

/* Small typed getters tolerant of wrong types. */
const char *jp_query_str(const json_t *obj, const char *key);
long long jp_query_int(const json_t *obj, const char *key, long long dflt);
double jp_query_num(const json_t *obj, const char *key, double dflt);

#endif
