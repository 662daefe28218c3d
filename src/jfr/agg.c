/* agg.c - the accumulator of a chunk's events (see agg.h). */
#include "jfr/agg.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "jfr/chunk.h"

_Static_assert(JFR_SLOT_LOST < JFR_ACC_LANES / JFR_ACC_STATES, "a lane per slot and state");

void jfr_acc_init(jfr_acc *a)
{
    memset(a, 0, sizeof *a);
}

void jfr_acc_cleanup(jfr_acc *a)
{
    free(a->cells);
    for (unsigned i = 0; i < JFR_ACC_LANES; i++)
        free(a->lane[i]);
    memset(a, 0, sizeof *a);
}

/* A lane, once made, stays (zeroed between ranges) while its memory holds
 * the range: zero entries add nothing to a merge or to the cells. */
void jfr_acc_dense(jfr_acc *a, uint64_t base, size_t n)
{
    for (unsigned i = 0; i < JFR_ACC_LANES; i++) {
        if (a->lane[i])
            memset(a->lane[i], 0, a->dense_n * sizeof *a->lane[i]);
        if (a->lane[i] && a->lane_cap[i] < n) {
            free(a->lane[i]);
            a->lane[i] = NULL;
            a->lane_cap[i] = 0;
        }
    }
    a->dense_base = base;
    a->dense_n = n;
}

jfr_dense *jfr_acc_lane(jfr_acc *a, unsigned lane)
{
    if (!a->lane[lane]) {
        a->lane[lane] = jp_xcalloc(a->dense_n ? a->dense_n : 1, sizeof *a->lane[lane]);
        a->lane_cap[lane] = a->dense_n;
    }
    return a->lane[lane];
}

void jfr_acc_clear(jfr_acc *a)
{
    if (a->cells)
        memset(a->cells, 0, a->cap * sizeof *a->cells);
    a->count = 0;
    jfr_acc_dense(a, a->dense_base, a->dense_n);
    a->events_read = a->events_filtered = a->lost = 0;
}

/* The slot of a lane, and whether its amount is samples (jfr_dense). */
static uint32_t lane_slot(unsigned lane)
{
    return lane / JFR_ACC_STATES;
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

/* Adds src's lane l into dst. Counts of another range of stack keys than
 * dst's go to dst's lane where the key lies in its range, else to cells:
 * never is a count dropped or dst's lanes emptied to take src's range. */
static void merge_lane(jfr_acc *dst, const jfr_acc *src, unsigned l)
{
    const jfr_dense *s = src->lane[l];
    uint32_t slot = lane_slot(l);
    bool wall = slot == JFR_SLOT_WALL;
    for (size_t k = 0; k < src->dense_n; k++) {
        if (!s[k].events)
            continue;
        uint64_t stack = src->dense_base + k, key = stack - dst->dense_base;
        if (key < dst->dense_n) {
            jfr_dense *d = dst->lane[l] ? dst->lane[l] : jfr_acc_lane(dst, l);
            d[key].events += s[k].events;
            d[key].amount += s[k].amount;
        } else {
            jfr_acc_add(dst, slot, stack, 0, l % JFR_ACC_STATES, s[k].events,
                        wall ? s[k].amount : s[k].events, wall ? 0 : s[k].amount);
        }
    }
}

void jfr_acc_merge(jfr_acc *dst, const jfr_acc *src)
{
    /* An accumulator that holds nothing in lanes takes src's range. */
    bool dst_lanes = false;
    for (unsigned l = 0; l < JFR_ACC_LANES && !dst_lanes; l++)
        dst_lanes = dst->lane[l] != NULL;
    if (!dst_lanes && (dst->dense_base != src->dense_base || dst->dense_n != src->dense_n))
        jfr_acc_dense(dst, src->dense_base, src->dense_n);
    for (unsigned l = 0; l < JFR_ACC_LANES; l++)
        if (src->lane[l])
            merge_lane(dst, src, l);
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

jfr_agg_cell *jfr_acc_sorted(const jfr_acc *a, size_t *count)
{
    size_t n = a->count;
    for (unsigned l = 0; l < JFR_ACC_LANES; l++)
        for (size_t k = 0; a->lane[l] && k < a->dense_n; k++)
            n += a->lane[l][k].events != 0;
    *count = n;
    if (!n)
        return NULL;
    jfr_agg_cell *out = jp_xmalloc(n * sizeof *out);
    n = 0;
    for (size_t i = 0; i < a->cap; i++)
        if (a->cells[i].used)
            out[n++] = a->cells[i];
    for (unsigned l = 0; l < JFR_ACC_LANES; l++) {
        const jfr_dense *d = a->lane[l];
        uint32_t slot = lane_slot(l);
        bool wall = slot == JFR_SLOT_WALL;
        for (size_t k = 0; d && k < a->dense_n; k++) {
            if (!d[k].events)
                continue;
            out[n++] = (jfr_agg_cell){.stack = a->dense_base + k,
                                      .state = l % JFR_ACC_STATES,
                                      .events = d[k].events,
                                      .samples = wall ? d[k].amount : d[k].events,
                                      .value = wall ? 0 : d[k].amount,
                                      .slot = slot,
                                      .used = 1};
        }
    }
    qsort(out, n, sizeof *out, cell_cmp);
    return out;
}
