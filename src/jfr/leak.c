/* leak.c - malloc/free pairing for nativemem leaks (see leak.h). */
#include "jfr/leak.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jfr_leak_chunk_init(jfr_leak_chunk *c)
{
    memset(c, 0, sizeof *c);
}

void jfr_leak_chunk_cleanup(jfr_leak_chunk *c)
{
    free(c->ev);
    memset(c, 0, sizeof *c);
}

void jfr_leak_chunk_add(jfr_leak_chunk *c, int64_t t, uint64_t addr, uint64_t size, uint64_t stack,
                        uint64_t thread, bool is_free)
{
    c->ev = jp_xgrow(c->ev, &c->cap, c->n + 1, sizeof *c->ev);
    c->ev[c->n] = (jfr_leak_ev){.t = t,
                                .addr = addr,
                                .size = is_free ? 0 : size,
                                .stack = stack,
                                .thread = thread,
                                .seq = (uint32_t)c->n,
                                .is_free = is_free};
    c->n++;
    if (!c->any || t < c->min_t)
        c->min_t = t;
    if (!c->any || t > c->max_t)
        c->max_t = t;
    c->any = true;
}

static int ev_cmp(const void *pa, const void *pb)
{
    const jfr_leak_ev *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void jfr_leak_chunk_reduce(jfr_leak_chunk *c)
{
    /* async-profiler writes events from per-thread buffers: file order is
     * not time order, and a free may come before its malloc in the file. */
    if (c->n < 2)
        return;
    qsort(c->ev, c->n, sizeof *c->ev, ev_cmp);
    jp_u64map last;
    jp_u64map_init(&last);
    size_t out = 0;
    for (size_t i = 0; i < c->n; i++) {
        bool inserted;
        uint64_t *slot = jp_u64map_upsert(&last, c->ev[i].addr, out, &inserted);
        if (inserted)
            c->ev[out++] = c->ev[i];
        else
            c->ev[*slot] = c->ev[i];
    }
    c->n = out;
    jp_u64map_cleanup(&last);
}

void jfr_leak_init(jfr_leak *l)
{
    memset(l, 0, sizeof *l);
    jp_u64map_init(&l->index);
}

void jfr_leak_cleanup(jfr_leak *l)
{
    jp_u64map_cleanup(&l->index);
    free(l->e);
    memset(l, 0, sizeof *l);
}

void jfr_leak_apply(jfr_leak *l, const jfr_leak_chunk *c, const uint32_t *smap,
                    const uint32_t *fmap)
{
    if (!c->any)
        return;
    if (!l->any || c->min_t < l->min_t)
        l->min_t = c->min_t;
    if (!l->any || c->max_t > l->max_t)
        l->max_t = c->max_t;
    l->any = true;
    for (size_t i = 0; i < c->n; i++) {
        const jfr_leak_ev *ev = &c->ev[i];
        uint64_t idx;
        bool have = jp_u64map_get(&l->index, ev->addr, &idx);
        if (ev->is_free) {
            if (have)
                l->e[idx].alive = false;
            continue;
        }
        if (!have) {
            l->e = jp_xgrow(l->e, &l->cap, l->n + 1, sizeof *l->e);
            idx = l->n++;
            jp_u64map_put(&l->index, ev->addr, idx);
        }
        uint32_t s = (uint32_t)ev->stack, th = (uint32_t)ev->thread;
        l->e[idx] = (jfr_leak_entry){
            .t = ev->t,
            .size = ev->size,
            .stack = smap ? smap[s] : s,
            .thread = th == JP_NO_THREAD || !fmap ? th : fmap[th],
            .alive = true,
        };
    }
}

uint64_t jfr_leak_finish(jfr_leak *l, jp_profile *p, double tail)
{
    if (!l->any)
        return 0;
    if (!(tail >= 0))
        tail = 0;
    if (tail > 1)
        tail = 1;
    /* Integer arithmetic on the span keeps the cut exact to the ns. */
    uint64_t span = (uint64_t)l->max_t - (uint64_t)l->min_t;
    int64_t cut = l->max_t - (int64_t)(tail * (double)span);
    uint64_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        const jfr_leak_entry *e = &l->e[i];
        if (!e->alive || e->t > cut)
            continue;
        jp_profile_add(p, JP_KIND_NATIVEMEM, e->stack, e->thread, 1, 1, e->size);
        n++;
    }
    return n;
}
