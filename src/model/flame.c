#include "model/flame.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

static const char jp_unknown_thread[] = "[unknown thread]";

const char *jp_flame_node_name(const jp_flame *f, uint32_t node, size_t *len)
{
    return jp_flame_frame_name(f, f->nodes[node].frame, len);
}

const char *jp_flame_frame_name(const jp_flame *f, uint32_t fr, size_t *len)
{
    if (fr == JP_FLAME_NONE) {
        *len = 3;
        return "all";
    }
    if (fr == JP_FLAME_UNKNOWN_THREAD) {
        *len = sizeof jp_unknown_thread - 1;
        return jp_unknown_thread;
    }
    return jp_profile_frame_name(f->prof, fr, len);
}

static jp_flame *jp_flame_new(const jp_profile *p, jp_kind k, bool threads)
{
    jp_flame *f = jp_xcalloc(1, sizeof *f);
    f->prof = p;
    f->kind = k;
    f->threads = threads;
    f->focus_frame = JP_FLAME_NONE;
    f->nodes = jp_xgrow(NULL, &f->cap, 1, sizeof *f->nodes);
    f->nodes[0] = (jp_flame_node){.frame = JP_FLAME_NONE,
                                  .parent = JP_FLAME_NONE,
                                  .first_child = JP_FLAME_NONE,
                                  .next_sibling = JP_FLAME_NONE};
    f->count = 1;
    return f;
}

void jp_flame_free(jp_flame *f)
{
    if (!f)
        return;
    free(f->nodes);
    free(f);
}

/* Returns the child of `parent` for `frame`, creating it. */
static uint32_t jp_flame_child(jp_flame *f, jp_u64map *idx, uint32_t parent, uint32_t frame)
{
    bool inserted;
    uint64_t *slot = jp_u64map_upsert(idx, (uint64_t)parent << 32 | frame, f->count, &inserted);
    if (!inserted)
        return (uint32_t)*slot;
    f->nodes = jp_xgrow(f->nodes, &f->cap, f->count + 1, sizeof *f->nodes);
    jp_flame_node *n = &f->nodes[f->count];
    jp_flame_node *par = &f->nodes[parent];
    *n = (jp_flame_node){.frame = frame,
                         .parent = parent,
                         .first_child = JP_FLAME_NONE,
                         .next_sibling = par->first_child,
                         .depth = par->depth + 1};
    par->first_child = (uint32_t)f->count;
    if (n->depth > f->max_depth)
        f->max_depth = n->depth;
    return (uint32_t)f->count++;
}

/* Adds one cell along a path of frames (path[0] under the root). */
static void jp_flame_add_path(jp_flame *f, jp_u64map *idx, const uint32_t *path, size_t n,
                              const jp_sample *c)
{
    uint32_t node = 0;
    f->nodes[0].total_samples += c->samples;
    f->nodes[0].total_value += c->value;
    for (size_t i = 0; i < n; i++) {
        node = jp_flame_child(f, idx, node, path[i]);
        f->nodes[node].total_samples += c->samples;
        f->nodes[node].total_value += c->value;
    }
    f->nodes[node].self_samples += c->samples;
    f->nodes[node].self_value += c->value;
}

typedef struct jp_sort_ctx {
    const jp_flame *f;
    bool by_value;
} jp_sort_ctx;

static int jp_flame_cmp_names(const jp_flame *f, uint32_t fa, uint32_t fb)
{
    size_t lx, ly;
    const char *nx = jp_flame_frame_name(f, fa, &lx);
    const char *ny = jp_flame_frame_name(f, fb, &ly);
    int c = memcmp(nx, ny, lx < ly ? lx : ly);
    return c ? c : (lx < ly ? -1 : lx > ly);
}

static int jp_cmp_desc(uint64_t x, uint64_t y)
{
    return x == y ? 0 : (x < y ? 1 : -1);
}

static int jp_flame_cmp_nodes(const void *a, const void *b, void *vctx)
{
    const jp_sort_ctx *c = vctx;
    const jp_flame_node *x = &c->f->nodes[*(const uint32_t *)a];
    const jp_flame_node *y = &c->f->nodes[*(const uint32_t *)b];
    int r = c->by_value ? jp_cmp_desc(x->total_value, y->total_value)
                        : jp_cmp_desc(x->total_samples, y->total_samples);
    if (!r)
        r = c->by_value ? jp_cmp_desc(x->total_samples, y->total_samples)
                        : jp_cmp_desc(x->total_value, y->total_value);
    return r ? r : jp_flame_cmp_names(c->f, x->frame, y->frame);
}

