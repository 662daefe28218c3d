/* diff.c - two profiles of one kind compared (see diff.h). */
#include "model/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

static jp_err set_scale(jp_diff *d, const jp_profile *old, const jp_profile *new_, jp_error *err)
{
    d->old_scale = 1.0;
    if (d->norm == JP_DIFF_PER_SAMPLE) {
        uint64_t o = measure(d, d->old_total_samples, d->old_total_value);
        const jp_kind_table *t = &d->prof->kinds[d->kind];
        if (o)
            d->old_scale = (double)measure(d, t->samples, t->value) / (double)o;
    } else if (d->norm == JP_DIFF_PER_SECOND) {
        int64_t od = old->end_ns - old->start_ns, nd = new_->end_ns - new_->start_ns;
        if (!old->start_ns || !new_->start_ns || od <= 0 || nd <= 0)
            return jp_error_set(err, JP_ERR_USAGE,
                                "per-second comparison needs both recordings' time ranges; "
                                "%s has none (compare per sample instead)",
                                od <= 0 || !old->start_ns ? "the baseline" : "the new profile");
        d->old_scale = (double)nd / (double)od;
    }
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
    jp_err rc = set_scale(d, old, new_, err);
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
    const char *nx = jp_profile_frame_name(prof, x->frame, &lx);
    const char *ny = jp_profile_frame_name(prof, y->frame, &ly);
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
