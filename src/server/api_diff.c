/* api_diff.c - GET /api/v1/flamegraph/diff: one flame query (a range, a
 * pod) against a baseline (another range, another pod, or both), merged on
 * the server into one tree whose nodes carry both sides, plus the frames
 * whose share changed most.
 *
 * Why on the server: each side read on its own is cut to max_nodes
 * separately, so a client diffing two truncated trees would see frames
 * "vanish" that were only cut. Here both sides are merged in full first, and
 * only then is the tree cut (by the larger of the two shares, so a node
 * that shrank to nothing is kept as long as it was heavy before). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/profile.h"
#include "server/api_int.h"

#define DIFF_NONE UINT32_MAX

typedef struct diff_node {
    uint32_t frame; /* profile frame index; DIFF_NONE for the root */
    uint32_t parent, first_child, next_sibling, depth;
    uint64_t self[2], total[2]; /* [0] current, [1] baseline; unit of `by` */
} diff_node;

typedef struct diff_frame {
    uint64_t self[2], total[2];
    uint32_t stamp; /* last row that counted this frame's total */
} diff_frame;

typedef struct diff_build {
    jp_profile *p; /* frame names, shared by both sides */
    diff_node *nodes;
    size_t count, cap;
    jp_u64map index; /* parent << 32 | frame -> node */
    diff_frame *frames;
    size_t frames_cap;
    uint32_t stamp;
    uint32_t max_depth;
    int side; /* 0 current, 1 baseline: which counters rows go to */
    bool by_value;
    uint64_t samples[2], value[2];
    uint32_t *idx;
    size_t idx_cap;
} diff_build;

static uint32_t diff_child(diff_build *d, uint32_t parent, uint32_t frame)
{
    bool inserted;
    uint64_t *slot =
        jp_u64map_upsert(&d->index, (uint64_t)parent << 32 | frame, d->count, &inserted);
    if (!inserted)
        return (uint32_t)*slot;
    d->nodes = jp_xgrow(d->nodes, &d->cap, d->count + 1, sizeof *d->nodes);
    uint32_t n = (uint32_t)d->count++;
    diff_node *x = &d->nodes[n];
    memset(x, 0, sizeof *x);
    x->frame = frame;
    x->parent = parent;
    x->depth = d->nodes[parent].depth + 1;
    x->next_sibling = d->nodes[parent].first_child;
    x->first_child = DIFF_NONE;
    d->nodes[parent].first_child = n;
    if (x->depth > d->max_depth)
        d->max_depth = x->depth;
    return n;
}

static bool diff_row_cb(const store_stack_row *row, void *ctx)
{
    diff_build *d = ctx;
    int s = d->side;
    uint64_t v = d->by_value ? row->value : row->samples;
    d->samples[s] += row->samples;
    d->value[s] += row->value;
    d->idx = jp_xgrow(d->idx, &d->idx_cap, row->depth + 1, sizeof *d->idx);
    for (uint32_t i = 0; i < row->depth; i++)
        d->idx[i] = jp_profile_frame(d->p, row->frames[i], row->frame_lens[i], JP_FRAME_UNKNOWN);
    if (d->p->nframes > d->frames_cap) {
        size_t old = d->frames_cap;
        d->frames = jp_xgrow(d->frames, &d->frames_cap, d->p->nframes, sizeof *d->frames);
        memset(d->frames + old, 0, (d->frames_cap - old) * sizeof *d->frames);
    }
    uint32_t node = 0;
    d->nodes[0].total[s] += v;
    d->stamp++;
    for (uint32_t i = 0; i < row->depth; i++) {
        node = diff_child(d, node, d->idx[i]);
        d->nodes[node].total[s] += v;
        diff_frame *f = &d->frames[d->idx[i]];
        if (f->stamp != d->stamp) { /* a recursive frame counts once per stack */
            f->stamp = d->stamp;
            f->total[s] += v;
        }
    }
    d->nodes[node].self[s] += v;
    if (row->depth)
        d->frames[d->idx[row->depth - 1]].self[s] += v;
    return true;
}

