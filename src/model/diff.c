/* diff.c - two profiles of one kind compared (see diff.h). */
#include "model/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/xalloc.h"

static const char *const norm_names[] = {"none", "sample", "second"};

const char *jp_diff_norm_name(jp_diff_norm n)
{
    return (unsigned)n < 3 ? norm_names[n] : NULL;
}

bool jp_diff_norm_parse(const char *s, jp_diff_norm *out)
{
    for (int i = 0; i < 3; i++) {
        if (!strcmp(s, norm_names[i])) {
            *out = (jp_diff_norm)i;
            return true;
        }
    }
    return false;
}

static uint64_t measure(const jp_diff *d, uint64_t samples, uint64_t value)
{
    return d->by_value ? value : samples;
}

static int64_t span_of(const jp_profile *p)
{
    return p->start_ns && p->end_ns > p->start_ns ? p->end_ns - p->start_ns : 0;
}

static double scale_of(const jp_diff *d, jp_diff_norm norm, bool by_value)
{
    if (norm == JP_DIFF_PER_SAMPLE) {
        const jp_kind_table *t = &d->prof->kinds[d->kind];
        uint64_t o = by_value ? d->old_total_value : d->old_total_samples;
        return o ? (double)(by_value ? t->value : t->samples) / (double)o : 1.0;
    }
    if (norm == JP_DIFF_PER_SECOND && d->old_span_ns > 0 && d->new_span_ns > 0)
        return (double)d->new_span_ns / (double)d->old_span_ns;
    return 1.0;
}

double jp_diff_scale_for(const jp_diff *d, bool by_value)
{
    return scale_of(d, d->norm, by_value);
}

jp_err jp_diff_set_norm(jp_diff *d, jp_diff_norm norm, jp_error *err)
{
    if (norm == JP_DIFF_PER_SECOND && (d->old_span_ns <= 0 || d->new_span_ns <= 0))
        return jp_error_set(err, JP_ERR_USAGE,
                            "per-second comparison needs both recordings' time ranges; "
                            "%s has none (compare per sample instead)",
                            d->old_span_ns <= 0 ? "the baseline" : "the new profile");
    d->norm = norm;
    d->old_scale = scale_of(d, norm, d->by_value);
    return JP_OK;
}

/* Splits the merged cells: what the old profile added to a cell is the old
 * side; the cell keeps the new side (0 for stacks only the old one has). */
static void split_cells(jp_diff *d, size_t nnew, const uint64_t *new_s, const uint64_t *new_v)
{
    jp_kind_table *t = &d->prof->kinds[d->kind];
    d->old_samples = jp_xcalloc(t->count ? t->count : 1, sizeof *d->old_samples);
    d->old_value = jp_xcalloc(t->count ? t->count : 1, sizeof *d->old_value);
    t->samples = t->value = 0;
    for (size_t i = 0; i < t->count; i++) {
        jp_sample *c = &t->cells[i];
        uint64_t ns = i < nnew ? new_s[i] : 0, nv = i < nnew ? new_v[i] : 0;
        d->old_samples[i] = c->samples - ns;
        d->old_value[i] = c->value - nv;
        d->old_total_samples += d->old_samples[i];
        d->old_total_value += d->old_value[i];
        c->samples = ns;
        c->value = nv;
        t->samples += ns;
        t->value += nv;
    }
}

jp_err jp_diff_new(const jp_profile *old, const jp_profile *new_, jp_kind k, bool threads,
                   bool by_value, jp_diff_norm norm, jp_diff **out, jp_error *err)
{
    *out = NULL;
    if ((unsigned)k >= JP_KIND_COUNT)
        return jp_error_set(err, JP_ERR_USAGE, "no such profile kind %d", (int)k);
    jp_diff *d = jp_xcalloc(1, sizeof *d);
    d->kind = k;
    d->threads = threads;
    d->by_value = by_value;
    d->norm = norm;
    d->prof = jp_profile_new();
    jp_profile_merge_kinds(d->prof, new_, 1u << k);
    jp_kind_table *t = &d->prof->kinds[k];
    size_t nnew = t->count;
    uint64_t events = t->events, truncated = t->truncated;
    uint64_t *new_s = jp_xcalloc(nnew ? nnew : 1, sizeof *new_s);
    uint64_t *new_v = jp_xcalloc(nnew ? nnew : 1, sizeof *new_v);
    for (size_t i = 0; i < nnew; i++) {
        new_s[i] = t->cells[i].samples;
        new_v[i] = t->cells[i].value;
    }
    jp_profile_merge_kinds(d->prof, old, 1u << k);
    split_cells(d, nnew, new_s, new_v);
    free(new_s);
    free(new_v);
    t->events = events;
    t->truncated = truncated;
    t->period_ns = new_->kinds[k].period_ns;
    d->prof->start_ns = new_->start_ns;
    d->prof->end_ns = new_->end_ns;
    d->old_span_ns = span_of(old);
    d->new_span_ns = span_of(new_);
    jp_err rc = jp_diff_set_norm(d, norm, err);
    if (rc) {
        jp_diff_free(d);
        return rc;
    }
    *out = d;
    return JP_OK;
}

