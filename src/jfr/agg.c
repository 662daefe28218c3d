/* agg.c - the accumulator of a chunk's events (see agg.h). */
#include "jfr/agg.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jfr_acc_init(jfr_acc *a)
{
    memset(a, 0, sizeof *a);
}

void jfr_acc_cleanup(jfr_acc *a)
{
    free(a->cells);
    memset(a, 0, sizeof *a);
}

void jfr_acc_grow(jfr_acc *a)
{
    size_t ncap = a->cap ? a->cap * 2 : 1024;
    jfr_agg_cell *n = jp_xcalloc(ncap, sizeof *n);
    for (size_t i = 0; i < a->cap; i++) {
        const jfr_agg_cell *c = &a->cells[i];
        if (!c->used)
            continue;
        size_t j = jfr_acc_hash(c->slot, c->stack, c->thread, c->state) & (ncap - 1);
        while (n[j].used)
            j = (j + 1) & (ncap - 1);
        n[j] = *c;
    }
    free(a->cells);
    a->cells = n;
    a->cap = ncap;
}

void jfr_acc_merge(jfr_acc *dst, const jfr_acc *src)
{
    for (size_t i = 0; i < src->cap; i++) {
        const jfr_agg_cell *c = &src->cells[i];
        if (c->used)
            jfr_acc_add(dst, c->slot, c->stack, c->thread, c->state, c->events, c->samples,
                        c->value);
    }
    dst->events_read += src->events_read;
    dst->events_filtered += src->events_filtered;
    dst->lost += src->lost;
}

static int cell_cmp(const void *x, const void *y)
{
    const jfr_agg_cell *a = x, *b = y;
    if (a->slot != b->slot)
        return a->slot < b->slot ? -1 : 1;
    if (a->stack != b->stack)
        return a->stack < b->stack ? -1 : 1;
    if (a->thread != b->thread)
        return a->thread < b->thread ? -1 : 1;
    if (a->state != b->state)
        return a->state < b->state ? -1 : 1;
    return 0;
}

jfr_agg_cell *jfr_acc_sorted(const jfr_acc *a)
{
    if (!a->count)
        return NULL;
    jfr_agg_cell *out = jp_xmalloc(a->count * sizeof *out);
    size_t n = 0;
    for (size_t i = 0; i < a->cap; i++)
        if (a->cells[i].used)
            out[n++] = a->cells[i];
    qsort(out, n, sizeof *out, cell_cmp);
    return out;
}