/* Share of a side's whole (0 when the side is empty). */
static double diff_share(uint64_t x, uint64_t all)
{
    return all ? (double)x / (double)all : 0.0;
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

/* Keeps the max_nodes heaviest nodes (by the larger of their two shares, which
 * never grows from parent to child, so kept trees stay whole) and relinks each
 * kept node's children heaviest first. Returns the number kept. */
static size_t diff_select(diff_build *d, size_t max_nodes, uint8_t *keep)
{
    uint64_t all0 = d->nodes[0].total[0], all1 = d->nodes[0].total[1];
    diff_order *order = jp_xcalloc(d->count, sizeof *order);
    for (size_t i = 0; i < d->count; i++) {
        double a = diff_share(d->nodes[i].total[0], all0),
               b = diff_share(d->nodes[i].total[1], all1);
        order[i] = (diff_order){a > b ? a : b, d->nodes[i].depth, (uint32_t)i};
    }
    qsort(order, d->count, sizeof *order, diff_order_cmp);
    uint32_t *last = jp_xcalloc(d->count, sizeof *last);
    for (size_t i = 0; i < d->count; i++)
        d->nodes[i].first_child = DIFF_NONE;
    size_t n = 0;
    for (size_t i = 0; i < d->count && n < max_nodes; i++) {
        uint32_t v = order[i].node, parent = d->nodes[v].parent;
        if (v != 0 && !keep[parent])
            continue;
        keep[v] = 1;
        n++;
        d->nodes[v].next_sibling = DIFF_NONE;
        if (v == 0)
            continue;
        if (d->nodes[parent].first_child == DIFF_NONE)
            d->nodes[parent].first_child = v;
        else
            d->nodes[last[parent]].next_sibling = v;
        last[parent] = v;
    }
    free(last);
    free(order);
    return n;
}

static void diff_node_open(jp_strbuf *b, const diff_build *d, uint32_t v)
{
    const diff_node *x = &d->nodes[v];
    size_t len = 3;
    const char *name = "all";
    if (x->frame != DIFF_NONE)
        name = jp_profile_frame_name(d->p, x->frame, &len);
    jp_strbuf_puts(b, "{\"name\":");
    jw_str(b, name, len);
    jp_strbuf_printf(b,
                     ",\"self\":%llu,\"total\":%llu,\"base_self\":%llu,\"base_total\":%llu,"
                     "\"children\":[",
                     (unsigned long long)x->self[0], (unsigned long long)x->total[0],
                     (unsigned long long)x->self[1], (unsigned long long)x->total[1]);
}

/* The kept tree as JSON, iteratively (depth does not grow the C stack). */
static void diff_tree_json(jp_strbuf *b, const diff_build *d)
{
    uint32_t *cursor = jp_xcalloc(d->max_depth + 2, sizeof *cursor);
    bool *first = jp_xcalloc(d->max_depth + 2, sizeof *first);
    size_t sp = 0;
    diff_node_open(b, d, 0);
    cursor[0] = d->nodes[0].first_child;
    first[0] = true;
    for (;;) {
        uint32_t c = cursor[sp];
        if (c == DIFF_NONE) {
            jp_strbuf_puts(b, "]}");
            if (sp == 0)
                break;
            sp--;
            continue;
        }
        cursor[sp] = d->nodes[c].next_sibling;
        if (!first[sp])
            jp_strbuf_putc(b, ',');
        first[sp] = false;
        diff_node_open(b, d, c);
        sp++;
        cursor[sp] = d->nodes[c].first_child;
        first[sp] = true;
    }
    free(cursor);
    free(first);
}

typedef struct diff_top {
    double delta; /* change of the self share, current minus baseline */
    uint32_t frame;
} diff_top;

static int diff_top_cmp(const void *x, const void *y)
{
    const diff_top *a = x, *b = y;
    double da = fabs(a->delta), db = fabs(b->delta);
    if (da != db)
        return da > db ? -1 : 1;
    return a->frame < b->frame ? -1 : a->frame > b->frame;
}

/* The frames whose self share changed most, each side's self and total. */
static void diff_top_json(jp_strbuf *b, const diff_build *d, size_t limit, size_t *rows_total)
{
    uint64_t all0 = d->nodes[0].total[0], all1 = d->nodes[0].total[1];
    diff_top *rows = jp_xcalloc(d->p->nframes + 1, sizeof *rows);
    size_t n = 0;
    for (size_t i = 0; i < d->p->nframes && i < d->frames_cap; i++) {
        const diff_frame *f = &d->frames[i];
        if (!f->total[0] && !f->total[1])
            continue;
        rows[n++] =
            (diff_top){diff_share(f->self[0], all0) - diff_share(f->self[1], all1), (uint32_t)i};
    }
    qsort(rows, n, sizeof *rows, diff_top_cmp);
    *rows_total = n;
    jp_strbuf_puts(b, "\"top\":[");
    for (size_t i = 0; i < n && i < limit; i++) {
        const diff_frame *f = &d->frames[rows[i].frame];
        size_t len;
        const char *name = jp_profile_frame_name(d->p, rows[i].frame, &len);
        jp_strbuf_puts(b, i ? ",{\"name\":" : "{\"name\":");
        jw_str(b, name, len);
        jp_strbuf_printf(b,
                         ",\"self\":%llu,\"total\":%llu,\"base_self\":%llu,\"base_total\":%llu,"
                         "\"self_delta\":%.6f,\"total_delta\":%.6f}",
                         (unsigned long long)f->self[0], (unsigned long long)f->total[0],
                         (unsigned long long)f->self[1], (unsigned long long)f->total[1],
                         rows[i].delta,
                         diff_share(f->total[0], all0) - diff_share(f->total[1], all1));
    }
    jp_strbuf_putc(b, ']');
    free(rows);
}

/* The baseline's filter: base_from/base_to/base_pod, each defaulting to the
 * current one; given only one end, the baseline is as long as the current
 * range. An empty base_pod means every pod. */
static bool diff_base_filter(srv_req *r, srv_resp *o, const api_q *q, store_filter *bf)
{
    *bf = q->f;
    const char *bp = srv_arg(r, "base_pod");
    if (bp)
        bf->pod = *bp ? bp : NULL;
    const char *bfrom = srv_arg(r, "base_from"), *bto = srv_arg(r, "base_to");
    int64_t len = q->f.to_ns - q->f.from_ns;
    if (!api_time_arg(r, o, "base_to", q->now, &bf->to_ns) ||
        !api_time_arg(r, o, "base_from", q->now, &bf->from_ns))
        return false;
    if (bto && *bto && !(bfrom && *bfrom))
        bf->from_ns = bf->to_ns - len;
    else if (bfrom && *bfrom && !(bto && *bto))
        bf->to_ns = bf->from_ns + len;
    if (bf->from_ns >= bf->to_ns) {
        srv_error(o, 400, "malformed", "'base_from' must be before 'base_to'");
        return false;
    }
    return true;
}

static void diff_side_meta(jp_strbuf *b, const diff_build *d, int s, const store_filter *f,
                           const store_flame_totals *tot)
{
    jp_strbuf_puts(b, "{\"pod\":");
    jw_cstr(b, f->pod);
    jp_strbuf_puts(b, ",\"from\":");
    jw_time(b, f->from_ns);
    jp_strbuf_puts(b, ",\"to\":");
    jw_time(b, f->to_ns);
    jp_strbuf_printf(b, ",\"samples\":%llu,\"total\":%llu,\"windows\":%llu,\"first\":",
                     (unsigned long long)d->samples[s], (unsigned long long)d->value[s],
                     (unsigned long long)tot->windows);
    jw_time(b, tot->first_ns);
    jp_strbuf_puts(b, ",\"last\":");
    jw_time(b, tot->last_ns);
    jp_strbuf_putc(b, '}');
}

/* Runs one side's store query into d; false after an error answer. */
static bool diff_load(srv_req *r, srv_resp *o, diff_build *d, int side, const store_filter *f,
                      const store_budget *bud, store_flame_totals *tot, store_query_info *info)
{
    jp_error e;
    jp_error_init(&e);
    d->side = side;
    jp_err rc = r->s->st->ops->flame(r->s->st, f, bud, diff_row_cb, d, tot, info, &e);
    if (rc)
        api_store_error(o, rc, &e);
    return rc == JP_OK;
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

static void diff_answer(srv_resp *o, const api_q *q, diff_build *d, const store_filter *bf,
                        const store_flame_totals tot[2], const store_query_info *info,
                        long max_nodes, long limit, int64_t t0)
{
    jp_strbuf *b = &o->body;
    uint8_t *keep = jp_xcalloc(d->count, 1);
    size_t kept = diff_select(d, (size_t)max_nodes, keep);
    jp_kind k = (jp_kind)q->f.kind;
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
                     (unsigned long long)d->samples[0], (unsigned long long)d->value[0]);
    diff_side_meta(b, d, 0, &q->f, &tot[0]);
    jp_strbuf_puts(b, ",\"base\":");
    diff_side_meta(b, d, 1, bf, &tot[1]);
    jp_strbuf_putc(b, ',');
    api_meta_common(b, q, info, t0);
    jp_strbuf_printf(b,
                     ",\"nodes\":%zu,\"max_nodes\":%ld,\"truncated\":%s,\"omitted_nodes\":%zu,"
                     "\"limit\":%ld,",
                     kept, max_nodes, kept < d->count ? "true" : "false", d->count - kept, limit);
    jp_strbuf tmp;
    jp_strbuf_init(&tmp, 0);
    size_t rows_total = 0;
    diff_top_json(&tmp, d, (size_t)limit, &rows_total);
    jp_strbuf_printf(b, "\"rows_total\":%zu,\"top_truncated\":%s},", rows_total,
                     rows_total > (size_t)limit ? "true" : "false");
    jp_strbuf_append(b, tmp.data, tmp.len);
    jp_strbuf_cleanup(&tmp);
    jp_strbuf_puts(b, ",\"tree\":");
    /* diff_tree_json follows the relinked (kept) children only */
    diff_tree_json(b, d);
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
    diff_build d = {.p = jp_profile_new(), .by_value = by_value};
    jp_u64map_init(&d.index);
    d.nodes = jp_xgrow(NULL, &d.cap, 1, sizeof *d.nodes);
    d.count = 1;
    memset(&d.nodes[0], 0, sizeof d.nodes[0]);
    d.nodes[0].frame = d.nodes[0].parent = d.nodes[0].next_sibling = DIFF_NONE;
    d.nodes[0].first_child = DIFF_NONE;
    store_flame_totals tot[2];
    store_query_info info[2];
    memset(tot, 0, sizeof tot);
    memset(info, 0, sizeof info);
    bool ok = diff_load(r, o, &d, 0, &q.f, &q.b, &tot[0], &info[0]);
    if (ok) {
        /* both reads share one --query-budget */
        store_budget bb = q.b;
        if (bb.time_ns) {
            bb.time_ns -= jp_time_mono_ns() - t0;
            if (bb.time_ns < 1)
                bb.time_ns = 1;
        }
        ok = diff_load(r, o, &d, 1, &bf, &bb, &tot[1], &info[1]);
    }
    if (ok) {
        diff_info_add(&info[0], &info[1]);
        diff_answer(o, &q, &d, &bf, tot, &info[0], max_nodes, limit, t0);
    }
    jp_u64map_cleanup(&d.index);
    free(d.nodes);
    free(d.frames);
    free(d.idx);
    jp_profile_free(d.p);
}