void jp_flame_sort_by(jp_flame *f, bool by_value)
{
    uint32_t *tmp = NULL;
    size_t cap = 0;
    jp_sort_ctx ctx = {.f = f, .by_value = by_value};
    for (size_t i = 0; i < f->count; i++) {
        size_t n = 0;
        for (uint32_t c = f->nodes[i].first_child; c != JP_FLAME_NONE;
             c = f->nodes[c].next_sibling) {
            tmp = jp_xgrow(tmp, &cap, n + 1, sizeof *tmp);
            tmp[n++] = c;
        }
        if (n < 2)
            continue;
        qsort_r(tmp, n, sizeof *tmp, jp_flame_cmp_nodes, &ctx);
        f->nodes[i].first_child = tmp[0];
        for (size_t j = 0; j + 1 < n; j++)
            f->nodes[tmp[j]].next_sibling = tmp[j + 1];
        f->nodes[tmp[n - 1]].next_sibling = JP_FLAME_NONE;
    }
    free(tmp);
}

static void jp_flame_sort(jp_flame *f)
{
    jp_flame_sort_by(f, true);
}

jp_flame *jp_flame_build(const jp_profile *p, jp_kind k, bool threads)
{
    jp_flame *f = jp_flame_new(p, k, threads);
    const jp_kind_table *t = &p->kinds[k];
    jp_u64map idx;
    jp_u64map_init(&idx);
    uint32_t *path = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < t->count; i++) {
        const jp_sample *c = &t->cells[i];
        const jp_stack *s = &p->stacks[c->stack];
        const uint32_t *fr = jp_profile_stack_frames(p, c->stack);
        size_t n = 0;
        path = jp_xgrow(path, &cap, s->depth + 1, sizeof *path);
        if (threads)
            path[n++] = c->thread == JP_NO_THREAD ? JP_FLAME_UNKNOWN_THREAD : c->thread;
        memcpy(path + n, fr, s->depth * sizeof *fr);
        jp_flame_add_path(f, &idx, path, n + s->depth, c);
    }
    free(path);
    jp_u64map_cleanup(&idx);
    jp_flame_sort(f);
    return f;
}

jp_flame *jp_flame_build_reverse(const jp_profile *p, jp_kind k, uint32_t frame, bool threads)
{
    jp_flame *f = jp_flame_new(p, k, threads);
    f->reversed = true;
    f->focus_frame = frame;
    const jp_kind_table *t = &p->kinds[k];
    jp_u64map idx;
    jp_u64map_init(&idx);
    uint32_t *path = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < t->count; i++) {
        const jp_sample *c = &t->cells[i];
        const jp_stack *s = &p->stacks[c->stack];
        const uint32_t *fr = jp_profile_stack_frames(p, c->stack);
        uint32_t thread = c->thread == JP_NO_THREAD ? JP_FLAME_UNKNOWN_THREAD : c->thread;
        path = jp_xgrow(path, &cap, s->depth + 2, sizeof *path);
        size_t n = 0;
        if (threads && frame == thread) {
            /* A thread is the outermost caller: its callers tree is itself. */
            path[n++] = thread;
            jp_flame_add_path(f, &idx, path, n, c);
            continue;
        }
        size_t at = s->depth;
        for (size_t j = s->depth; j-- > 0;) {
            if (fr[j] == frame) {
                at = j;
                break;
            }
        }
        if (at == s->depth)
            continue;
        for (size_t j = at + 1; j-- > 0;)
            path[n++] = fr[j];
        if (threads)
            path[n++] = thread;
        jp_flame_add_path(f, &idx, path, n, c);
    }
    free(path);
    jp_u64map_cleanup(&idx);
    jp_flame_sort(f);
    return f;
}

/* Index of a node's frame in per-frame arrays sized nframes + 1. */
static size_t jp_flame_frame_slot(const jp_flame *f, uint32_t frame)
{
    return frame == JP_FLAME_UNKNOWN_THREAD ? f->prof->nframes : frame;
}

/* Depth-first walk of the subtree of root, calling visit on entry and leave on
 * exit. Iterative so deep stacks (thousands of frames) cannot overflow. */
typedef void (*jp_flame_visit_fn)(const jp_flame *f, uint32_t node, bool enter, void *ctx);

static void jp_flame_walk(const jp_flame *f, uint32_t root, jp_flame_visit_fn fn, void *ctx)
{
    uint32_t *st = NULL;
    size_t cap = 0, n = 0;
    fn(f, root, true, ctx);
    uint32_t cur = f->nodes[root].first_child;
    st = jp_xgrow(st, &cap, 1, sizeof *st);
    st[n++] = root;
    while (n) {
        if (cur != JP_FLAME_NONE) {
            fn(f, cur, true, ctx);
            st = jp_xgrow(st, &cap, n + 1, sizeof *st);
            st[n++] = cur;
            cur = f->nodes[cur].first_child;
        } else {
            uint32_t done = st[--n];
            fn(f, done, false, ctx);
            cur = n ? f->nodes[done].next_sibling : JP_FLAME_NONE;
            if (done == root)
                break;
        }
    }
    free(st);
}

