/* heap.c - heap histograms and their growth (see heap.h). */
#include "model/heap.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/xalloc.h"

void jp_heap_histo_init(jp_heap_histo *h)
{
    memset(h, 0, sizeof *h);
}

void jp_heap_histo_cleanup(jp_heap_histo *h)
{
    if (!h)
        return;
    for (size_t i = 0; i < h->n; i++) {
        free(h->classes[i].name);
        free(h->classes[i].module);
    }
    free(h->classes);
    jp_heap_histo_init(h);
}

bool jp_heap_histo_add(jp_heap_histo *h, const char *name, size_t name_len, const char *module,
                       size_t module_len, uint64_t instances, uint64_t bytes)
{
    if (h->n >= JP_HEAP_MAX_CLASSES)
        return false;
    h->classes = jp_xgrow(h->classes, &h->cap, h->n + 1, sizeof *h->classes);
    jp_heap_class *c = &h->classes[h->n++];
    c->name = jp_xstrndup(name, name_len > JP_HEAP_NAME_MAX ? JP_HEAP_NAME_MAX : name_len);
    c->module = jp_xstrndup(module ? module : "",
                            module_len > JP_HEAP_NAME_MAX ? JP_HEAP_NAME_MAX : module_len);
    c->instances = instances;
    c->bytes = bytes;
    return true;
}

static int by_size(const void *a, const void *b)
{
    const jp_heap_class *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->instances != y->instances)
        return x->instances > y->instances ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->module, y->module);
}

void jp_heap_histo_sort(jp_heap_histo *h)
{
    if (h->n > 1)
        qsort(h->classes, h->n, sizeof *h->classes, by_size);
}

void jp_heap_histo_cut(jp_heap_histo *h, size_t max)
{
    if (h->classes_total < h->n)
        h->classes_total = h->n;
    if (h->n <= max)
        return;
    jp_heap_histo_sort(h);
    for (size_t i = max; i < h->n; i++) {
        free(h->classes[i].name);
        free(h->classes[i].module);
    }
    h->n = max;
}

bool jp_heap_histo_is_cut(const jp_heap_histo *h)
{
    return h->classes_total > h->n;
}

void jp_heap_histo_move(jp_heap_histo *dst, jp_heap_histo *src)
{
    jp_heap_histo_cleanup(dst);
    *dst = *src;
    jp_heap_histo_init(src);
}

/* ---- growth ---- */

void jp_heap_growth_init(jp_heap_growth *g)
{
    memset(g, 0, sizeof *g);
}

void jp_heap_growth_cleanup(jp_heap_growth *g)
{
    if (!g)
        return;
    free(g->rows);
    jp_heap_growth_init(g);
}

static uint64_t name_key(const char *name, const char *module)
{
    return jp_hash_combine(jp_hash_bytes(name, strlen(name)),
                           jp_hash_bytes(module, strlen(module)));
}

/* The row of class c in g, made when new. Classes of the same name and
 * module (one class loaded by two loaders: HotSpot prints a line each) share
 * a row, so both histograms are compared by name. A hash shared by two
 * names falls back to a scan. */
static jp_heap_growth_row *row_of(jp_heap_growth *g, jp_u64map *idx, const jp_heap_class *c)
{
    uint64_t key = name_key(c->name, c->module), at;
    if (jp_u64map_get(idx, key, &at)) {
        jp_heap_growth_row *r = &g->rows[at];
        if (strcmp(r->name, c->name) == 0 && strcmp(r->module, c->module) == 0)
            return r;
        for (size_t i = 0; i < g->n; i++)
            if (strcmp(g->rows[i].name, c->name) == 0 && strcmp(g->rows[i].module, c->module) == 0)
                return &g->rows[i];
    } else {
        jp_u64map_put(idx, key, g->n);
    }
    jp_heap_growth_row *r = &g->rows[g->n++];
    r->name = c->name;
    r->module = c->module;
    return r;
}

static double per_min(int64_t delta, int64_t span_ns)
{
    return span_ns > 0 ? (double)delta * 60e9 / (double)span_ns : 0.0;
}

static int by_growth(const void *a, const void *b)
{
    const jp_heap_growth_row *x = a, *y = b;
    if (x->bytes_delta != y->bytes_delta)
        return x->bytes_delta > y->bytes_delta ? -1 : 1;
    if (x->instances_delta != y->instances_delta)
        return x->instances_delta > y->instances_delta ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->module, y->module);
}

void jp_heap_growth_compute(const jp_heap_histo *from, const jp_heap_histo *to, jp_heap_growth *g)
{
    jp_heap_growth_cleanup(g);
    g->from_ns = from->time_ns;
    g->to_ns = to->time_ns;
    g->span_ns = to->time_ns - from->time_ns;
    g->histograms = 2;
    g->approximate = jp_heap_histo_is_cut(from) || jp_heap_histo_is_cut(to);
    g->rows = jp_xcalloc(from->n + to->n + 1, sizeof *g->rows);
    jp_u64map idx;
    jp_u64map_init(&idx);
    for (size_t i = 0; i < to->n; i++) {
        jp_heap_growth_row *r = row_of(g, &idx, &to->classes[i]);
        r->instances_to += to->classes[i].instances;
        r->bytes_to += to->classes[i].bytes;
    }
    for (size_t i = 0; i < from->n; i++) {
        jp_heap_growth_row *r = row_of(g, &idx, &from->classes[i]);
        r->instances_from += from->classes[i].instances;
        r->bytes_from += from->classes[i].bytes;
    }
    jp_u64map_cleanup(&idx);
    for (size_t i = 0; i < g->n; i++) {
        jp_heap_growth_row *r = &g->rows[i];
        r->instances_delta = (int64_t)(r->instances_to - r->instances_from);
        r->bytes_delta = (int64_t)(r->bytes_to - r->bytes_from);
        r->instances_per_min = per_min(r->instances_delta, g->span_ns);
        r->bytes_per_min = per_min(r->bytes_delta, g->span_ns);
    }
    if (g->n > 1)
        qsort(g->rows, g->n, sizeof *g->rows, by_growth);
    g->total_instances_delta = (int64_t)(to->total_instances - from->total_instances);
    g->total_bytes_delta = (int64_t)(to->total_bytes - from->total_bytes);
    g->total_bytes_per_min = per_min(g->total_bytes_delta, g->span_ns);
}
