/* gc.c - the GC log of a window and its summary. */
#include "model/gc.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jp_gc_log_init(jp_gc_log *l)
{
    memset(l, 0, sizeof *l);
}

void jp_gc_log_cleanup(jp_gc_log *l)
{
    free(l->gcs);
    free(l->pauses);
    free(l->heaps);
    free(l->tallocs);
    memset(l, 0, sizeof *l);
}

/* Room for one more entry in *arr, or false (counted dropped) at the cap. */
static bool log_room(jp_gc_log *l, void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n >= JP_GC_MAX_EVENTS) {
        l->dropped++;
        return false;
    }
    *arr = jp_xgrow(*arr, cap, n + 1, elem);
    return true;
}

void jp_gc_log_collection(jp_gc_log *l, const jp_gc_collection *c)
{
    if (log_room(l, (void **)&l->gcs, &l->gcs_cap, l->ngcs, sizeof *c))
        l->gcs[l->ngcs++] = *c;
}

void jp_gc_log_pause(jp_gc_log *l, const jp_gc_pause *p)
{
    if (log_room(l, (void **)&l->pauses, &l->pauses_cap, l->npauses, sizeof *p))
        l->pauses[l->npauses++] = *p;
}

void jp_gc_log_heap(jp_gc_log *l, const jp_gc_heap *h)
{
    if (log_room(l, (void **)&l->heaps, &l->heaps_cap, l->nheaps, sizeof *h))
        l->heaps[l->nheaps++] = *h;
}

void jp_gc_log_talloc(jp_gc_log *l, const jp_gc_talloc *t)
{
    if (log_room(l, (void **)&l->tallocs, &l->tallocs_cap, l->ntallocs, sizeof *t))
        l->tallocs[l->ntallocs++] = *t;
}

void jp_gc_log_append(jp_gc_log *dst, const jp_gc_log *src)
{
    for (size_t i = 0; i < src->ngcs; i++)
        jp_gc_log_collection(dst, &src->gcs[i]);
    for (size_t i = 0; i < src->npauses; i++)
        jp_gc_log_pause(dst, &src->pauses[i]);
    for (size_t i = 0; i < src->nheaps; i++)
        jp_gc_log_heap(dst, &src->heaps[i]);
    for (size_t i = 0; i < src->ntallocs; i++)
        jp_gc_log_talloc(dst, &src->tallocs[i]);
    dst->dropped += src->dropped;
}

bool jp_gc_log_any(const jp_gc_log *l)
{
    return l->ngcs || l->npauses || l->nheaps || l->ntallocs;
}

size_t jp_gc_log_memory(const jp_gc_log *l)
{
    return l->gcs_cap * sizeof *l->gcs + l->pauses_cap * sizeof *l->pauses +
           l->heaps_cap * sizeof *l->heaps + l->tallocs_cap * sizeof *l->tallocs;
}

const char *jp_gc_alloc_source_name(jp_gc_alloc_source s)
{
    switch (s) {
    case JP_GC_ALLOC_THREADS:
        return "thread allocation statistics";
    case JP_GC_ALLOC_HEAP:
        return "heap growth between collections";
    case JP_GC_ALLOC_SAMPLES:
        return "allocation samples (estimate)";
    default:
        return "unknown";
    }
}

static bool in_window(int64_t t, int64_t from, int64_t to)
{
    if (!from && !to)
        return true;
    return t >= from && t < to;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n). */
static int64_t percentile(const int64_t *v, size_t n, unsigned pct)
{
    size_t rank = (pct * n + 99) / 100;
    return v[rank ? rank - 1 : 0];
}

static const jp_gc_collection *gc_by_id(const jp_gc_log *l, uint64_t id)
{
    for (size_t i = 0; i < l->ngcs; i++)
        if (l->gcs[i].gc_id == id)
            return &l->gcs[i];
    return NULL;
}

