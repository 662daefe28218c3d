/* oldobj.c - the old-object log and its per-class summary (see oldobj.h). */
#include "model/oldobj.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jp_old_log_init(jp_old_log *l)
{
    memset(l, 0, sizeof *l);
}

void jp_old_log_cleanup(jp_old_log *l)
{
    if (!l)
        return;
    free(l->v);
    jp_old_log_init(l);
}

void jp_old_log_add(jp_old_log *l, const jp_old_sample *s)
{
    if (l->n >= JP_OLD_MAX_SAMPLES) {
        l->dropped++;
        return;
    }
    l->v = jp_xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    l->v[l->n] = *s;
    l->v[l->n].cls[JP_OLD_CLASS_MAX - 1] = '\0';
    l->n++;
}

void jp_old_log_append(jp_old_log *dst, const jp_old_log *src)
{
    for (size_t i = 0; i < src->n; i++)
        jp_old_log_add(dst, &src->v[i]);
    dst->dropped += src->dropped;
}

size_t jp_old_log_memory(const jp_old_log *l)
{
    return l->cap * sizeof *l->v;
}

void jp_old_summary_init(jp_old_summary *s)
{
    memset(s, 0, sizeof *s);
}

void jp_old_summary_cleanup(jp_old_summary *s)
{
    if (!s)
        return;
    free(s->classes);
    jp_old_summary_init(s);
}

/* Sorting goes through references into the log, so the log keeps its order. */
typedef struct old_ref {
    const jp_old_sample *e;
} old_ref;

static int by_class_then_age(const void *a, const void *b)
{
    const jp_old_sample *x = ((const old_ref *)a)->e, *y = ((const old_ref *)b)->e;
    int c = strcmp(x->cls, y->cls);
    if (c)
        return c;
    return (x->age_ns > y->age_ns) - (x->age_ns < y->age_ns);
}

static int by_objects(const void *a, const void *b)
{
    const jp_old_class *x = a, *y = b;
    if (x->objects != y->objects)
        return x->objects > y->objects ? -1 : 1;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* One class from the run v[0..n) of samples of that class, ordered by age. */
static void class_of(const old_ref *v, size_t n, jp_old_class *c)
{
    memset(c, 0, sizeof *c);
    c->name = v[0].e->cls[0] ? v[0].e->cls : "[unknown]";
    c->age_min_ns = c->age_median_ns = c->age_max_ns = -1;
    size_t known = 0, first = n;
    for (size_t i = 0; i < n; i++) {
        c->objects++;
        c->bytes += v[i].e->size;
        if (v[i].e->age_ns >= 0 && first == n)
            first = i;
        known += v[i].e->age_ns >= 0;
    }
    if (known) {
        c->age_min_ns = v[first].e->age_ns;
        c->age_max_ns = v[n - 1].e->age_ns;
        c->age_median_ns = v[first + (known - 1) / 2].e->age_ns;
    }
}

void jp_old_summarize(const jp_old_log *l, jp_old_summary *s)
{
    jp_old_summary_cleanup(s);
    s->dropped = l->dropped;
    if (!l->n)
        return;
    old_ref *v = jp_xcalloc(l->n, sizeof *v);
    for (size_t i = 0; i < l->n; i++) {
        v[i].e = &l->v[i];
        s->objects++;
        s->bytes += l->v[i].size;
        const jp_old_sample *e = &l->v[i];
        if (e->heap_used && e->alloc_ns && (!s->heap_first_ns || e->alloc_ns < s->heap_first_ns)) {
            s->heap_first_ns = e->alloc_ns;
            s->heap_first = e->heap_used;
        }
        if (e->heap_used && e->alloc_ns && e->alloc_ns >= s->heap_last_ns) {
            s->heap_last_ns = e->alloc_ns;
            s->heap_last = e->heap_used;
        }
    }
    qsort(v, l->n, sizeof *v, by_class_then_age);
    s->classes = jp_xcalloc(l->n, sizeof *s->classes);
    for (size_t i = 0; i < l->n;) {
        size_t j = i + 1;
        while (j < l->n && strcmp(v[j].e->cls, v[i].e->cls) == 0)
            j++;
        class_of(v + i, j - i, &s->classes[s->n++]);
        i = j;
    }
    free(v);
    qsort(s->classes, s->n, sizeof *s->classes, by_objects);
}
