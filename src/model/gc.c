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

bool jp_gc_alloc_source_parse(const char *s, jp_gc_alloc_source *out)
{
    for (int i = JP_GC_ALLOC_THREADS; i <= JP_GC_ALLOC_SAMPLES; i++)
        if (!strcmp(s, jp_gc_alloc_source_name((jp_gc_alloc_source)i))) {
            *out = (jp_gc_alloc_source)i;
            return true;
        }
    return false;
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

/* Pause i of the log if it starts in the summary's window: from
 * jdk.GCPhasePause, or from jdk.GarbageCollection when the recording has no
 * pause events (each collection's longest pause; the total from its sum of
 * pauses). */
static bool pause_at(const jp_gc_log *l, bool from_gcs, size_t i, int64_t from, int64_t to,
                     int64_t *dur, int64_t *sum)
{
    if (from_gcs) {
        const jp_gc_collection *c = &l->gcs[i];
        *dur = c->longest_pause_ns;
        *sum = c->sum_pauses_ns;
        return *dur > 0 && in_window(c->start_ns, from, to);
    }
    const jp_gc_pause *p = &l->pauses[i];
    *dur = *sum = p->duration_ns < 0 ? 0 : p->duration_ns;
    return in_window(p->start_ns, from, to);
}

/* The sorted pause durations of [from, to) in a new array; *n their count. */
static int64_t *pause_list(const jp_gc_log *l, int64_t from, int64_t to, size_t *n, int64_t *total)
{
    bool from_gcs = l->npauses == 0;
    size_t cap = from_gcs ? l->ngcs : l->npauses;
    int64_t *d = jp_xreallocarray(NULL, cap ? cap : 1, sizeof *d);
    *n = 0;
    *total = 0;
    for (size_t i = 0; i < cap; i++) {
        int64_t dur, sum;
        if (!pause_at(l, from_gcs, i, from, to, &dur, &sum))
            continue;
        d[(*n)++] = dur;
        *total += sum > dur ? sum : dur;
    }
    qsort(d, *n, sizeof *d, cmp_i64);
    return d;
}

static void summary_pauses(const jp_gc_log *l, jp_gc_summary *s)
{
    bool from_gcs = l->npauses == 0;
    size_t cnt = from_gcs ? l->ngcs : l->npauses, n;
    const jp_gc_pause *worst = NULL;
    const jp_gc_collection *worst_gc = NULL;
    for (size_t i = 0; i < cnt; i++) {
        int64_t dur, sum;
        if (!pause_at(l, from_gcs, i, s->from_ns, s->to_ns, &dur, &sum))
            continue;
        if (from_gcs && (!worst_gc || dur > worst_gc->longest_pause_ns))
            worst_gc = &l->gcs[i];
        else if (!from_gcs && (!worst || dur > worst->duration_ns))
            worst = &l->pauses[i];
    }
    int64_t *d = pause_list(l, s->from_ns, s->to_ns, &n, &s->pause_total_ns);
    s->pauses = n;
    s->pauses_from_gcs = from_gcs && n > 0;
    if (n) {
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

/* ---- per-window records and their merge ---- */

void jp_gc_window_compute(const jp_gc_log *l, int64_t from_ns, int64_t to_ns, uint64_t sample_bytes,
                          int64_t sample_span_ns, jp_gc_window *w)
{
    memset(w, 0, sizeof *w);
    jp_gc_summary_compute(l, from_ns, to_ns, sample_bytes, sample_span_ns, &w->s);
    size_t n;
    int64_t total;
    int64_t *d = pause_list(l, from_ns, to_ns, &n, &total);
    if (n <= JP_GC_WINDOW_PAUSES) {
        memcpy(w->pause_ns, d, n * sizeof *d);
        w->npause = (uint32_t)n;
    } else {
        /* evenly spaced ranks, the largest included */
        for (size_t i = 0; i < JP_GC_WINDOW_PAUSES; i++)
            w->pause_ns[i] = d[(i + 1) * n / JP_GC_WINDOW_PAUSES - 1];
        w->npause = JP_GC_WINDOW_PAUSES;
    }
    free(d);
}

static int cmp_wpause(const void *a, const void *b)
{
    const jp_gc_wpause *x = a, *y = b;
    return (x->ns > y->ns) - (x->ns < y->ns);
}

/* Nearest-rank percentile over weighted values sorted ascending. */
static int64_t wpercentile(const jp_gc_wpause *v, size_t n, double total, unsigned pct)
{
    double rank = (double)pct * total / 100.0, acc = 0;
    for (size_t i = 0; i < n; i++) {
        acc += v[i].weight;
        if (acc + 1e-9 >= rank)
            return v[i].ns;
    }
    return n ? v[n - 1].ns : 0;
}

void jp_gc_merger_init(jp_gc_merger *m, int64_t from_ns, int64_t to_ns)
{
    memset(m, 0, sizeof *m);
    m->o.from_ns = from_ns;
    m->o.to_ns = to_ns;
    m->exact = true;
    m->gcs_only = true;
    m->heap_t = INT64_MIN;
    m->alloc_best = -1;
}

void jp_gc_merger_add(jp_gc_merger *m, const jp_gc_window *w)
{
    const jp_gc_summary *s = &w->s;
    jp_gc_summary *o = &m->o;
    m->windows++;
    if (m->windows == 1)
        m->first = *s;
    m->covered += s->to_ns > s->from_ns ? s->to_ns - s->from_ns : 0;
    o->collections += s->collections;
    o->pauses += s->pauses;
    o->pause_total_ns += s->pause_total_ns;
    o->dropped += s->dropped;
    if (s->pause_max_ns > o->pause_max_ns)
        o->pause_max_ns = s->pause_max_ns;
    if (s->has_longest && (!o->has_longest || s->pause_max_ns > m->longest_ns)) {
        m->longest_ns = s->pause_max_ns;
        o->has_longest = true;
        o->longest_start_ns = s->longest_start_ns;
        o->longest_gc_id = s->longest_gc_id;
        memcpy(o->longest_phase, s->longest_phase, sizeof o->longest_phase);
        memcpy(o->longest_collector, s->longest_collector, sizeof o->longest_collector);
        memcpy(o->longest_cause, s->longest_cause, sizeof o->longest_cause);
    }
    if (s->has_heap) {
        if (!o->has_heap || s->heap_after_min < o->heap_after_min)
            o->heap_after_min = s->heap_after_min;
        if (!o->has_heap || s->heap_after_max > o->heap_after_max)
            o->heap_after_max = s->heap_after_max;
        o->has_heap = true;
        o->heap_gcs += s->heap_gcs;
        if (s->from_ns >= m->heap_t) { /* the newest window's last collection */
            m->heap_t = s->from_ns;
            o->heap_before = s->heap_before;
            o->heap_after = s->heap_after;
        }
    }
    if (s->alloc_source != JP_GC_ALLOC_NONE && s->alloc_span_ns > 0) {
        o->alloc_bytes += s->alloc_bytes;
        o->alloc_span_ns += s->alloc_span_ns;
        if (s->alloc_span_ns > m->alloc_best) { /* the source of most of the time */
            m->alloc_best = s->alloc_span_ns;
            o->alloc_source = s->alloc_source;
        }
    }
    if (s->pauses && !s->pauses_from_gcs)
        m->gcs_only = false;
    if (w->npause != s->pauses)
        m->exact = false;
    if (!w->npause)
        return;
    /* each kept pause stands for its share of the window's pauses */
    double weight = (double)s->pauses / (double)w->npause;
    m->v = jp_xgrow(m->v, &m->cap, m->nv + w->npause, sizeof *m->v);
    for (uint32_t j = 0; j < w->npause; j++)
        m->v[m->nv++] = (jp_gc_wpause){w->pause_ns[j], weight};
    m->weight += weight * w->npause;
}

void jp_gc_merger_finish(jp_gc_merger *m, jp_gc_summary *out, bool *exact, int64_t *covered_ns)
{
    jp_gc_summary *o = &m->o;
    bool ex = m->exact;
    size_t k = m->nv;
    qsort(m->v, k, sizeof *m->v, cmp_wpause);
    if (m->windows == 1) { /* one window knows its own percentiles exactly */
        o->pause_p50_ns = m->first.pause_p50_ns;
        o->pause_p99_ns = m->first.pause_p99_ns;
        ex = true;
    } else if (k && ex) { /* the plain nearest rank of jp_gc_summary_compute */
        size_t r50 = (50 * k + 99) / 100, r99 = (99 * k + 99) / 100;
        o->pause_p50_ns = m->v[r50 ? r50 - 1 : 0].ns;
        o->pause_p99_ns = m->v[r99 ? r99 - 1 : 0].ns;
    } else if (k) {
        o->pause_p50_ns = wpercentile(m->v, k, m->weight, 50);
        o->pause_p99_ns = wpercentile(m->v, k, m->weight, 99);
    }
    o->pauses_from_gcs = o->pauses > 0 && m->gcs_only;
    if (o->alloc_source != JP_GC_ALLOC_NONE)
        o->alloc_rate = (double)o->alloc_bytes * 1e9 / (double)o->alloc_span_ns;
    *out = *o;
    if (exact)
        *exact = ex;
    if (covered_ns)
        *covered_ns = m->covered;
    free(m->v);
    memset(m, 0, sizeof *m);
}

void jp_gc_merge(const jp_gc_window *ws, size_t n, int64_t from_ns, int64_t to_ns,
                 jp_gc_summary *out, bool *exact, int64_t *covered_ns)
{
    jp_gc_merger m;
    jp_gc_merger_init(&m, from_ns, to_ns);
    for (size_t i = 0; i < n; i++)
        jp_gc_merger_add(&m, &ws[i]);
    jp_gc_merger_finish(&m, out, exact, covered_ns);
}

void jp_gc_points_init(jp_gc_point *out, size_t n, int64_t from_ns, int64_t to_ns)
{
    memset(out, 0, n * sizeof *out);
    if (!n || to_ns <= from_ns)
        return;
    double width = (double)(to_ns - from_ns) / (double)n;
    for (size_t i = 0; i < n; i++) {
        out[i].start_ns = from_ns + (int64_t)(width * (double)i);
        out[i].end_ns = i + 1 == n ? to_ns : from_ns + (int64_t)(width * (double)(i + 1));
    }
}

void jp_gc_points_add(jp_gc_point *out, size_t n, const jp_gc_summary *s)
{
    if (!n || out[n - 1].end_ns <= out[0].start_ns)
        return;
    int64_t from = out[0].start_ns;
    double width = (double)(out[n - 1].end_ns - from) / (double)n;
    int64_t mid = s->from_ns + (s->to_ns > s->from_ns ? (s->to_ns - s->from_ns) / 2 : 0);
    double pos = (double)(mid - from) / width;
    size_t b = pos < 0 ? 0 : pos >= (double)n ? n - 1 : (size_t)pos;
    out[b].pauses += s->pauses;
    out[b].pause_total_ns += s->pause_total_ns;
    if (s->pause_max_ns > out[b].pause_max_ns)
        out[b].pause_max_ns = s->pause_max_ns;
}

void jp_gc_window_points(const jp_gc_window *ws, size_t nw, int64_t from_ns, int64_t to_ns,
                         jp_gc_point *out, size_t n)
{
    jp_gc_points_init(out, n, from_ns, to_ns);
    for (size_t i = 0; i < nw; i++)
        jp_gc_points_add(out, n, &ws[i].s);
}