typedef struct jp_top_ctx {
    uint32_t *on_path;
    jp_top_row *acc;
} jp_top_ctx;

static void jp_top_visit(const jp_flame *f, uint32_t node, bool enter, void *vctx)
{
    jp_top_ctx *c = vctx;
    const jp_flame_node *nd = &f->nodes[node];
    if (nd->frame == JP_FLAME_NONE)
        return;
    size_t s = jp_flame_frame_slot(f, nd->frame);
    if (!enter) {
        c->on_path[s]--;
        return;
    }
    jp_top_row *r = &c->acc[s];
    r->frame = nd->frame;
    r->self_samples += nd->self_samples;
    r->self_value += nd->self_value;
    if (c->on_path[s]++ == 0) {
        r->total_samples += nd->total_samples;
        r->total_value += nd->total_value;
    }
}

static int jp_top_cmp(const void *a, const void *b, void *vctx)
{
    const jp_sort_ctx *c = vctx;
    const jp_top_row *x = a, *y = b;
    int r = c->by_value ? jp_cmp_desc(x->self_value, y->self_value)
                        : jp_cmp_desc(x->self_samples, y->self_samples);
    if (!r)
        r = c->by_value ? jp_cmp_desc(x->total_value, y->total_value)
                        : jp_cmp_desc(x->total_samples, y->total_samples);
    return r ? r : jp_flame_cmp_names(c->f, x->frame, y->frame);
}

size_t jp_flame_top(const jp_flame *f, uint32_t root, bool by_value, jp_top_row **rows)
{
    size_t nslots = f->prof->nframes + 1;
    jp_top_ctx c = {.on_path = jp_xcalloc(nslots, sizeof *c.on_path),
                    .acc = jp_xcalloc(nslots, sizeof *c.acc)};
    for (size_t i = 0; i < nslots; i++)
        c.acc[i].frame = JP_FLAME_NONE;
    if (root < f->count)
        jp_flame_walk(f, root, jp_top_visit, &c);
    size_t n = 0;
    for (size_t i = 0; i < nslots; i++)
        if (c.acc[i].frame != JP_FLAME_NONE)
            c.acc[n++] = c.acc[i];
    jp_sort_ctx sc = {.f = f, .by_value = by_value};
    qsort_r(c.acc, n, sizeof *c.acc, jp_top_cmp, &sc);
    free(c.on_path);
    *rows = c.acc;
    return n;
}

typedef struct jp_search_ctx {
    regex_t re;
    int8_t *memo; /* per frame slot: -1 unknown, 0 no, 1 match */
    uint8_t *matches;
    uint32_t matched_above; /* matching nodes on the current path */
    bool by_value;
    uint64_t share;
    long count;
    char *name;
    size_t name_cap;
} jp_search_ctx;

static bool jp_search_frame_matches(const jp_flame *f, uint32_t node, jp_search_ctx *c)
{
    uint32_t fr = f->nodes[node].frame;
    if (fr == JP_FLAME_NONE)
        return false;
    size_t s = jp_flame_frame_slot(f, fr);
    if (c->memo[s] < 0) {
        size_t len;
        const char *nm = jp_flame_node_name(f, node, &len);
        c->name = jp_xgrow(c->name, &c->name_cap, len + 1, 1);
        memcpy(c->name, nm, len);
        c->name[len] = '\0';
        c->memo[s] = (int8_t)(regexec(&c->re, c->name, 0, NULL, 0) == 0);
    }
    return c->memo[s] == 1;
}

static void jp_search_visit(const jp_flame *f, uint32_t node, bool enter, void *vctx)
{
    jp_search_ctx *c = vctx;
    bool m = jp_search_frame_matches(f, node, c);
    if (!m)
        return;
    if (!enter) {
        c->matched_above--;
        return;
    }
    c->matches[node] = 1;
    c->count++;
    if (c->matched_above++ == 0)
        c->share += jp_flame_total(f, node, c->by_value);
}

long jp_flame_search(const jp_flame *f, uint32_t root, const char *pattern, bool by_value,
                     uint8_t *matches, uint64_t *share, char *errbuf, size_t errlen)
{
    jp_search_ctx c = {.by_value = by_value, .matches = matches};
    int rc = regcomp(&c.re, pattern, REG_EXTENDED | REG_NOSUB);
    if (rc) {
        if (errbuf && errlen)
            regerror(rc, &c.re, errbuf, errlen);
        return -1;
    }
    size_t nslots = f->prof->nframes + 1;
    c.memo = jp_xmalloc(nslots);
    memset(c.memo, -1, nslots);
    memset(matches, 0, f->count);
    if (root < f->count)
        jp_flame_walk(f, root, jp_search_visit, &c);
    regfree(&c.re);
    free(c.memo);
    free(c.name);
    *share = c.share;
    return c.count;
}