void jp_diff_free(jp_diff *d)
{
    if (!d)
        return;
    jp_flame_free(d->tree);
    free(d->node_old_total);
    free(d->node_old_self);
    free(d->old_samples);
    free(d->old_value);
    jp_profile_free(d->prof);
    free(d);
}

static uint32_t child_with(const jp_flame *f, uint32_t node, uint32_t frame)
{
    for (uint32_t c = f->nodes[node].first_child; c != JP_FLAME_NONE; c = f->nodes[c].next_sibling)
        if (f->nodes[c].frame == frame)
            return c;
    return JP_FLAME_NONE;
}

void jp_diff_tree(jp_diff *d)
{
    if (d->tree)
        return;
    d->tree = jp_flame_build(d->prof, d->kind, d->threads);
    jp_flame_sort_by(d->tree, d->by_value);
    size_t n = d->tree->count ? d->tree->count : 1;
    d->node_old_total = jp_xcalloc(n, sizeof *d->node_old_total);
    d->node_old_self = jp_xcalloc(n, sizeof *d->node_old_self);
    const jp_kind_table *t = &d->prof->kinds[d->kind];
    for (size_t i = 0; i < t->count; i++) {
        uint64_t o = measure(d, d->old_samples[i], d->old_value[i]);
        if (!o)
            continue;
        const jp_sample *c = &t->cells[i];
        uint32_t node = 0;
        d->node_old_total[0] += o;
        if (d->threads) {
            node = child_with(d->tree, node,
                              c->thread == JP_NO_THREAD ? JP_FLAME_UNKNOWN_THREAD : c->thread);
            if (node == JP_FLAME_NONE)
                continue; /* cannot happen: every old stack has a (zero) cell */
            d->node_old_total[node] += o;
        }
        const uint32_t *fr = jp_profile_stack_frames(d->prof, c->stack);
        for (uint32_t j = 0; j < d->prof->stacks[c->stack].depth && node != JP_FLAME_NONE; j++) {
            node = child_with(d->tree, node, fr[j]);
            if (node != JP_FLAME_NONE)
                d->node_old_total[node] += o;
        }
        if (node != JP_FLAME_NONE)
            d->node_old_self[node] += o;
    }
}

/* Swaps the old side into the cells of d->prof (and back: an involution). */
static void swap_sides(jp_diff *d)
{
    jp_kind_table *t = &d->prof->kinds[d->kind];
    uint64_t s = 0, v = 0;
    for (size_t i = 0; i < t->count; i++) {
        jp_sample *c = &t->cells[i];
        uint64_t x = c->samples, y = c->value;
        c->samples = d->old_samples[i];
        c->value = d->old_value[i];
        d->old_samples[i] = x;
        d->old_value[i] = y;
        s += c->samples;
        v += c->value;
    }
    t->samples = s;
    t->value = v;
}

/* child (frame) of node in tree g, through an index of (parent, frame) */
static uint64_t child_key(uint32_t parent, uint32_t frame)
{
    return (uint64_t)parent << 32 | frame;
}

jp_flame *jp_diff_old_tree(jp_diff *d, const jp_flame *f, uint32_t **map)
{
    swap_sides(d);
    jp_flame *g = f->reversed ? jp_flame_build_reverse(d->prof, d->kind, f->focus_frame, f->threads)
                              : jp_flame_build(d->prof, d->kind, f->threads);
    swap_sides(d);
    jp_u64map idx;
    jp_u64map_init(&idx);
    for (uint32_t n = 1; n < g->count; n++)
        jp_u64map_put(&idx, child_key(g->nodes[n].parent, g->nodes[n].frame), n);
    uint32_t *m = jp_xcalloc(f->count ? f->count : 1, sizeof *m);
    /* nodes are numbered parents first, so one pass in index order works */
    for (uint32_t n = 1; n < f->count; n++) {
        uint32_t pm = m[f->nodes[n].parent];
        uint64_t at;
        m[n] = pm != JP_FLAME_NONE && jp_u64map_get(&idx, child_key(pm, f->nodes[n].frame), &at)
                   ? (uint32_t)at
                   : JP_FLAME_NONE;
    }
    jp_u64map_cleanup(&idx);
    *map = m;
    return g;
}

/* A frame's name; the threads tree's "no thread" marker is past the frames. */
static const char *row_name(const jp_profile *p, uint32_t frame, size_t *len)
{
    static const char unknown[] = "[unknown thread]";
    if (frame >= p->nframes) {
        *len = sizeof unknown - 1;
        return unknown;
    }
    return jp_profile_frame_name(p, frame, len);
}

