/* api_int.h - helpers shared by the query handlers (api.c, api_docs.c, api_diff.c). */
#ifndef JP_SERVER_API_INT_H
#define JP_SERVER_API_INT_H

#include <pthread.h>

#include "model/flame.h"
#include "server/api_query.h"
#include "server/server.h"

/* api_parse()'s need: API_NEED_NS, API_NEED_SERVICE, API_NEED_KIND
 * (api_query.h), and */
enum { API_SCOPE_FILTERS = 8 /* the handler filters rows by the token's scope itself */ };

typedef struct api_q {
    store_filter f;
    store_budget b;
    int64_t now;
} api_q;

/* Parses namespace/service/pod/thread/kind/from/to and checks the token
 * (read role, namespace scope). On failure fills o and returns false. */
bool api_parse(srv_req *r, srv_resp *o, api_q *q, unsigned need);
bool api_limit(srv_req *r, srv_resp *o, const char *key, long def, long max, long *out);
/* A time parameter (RFC 3339, @EPOCH, now, -15m); *out unchanged when absent. */
bool api_time_arg(srv_req *r, srv_resp *o, const char *key, int64_t now, int64_t *out);
/* by=value (default) or by=samples. */
bool api_by_value(srv_req *r, srv_resp *o, bool *by_value);
/* Writes a flame tree as nested {"name", ..., "children": [...]} objects,
 * iteratively (depth does not grow the C stack); open() writes a node's
 * fields up to and including `"children":[`. keep, when not NULL, leaves
 * out the nodes whose byte is 0 (and their subtrees). */
typedef void (*api_node_open_fn)(jp_strbuf *b, const jp_flame *f, uint32_t node, const void *ctx);
void api_flame_tree_json(jp_strbuf *b, const jp_flame *f, const uint8_t *keep,
                         api_node_open_fn open, const void *ctx);
/* The stacks of one flame query as a profile of f->kind (a new profile the
 * caller frees); NULL after an error answer in o. */
jp_profile *api_load_profile(srv_req *r, srv_resp *o, const store_filter *f, const store_budget *b,
                             bool threads, store_flame_totals *tot, store_query_info *info);
/* namespace, service, pod, from, to, rows/windows/bytes scanned, partial, took_ms */
void api_meta_common(jp_strbuf *b, const api_q *q, const store_query_info *info, int64_t t0);
void api_store_error(srv_resp *o, jp_err rc, const jp_error *e);
/* {"namespace":..., "service":..., ...} of a target. */
void api_target_json(jp_strbuf *b, const jp_batch_target *t);

#endif