static void copy_name(char *dst, size_t cap, const char *src)
{
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

/* Pauses from jdk.GCPhasePause, or from jdk.GarbageCollection when the
 * recording has no pause events (each collection's longest pause; the total
 * from its sum of pauses). */
static void summary_pauses(const jp_gc_log *l, jp_gc_summary *s)
{
    bool from_gcs = l->npauses == 0;
    size_t cap = from_gcs ? l->ngcs : l->npauses;
    int64_t *d = jp_xreallocarray(NULL, cap ? cap : 1, sizeof *d);
    size_t n = 0;
    const jp_gc_pause *worst = NULL;
    const jp_gc_collection *worst_gc = NULL;
    for (size_t i = 0; i < cap; i++) {
        int64_t start, dur, sum;
        if (from_gcs) {
            const jp_gc_collection *c = &l->gcs[i];
            start = c->start_ns;
            dur = c->longest_pause_ns;
            sum = c->sum_pauses_ns;
            if (dur <= 0 || !in_window(start, s->from_ns, s->to_ns))
                continue;
            if (!worst_gc || dur > worst_gc->longest_pause_ns)
                worst_gc = c;
        } else {
            const jp_gc_pause *p = &l->pauses[i];
            start = p->start_ns;
            dur = sum = p->duration_ns < 0 ? 0 : p->duration_ns;
            if (!in_window(start, s->from_ns, s->to_ns))
                continue;
            if (!worst || dur > worst->duration_ns)
                worst = p;
        }
        d[n++] = dur;
        s->pause_total_ns += sum > dur ? sum : dur;
    }
    s->pauses = n;
    s->pauses_from_gcs = from_gcs && n > 0;
    if (n) {
        qsort(d, n, sizeof *d, cmp_i64);
        s->pause_p50_ns = percentile(d, n, 50);
        s->pause_p99_ns = percentile(d, n, 99);
        s->pause_max_ns = d[n - 1];
    }
    free(d);
    if (worst) {
        s->has_longest = true;
        s->longest_start_ns = worst->start_ns;
        s->longest_gc_id = worst->gc_id;
        copy_name(s->longest_phase, sizeof s->longest_phase, worst->name);
        worst_gc = gc_by_id(l, worst->gc_id);
    } else if (worst_gc) {
        s->has_longest = true;
        s->longest_start_ns = worst_gc->start_ns;
        s->longest_gc_id = worst_gc->gc_id;
    }
    if (worst_gc) {
        copy_name(s->longest_collector, sizeof s->longest_collector, worst_gc->name);
        copy_name(s->longest_cause, sizeof s->longest_cause, worst_gc->cause);
    }
}

/* Both sides of one collection. */
typedef struct heap_pair {
    uint64_t gc_id;
    int64_t before_t, after_t;
    uint64_t before, after;
    bool has_before, has_after;
} heap_pair;

static int cmp_heap(const void *a, const void *b)
{
    const jp_gc_heap *x = a, *y = b;
    if (x->gc_id != y->gc_id)
        return x->gc_id < y->gc_id ? -1 : 1;
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

static int cmp_pair(const void *a, const void *b)
{
    const heap_pair *x = a, *y = b;
    return (x->after_t > y->after_t) - (x->after_t < y->after_t);
}

/* Pairs the first "Before GC" with the last "After GC" of each collection
 * (a G1 concurrent cycle has several) and orders the pairs by time. */
static size_t heap_pairs(const jp_gc_log *l, const jp_gc_summary *s, heap_pair **out)
{
    jp_gc_heap *h = jp_xreallocarray(NULL, l->nheaps ? l->nheaps : 1, sizeof *h);
    size_t n = 0;
    for (size_t i = 0; i < l->nheaps; i++)
        if (l->heaps[i].when != JP_GC_WHEN_UNKNOWN &&
            in_window(l->heaps[i].time_ns, s->from_ns, s->to_ns))
            h[n++] = l->heaps[i];
    qsort(h, n, sizeof *h, cmp_heap);
    heap_pair *p = jp_xreallocarray(NULL, n ? n : 1, sizeof *p);
    size_t np = 0;
    for (size_t i = 0; i < n;) {
        heap_pair hp = {.gc_id = h[i].gc_id};
        size_t j = i;
        for (; j < n && h[j].gc_id == h[i].gc_id; j++) {
            if (h[j].when == JP_GC_BEFORE && !hp.has_before) {
                hp.has_before = true;
                hp.before = h[j].used;
                hp.before_t = h[j].time_ns;
            } else if (h[j].when == JP_GC_AFTER) {
                hp.has_after = true;
                hp.after = h[j].used;
                hp.after_t = h[j].time_ns;
            }
        }
        if (hp.has_before && hp.has_after)
            p[np++] = hp;
        i = j;
    }
    free(h);
    qsort(p, np, sizeof *p, cmp_pair);
    *out = p;
    return np;
}

static void summary_heap(const jp_gc_log *l, jp_gc_summary *s)
{
    heap_pair *p;
    size_t n = heap_pairs(l, s, &p);
    s->heap_gcs = n;
    if (n) {
        s->has_heap = true;
        s->heap_before = p[n - 1].before;
        s->heap_after = p[n - 1].after;
        s->heap_after_min = s->heap_after_max = p[0].after;
        for (size_t i = 1; i < n; i++) {
            if (p[i].after < s->heap_after_min)
                s->heap_after_min = p[i].after;
            if (p[i].after > s->heap_after_max)
                s->heap_after_max = p[i].after;
        }
    }
    /* What the heap grew by between one collection and the next was
     * allocated in between (less what was promoted concurrently). */
    if (n >= 2 && s->alloc_source == JP_GC_ALLOC_NONE) {
        uint64_t bytes = 0;
        for (size_t i = 1; i < n; i++)
            if (p[i].before > p[i - 1].after)
                bytes += p[i].before - p[i - 1].after;
        int64_t span = p[n - 1].before_t - p[0].after_t;
        if (span > 0) {
            s->alloc_source = JP_GC_ALLOC_HEAP;
            s->alloc_bytes = bytes;
            s->alloc_span_ns = span;
        }
    }
    free(p);
}

static int cmp_talloc(const void *a, const void *b)
{
    const jp_gc_talloc *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return (x->time_ns > y->time_ns) - (x->time_ns < y->time_ns);
}

/* Per thread, the growth of its allocated bytes between its first and last
 * statistic in the window; the span from the earliest to the latest of them. */
static void summary_threads(const jp_gc_log *l, jp_gc_summary *s)
{
    jp_gc_talloc *t = jp_xreallocarray(NULL, l->ntallocs ? l->ntallocs : 1, sizeof *t);
    size_t n = 0;
    for (size_t i = 0; i < l->ntallocs; i++)
        if (in_window(l->tallocs[i].time_ns, s->from_ns, s->to_ns))
            t[n++] = l->tallocs[i];
    qsort(t, n, sizeof *t, cmp_talloc);
    uint64_t bytes = 0;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && t[j + 1].thread == t[i].thread)
            j++;
        if (j > i) {
            if (t[j].allocated > t[i].allocated)
                bytes += t[j].allocated - t[i].allocated;
            lo = t[i].time_ns < lo ? t[i].time_ns : lo;
            hi = t[j].time_ns > hi ? t[j].time_ns : hi;
        }
        i = j + 1;
    }
    free(t);
    if (hi > lo) {
        s->alloc_source = JP_GC_ALLOC_THREADS;
        s->alloc_bytes = bytes;
        s->alloc_span_ns = hi - lo;
    }
}

