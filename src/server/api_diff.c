/* api_diff.c - GET /api/v1/flamegraph/diff: one flame query (a range, a
 * pod) against a baseline (another range, another pod, or both), merged on
 * the server into one tree whose nodes carry both sides, plus the frames
 * whose share changed most.
 *
 * Why on the server: each side read on its own is cut to max_nodes
 * separately, so a client diffing two truncated trees would see frames
 * "vanish" that were only cut. Here both sides are merged in full first, and
 * only then is the tree cut (by the larger of the two shares, so a node
 * that shrank to nothing is kept as long as it was heavy before). The
 * comparison itself is model/diff.h's, the one jprof-top --diff uses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/diff.h"
#include "model/profile.h"
#include "server/api_int.h"

/* Share of a side's whole (0 when the side is empty). */
static double diff_share(double x, double all)
{
    return all > 0 ? x / all : 0.0;
}

typedef struct diff_order {
    double weight;
    uint32_t depth, node;
} diff_order;

static int diff_order_cmp(const void *x, const void *y)
{
    const diff_order *a = x, *b = y;
    if (a->weight != b->weight)
        return a->weight > b->weight ? -1 : 1;
    if (a->depth != b->depth)
        return a->depth < b->depth ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

static uint64_t node_total(const jp_diff *d, uint32_t v)
{
    return jp_flame_total(d->tree, v, d->by_value);
}

/* Keeps the max_nodes heaviest nodes of d's tree (by the larger of their
 * two shares, which never grows from parent to child, so kept trees stay
 * whole) and relinks each kept node's children heaviest first. Returns the
 * number kept. */
static size_t diff_select(jp_diff *d, size_t max_nodes, uint8_t *keep)
{
    jp_flame_node *nodes = d->tree->nodes;
    size_t count = d->tree->count;
    double all0 = (double)node_total(d, 0), all1 = (double)d->node_old_total[0];
    diff_order *order = jp_xcalloc(count, sizeof *order);
    for (size_t i = 0; i < count; i++) {
        double a = diff_share((double)node_total(d, (uint32_t)i), all0),
               b = diff_share((double)d->node_old_total[i], all1);
        order[i] = (diff_order){a > b ? a : b, nodes[i].depth, (uint32_t)i};
    }
    qsort(order, count, sizeof *order, diff_order_cmp);
    uint32_t *last = jp_xcalloc(count, sizeof *last);
    for (size_t i = 0; i < count; i++)
        nodes[i].first_child = JP_FLAME_NONE;
    size_t n = 0;
    for (size_t i = 0; i < count && n < max_nodes; i++) {
        uint32_t v = order[i].node, parent = nodes[v].parent;
        if (v != 0 && !keep[parent])
            continue;
        keep[v] = 1;
        n++;
        nodes[v].next_sibling = JP_FLAME_NONE;
        if (v == 0)
            continue;
        if (nodes[parent].first_child == JP_FLAME_NONE)
            nodes[parent].first_child = v;
        else
            nodes[last[parent]].next_sibling = v;
        last[parent] = v;
    }
    free(last);
    free(order);
    return n;
}

static void diff_node_open(jp_strbuf *b, const jp_flame *f, uint32_t v, const void *ctx)
{
    const jp_diff *d = ctx;
    size_t len;
    const char *name = jp_flame_node_name(f, v, &len);
    jp_strbuf_puts(b, "{\"name\":");
    jw_str(b, name, len);
    jp_strbuf_printf(b,
                     ",\"self\":%llu,\"total\":%llu,\"base_self\":%llu,\"base_total\":%llu,"
                     "\"children\":[",
                     (unsigned long long)jp_flame_self(f, v, d->by_value),
                     (unsigned long long)node_total(d, v), (unsigned long long)d->node_old_self[v],
                     (unsigned long long)d->node_old_total[v]);
}

typedef struct diff_top {
    double delta; /* change of the self share, current minus baseline */
    const jp_diff_row *row;
} diff_top;

static int diff_top_cmp(const void *x, const void *y)
{
    const diff_top *a = x, *b = y;
    double da = fabs(a->delta), db = fabs(b->delta);
    if (da != db)
        return da > db ? -1 : 1;
    return a->row->frame < b->row->frame ? -1 : a->row->frame > b->row->frame;
}

/* The frames whose self share changed most, each side's self and total. */
static void diff_top_json(jp_strbuf *b, const jp_diff *d, size_t limit, size_t *rows_total)
{
    double all0 = (double)node_total(d, 0), all1 = (double)d->node_old_total[0];
    jp_diff_row *rows;
    size_t n = jp_diff_top(d, 0, &rows);
    diff_top *order = jp_xcalloc(n ? n : 1, sizeof *order);
    for (size_t i = 0; i < n; i++)
        order[i] = (diff_top){diff_share((double)rows[i].new_self, all0) -
                                  diff_share(rows[i].old_self, all1),
                              &rows[i]};
    qsort(order, n, sizeof *order, diff_top_cmp);
    *rows_total = n;
    jp_strbuf_puts(b, "\"top\":[");
    for (size_t i = 0; i < n && i < limit; i++) {
        const jp_diff_row *r = order[i].row;
        size_t len;
        const char *name = jp_profile_frame_name(d->prof, r->frame, &len);
        jp_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        jw_str(b, name, len);
        jp_strbuf_printf(b,
                         ",\"self\":%llu,\"total\":%llu,\"base_self\":%.0f,\"base_total\":%.0f,"
                         "\"self_delta\":%.6f,\"total_delta\":%.6f}",
                         (unsigned long long)r->new_self, (unsigned long long)r->new_total,
                         r->old_self, r->old_total, order[i].delta,
                         diff_share((double)r->new_total, all0) - diff_share(r->old_total, all1));
    }
    jp_strbuf_putc(b, ']');
    free(order);
    free(rows);
}

/* The baseline's filter: base_from/base_to/base_pod, each defaulting to the
 * current one; given only one end, the baseline is as long as the current
 * range. An empty base_pod means every pod. */
static bool diff_base_filter(srv_req *r, srv_resp *o, const api_q *q, store_filter *bf)
{
    jp_error e;
    jp_error_init(&e);
    if (api_query_base(r->args, &q->f, q->now, bf, &e) == JP_OK)
        return true;
    srv_error(o, 400, "malformed", "%s", e.msg);
    return false;
}

static void diff_side_meta(jp_strbuf *b, const jp_kind_table *t, const store_filter *f,
                           const store_flame_totals *tot)
{
    jp_strbuf_puts(b, "{\"pod\":");
    jw_cstr(b, f->pod);
    jp_strbuf_puts(b, ",\"from\":");
    jw_time(b, f->from_ns);
    jp_strbuf_puts(b, ",\"to\":");
    jw_time(b, f->to_ns);
    jp_strbuf_printf(b, ",\"samples\":%llu,\"total\":%llu,\"windows\":%llu,\"first\":",
                     (unsigned long long)t->samples, (unsigned long long)t->value,
                     (unsigned long long)tot->windows);
    jw_time(b, tot->first_ns);
    jp_strbuf_puts(b, ",\"last\":");
    jw_time(b, tot->last_ns);
    jp_strbuf_putc(b, '}');
}

static void diff_info_add(store_query_info *a, const store_query_info *b)
{
    a->rows_scanned += b->rows_scanned;
    a->windows_scanned += b->windows_scanned;
    a->bytes_scanned += b->bytes_scanned;
    if (b->partial && !a->partial) {
        a->partial = true;
        memcpy(a->partial_reason, "baseline: ", 10);
        snprintf(a->partial_reason + 10, sizeof a->partial_reason - 10, "%.140s",
                 b->partial_reason);
    }
}

static void diff_answer(srv_resp *o, const api_q *q, jp_diff *d, const jp_profile *cur,
                        const jp_profile *base, const store_filter *bf,
                        const store_flame_totals tot[2], const store_query_info *info,
                        long max_nodes, long limit, int64_t t0)
{
    jp_strbuf *b = &o->body;
    jp_diff_tree(d);
    size_t count = d->tree->count;
    uint8_t *keep = jp_xcalloc(count, 1);
    size_t kept = diff_select(d, (size_t)max_nodes, keep);
    jp_kind k = (jp_kind)q->f.kind;
    const jp_kind_table *tc = &cur->kinds[k], *tb = &base->kinds[k];
    o->status = 200;
    jp_strbuf_puts(b, "{\"meta\":{\"kind\":");
    jw_cstr(b, jp_kind_name(k));
    jp_strbuf_puts(b, ",\"unit\":");
    jw_cstr(b, d->by_value ? jp_kind_unit(k) : "samples");
    jp_strbuf_puts(b, ",\"value_unit\":");
    jw_cstr(b, jp_kind_unit(k));
    jp_strbuf_puts(b, ",\"thread\":");
    jw_cstr(b, q->f.thread);
    jp_strbuf_printf(b, ",\"samples\":%llu,\"total\":%llu,\"current\":",
                     (unsigned long long)tc->samples, (unsigned long long)tc->value);
    diff_side_meta(b, tc, &q->f, &tot[0]);
    jp_strbuf_puts(b, ",\"base\":");
    diff_side_meta(b, tb, bf, &tot[1]);
    jp_strbuf_putc(b, ',');
    api_meta_common(b, q, info, t0);
    jp_strbuf_printf(b,
                     ",\"nodes\":%zu,\"max_nodes\":%ld,\"truncated\":%s,\"omitted_nodes\":%zu,"
                     "\"limit\":%ld,",
                     kept, max_nodes, kept < count ? "true" : "false", count - kept, limit);
    jp_strbuf tmp;
    jp_strbuf_init(&tmp, 0);
    size_t rows_total = 0;
    diff_top_json(&tmp, d, (size_t)limit, &rows_total);
    jp_strbuf_printf(b, "\"rows_total\":%zu,\"top_truncated\":%s},", rows_total,
                     rows_total > (size_t)limit ? "true" : "false");
    jp_strbuf_append(b, tmp.data, tmp.len);
    jp_strbuf_cleanup(&tmp);
    jp_strbuf_puts(b, ",\"tree\":");
    /* the relinked children are the kept ones, heaviest first */
    api_flame_tree_json(b, d->tree, keep, diff_node_open, d);
    jp_strbuf_puts(b, "}\n");
    free(keep);
}

void api_flamegraph_diff(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long max_nodes, limit;
    bool by_value;
    store_filter bf;
    if (!api_parse(r, o, &q, API_NEED_NS | API_NEED_SERVICE | API_NEED_KIND) ||
        !api_limit(r, o, "max_nodes", 2000, 200000, &max_nodes) ||
        !api_limit(r, o, "limit", 100, 100000, &limit) || !api_by_value(r, o, &by_value) ||
        !diff_base_filter(r, o, &q, &bf))
        return;
    store_flame_totals tot[2];
    store_query_info info[2];
    memset(tot, 0, sizeof tot);
    memset(info, 0, sizeof info);
    jp_profile *cur = api_load_profile(r, o, &q.f, &q.b, false, &tot[0], &info[0]), *base = NULL;
    if (cur) {
        /* both reads share one --query-budget */
        store_budget bb = q.b;
        if (bb.time_ns) {
            bb.time_ns -= jp_time_mono_ns() - t0;
            if (bb.time_ns < 1)
                bb.time_ns = 1;
        }
        base = api_load_profile(r, o, &bf, &bb, false, &tot[1], &info[1]);
    }
    jp_diff *d = NULL;
    jp_error e;
    jp_error_init(&e);
    if (cur && base &&
        jp_diff_new(base, cur, (jp_kind)q.f.kind, false, by_value, JP_DIFF_NONE, &d, &e) != JP_OK)
        srv_error(o, 500, "internal", "%s", e.msg);
    if (d) {
        diff_info_add(&info[0], &info[1]);
        diff_answer(o, &q, d, cur, base, &bf, tot, &info[0], max_nodes, limit, t0);
    }
    jp_diff_free(d);
    jp_profile_free(cur);
    jp_profile_free(base);
}