static int row_cmp(const void *a, const void *b, void *prof)
{
    const jp_diff_row *x = a, *y = b;
    double dx = fabs((double)x->new_self - x->old_self),
           dy = fabs((double)y->new_self - y->old_self);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    dx = fabs((double)x->new_total - x->old_total);
    dy = fabs((double)y->new_total - y->old_total);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    size_t lx, ly;
    const char *nx = row_name(prof, x->frame, &lx);
    const char *ny = row_name(prof, y->frame, &ly);
    int c = memcmp(nx, ny, lx < ly ? lx : ly);
    return c ? c : (lx < ly ? -1 : lx > ly);
}

size_t jp_diff_top(const jp_diff *d, size_t limit, jp_diff_row **rows)
{
    const jp_profile *p = d->prof;
    size_t nf = p->nframes ? p->nframes : 1;
    uint64_t *acc = jp_xcalloc(nf * 4, sizeof *acc); /* old self, old total, new self, new total */
    size_t *seen = jp_xcalloc(nf, sizeof *seen);
    const jp_kind_table *t = &p->kinds[d->kind];
    for (size_t i = 0; i < t->count; i++) {
        const jp_sample *c = &t->cells[i];
        uint64_t o = measure(d, d->old_samples[i], d->old_value[i]);
        uint64_t n = measure(d, c->samples, c->value);
        const uint32_t *fr = jp_profile_stack_frames(p, c->stack);
        uint32_t depth = p->stacks[c->stack].depth;
        for (uint32_t j = 0; j < depth; j++) {
            if (seen[fr[j]] == i + 1)
                continue; /* recursion counts once */
            seen[fr[j]] = i + 1;
            acc[fr[j] * 4 + 1] += o;
            acc[fr[j] * 4 + 3] += n;
        }
        if (depth) {
            acc[fr[depth - 1] * 4] += o;
            acc[fr[depth - 1] * 4 + 2] += n;
        }
    }
    jp_diff_row *out = jp_xcalloc(nf, sizeof *out);
    size_t count = 0;
    for (uint32_t f = 0; f < p->nframes; f++) {
        const uint64_t *a = acc + (size_t)f * 4;
        if (!a[1] && !a[3])
            continue;
        out[count++] = (jp_diff_row){.frame = f,
                                     .old_self = jp_diff_old(d, a[0]),
                                     .old_total = jp_diff_old(d, a[1]),
                                     .new_self = a[2],
                                     .new_total = a[3]};
    }
    qsort_r(out, count, sizeof *out, row_cmp, (void *)p);
    free(acc);
    free(seen);
    if (limit && count > limit)
        count = limit;
    *rows = out;
    return count;
}

size_t jp_diff_top_under(const jp_diff *d, const jp_flame *f, const jp_flame *old,
                         const uint32_t *map, uint32_t root, bool by_value, jp_diff_row **rows)
{
    jp_top_row *nr = NULL, *orow = NULL;
    size_t nn = jp_flame_top(f, root, by_value, &nr), no = 0;
    if (root < f->count && map[root] != JP_FLAME_NONE)
        no = jp_flame_top(old, map[root], by_value, &orow);
    double scale = jp_diff_scale_for(d, by_value);
    /* frames index per-frame slots; the "no thread" marker gets the last */
    size_t nf = (size_t)d->prof->nframes + 1;
    uint32_t *at = jp_xcalloc(nf, sizeof *at); /* frame -> row + 1 */
    jp_diff_row *out = jp_xcalloc(nn + no ? nn + no : 1, sizeof *out);
    size_t count = 0;
    for (size_t i = 0; i < nn; i++) {
        size_t slot = nr[i].frame < d->prof->nframes ? nr[i].frame : nf - 1;
        out[count] = (jp_diff_row){.frame = nr[i].frame,
                                   .new_self = by_value ? nr[i].self_value : nr[i].self_samples,
                                   .new_total = by_value ? nr[i].total_value : nr[i].total_samples};
        at[slot] = (uint32_t)++count;
    }
    for (size_t i = 0; i < no; i++) {
        size_t slot = orow[i].frame < d->prof->nframes ? orow[i].frame : nf - 1;
        if (!at[slot]) {
            out[count] = (jp_diff_row){.frame = orow[i].frame};
            at[slot] = (uint32_t)++count;
        }
        jp_diff_row *r = &out[at[slot] - 1];
        r->old_self = (double)(by_value ? orow[i].self_value : orow[i].self_samples) * scale;
        r->old_total = (double)(by_value ? orow[i].total_value : orow[i].total_samples) * scale;
    }
    qsort_r(out, count, sizeof *out, row_cmp, (void *)d->prof);
    free(at);
    free(nr);
    free(orow);
    *rows = out;
    return count;
}