void jp_gc_summary_compute(const jp_gc_log *l, int64_t from_ns, int64_t to_ns,
                           uint64_t sample_bytes, int64_t sample_span_ns, jp_gc_summary *s)
{
    memset(s, 0, sizeof *s);
    s->from_ns = from_ns;
    s->to_ns = to_ns;
    s->dropped = l->dropped;
    for (size_t i = 0; i < l->ngcs; i++)
        s->collections += in_window(l->gcs[i].start_ns, from_ns, to_ns);
    summary_pauses(l, s);
    summary_heap(l, s);
    if (s->alloc_source == JP_GC_ALLOC_NONE)
        summary_threads(l, s);
    if (s->alloc_source == JP_GC_ALLOC_NONE && sample_bytes && sample_span_ns > 0) {
        s->alloc_source = JP_GC_ALLOC_SAMPLES;
        s->alloc_bytes = sample_bytes;
        s->alloc_span_ns = sample_span_ns;
    }
    if (s->alloc_source != JP_GC_ALLOC_NONE)
        s->alloc_rate = (double)s->alloc_bytes * 1e9 / (double)s->alloc_span_ns;
}

int64_t jp_gc_pause_buckets(const jp_gc_log *l, int64_t from_ns, int64_t to_ns, int64_t *out,
                            size_t n)
{
    memset(out, 0, n * sizeof *out);
    if (!n || to_ns <= from_ns)
        return 0;
    double width = (double)(to_ns - from_ns) / (double)n;
    bool from_gcs = l->npauses == 0;
    size_t cnt = from_gcs ? l->ngcs : l->npauses;
    int64_t top = 0;
    for (size_t i = 0; i < cnt; i++) {
        int64_t start = from_gcs ? l->gcs[i].start_ns : l->pauses[i].start_ns;
        int64_t dur = from_gcs ? l->gcs[i].sum_pauses_ns : l->pauses[i].duration_ns;
        if (dur <= 0 || start < from_ns || start >= to_ns)
            continue;
        size_t b = (size_t)((double)(start - from_ns) / width);
        if (b >= n)
            b = n - 1;
        out[b] += dur;
        if (out[b] > top)
            top = out[b];
    }
    return top;
}
