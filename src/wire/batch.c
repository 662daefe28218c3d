#include "wire/batch.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/xalloc.h"

void jp_batch_init(jp_batch *b)
{
    memset(b, 0, sizeof *b);
}

void jp_batch_target_cleanup(jp_batch_target *t)
{
    free(t->cluster);
    free(t->ns);
    free(t->workload);
    free(t->service);
    free(t->pod);
    free(t->container);
    free(t->node);
    free(t->jvm);
    memset(t, 0, sizeof *t);
}

static char *jp_batch_dup(const char *s)
{
    return s ? jp_xstrdup(s) : NULL;
}

void jp_batch_target_copy(jp_batch_target *dst, const jp_batch_target *src)
{
    dst->cluster = jp_batch_dup(src->cluster);
    dst->ns = jp_batch_dup(src->ns);
    dst->workload = jp_batch_dup(src->workload);
    dst->service = jp_batch_dup(src->service);
    dst->pod = jp_batch_dup(src->pod);
    dst->container = jp_batch_dup(src->container);
    dst->node = jp_batch_dup(src->node);
    dst->jvm = jp_batch_dup(src->jvm);
    dst->pid = src->pid;
    dst->jvm_start_ns = src->jvm_start_ns;
}

static void jp_batch_docs_free(jp_batch_doc *d, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        jp_batch_target_cleanup(&d[i].target);
        free(d[i].json);
    }
    free(d);
}

void jp_batch_cleanup(jp_batch *b)
{
    free(b->id);
    free(b->collector);
    free(b->collector_version);
    jp_batch_shed(b);
    for (size_t i = 0; i < b->nwindows; i++)
        jp_batch_target_cleanup(&b->windows[i].target);
    free(b->windows);
    for (size_t i = 0; i < b->nstatuses; i++) {
        jp_batch_status *s = &b->statuses[i];
        jp_batch_target_cleanup(&s->target);
        free(s->state);
        free(s->reason);
        free(s->message);
        free(s->engine);
        free(s->mode);
    }
    free(b->statuses);
    jp_batch_docs_free(b->snapshots, b->nsnapshots);
    jp_batch_docs_free(b->deadlocks, b->ndeadlocks);
    jp_batch_docs_free(b->heaps, b->nheaps);
    for (size_t i = 0; i < b->ngcs; i++)
        jp_batch_target_cleanup(&b->gcs[i].target);
    free(b->gcs);
    jp_batch_init(b);
}

void jp_batch_shed(jp_batch *b)
{
    for (size_t i = 0; i < b->nframes; i++)
        free(b->frames[i]);
    free(b->frames);
    free(b->frame_kinds);
    b->frames = NULL;
    b->frame_kinds = NULL;
    b->nframes = b->frames_cap = b->nframe_kinds = b->frame_kinds_cap = 0;
    for (size_t i = 0; i < b->nthreads; i++)
        free(b->threads[i]);
    free(b->threads);
    b->threads = NULL;
    b->nthreads = b->threads_cap = 0;
    for (size_t i = 0; i < b->nstacks; i++)
        free(b->stacks[i].frames);
    free(b->stacks);
    b->stacks = NULL;
    b->nstacks = b->stacks_cap = 0;
    for (size_t i = 0; i < b->nwindows; i++) {
        free(b->windows[i].rows);
        b->windows[i].rows = NULL;
        b->windows[i].nrows = b->windows[i].rows_cap = 0;
    }
}

/* jp_profile_stack()'s id (src/model/profile.h says how it is made). */
uint64_t jp_batch_stack_id(const char *const *names, const size_t *lens, size_t depth)
{
    uint64_t id = jp_stack_id_begin(depth);
    for (size_t i = 0; i < depth; i++)
        id = jp_hash_combine(id, jp_frame_name_hash(names[i], lens ? lens[i] : strlen(names[i])));
    return id;
}

uint32_t jp_batch_add_frame(jp_batch *b, const char *name, size_t len)
{
    b->frames = jp_xgrow(b->frames, &b->frames_cap, b->nframes + 1, sizeof *b->frames);
    b->frames[b->nframes] = jp_xstrndup(name, len);
    if (b->nframe_kinds) { /* the kinds stay one per frame */
        b->frame_kinds = jp_xgrow(b->frame_kinds, &b->frame_kinds_cap, b->nframes + 1, 1);
        b->frame_kinds[b->nframe_kinds++] = JP_FRAME_UNKNOWN;
    }
    return (uint32_t)b->nframes++;
}

uint32_t jp_batch_add_frame_kind(jp_batch *b, const char *name, size_t len, jp_frame_kind kind)
{
    uint32_t i = jp_batch_add_frame(b, name, len);
    b->frame_kinds = jp_xgrow(b->frame_kinds, &b->frame_kinds_cap, b->nframes, 1);
    while (b->nframe_kinds < b->nframes)
        b->frame_kinds[b->nframe_kinds++] = JP_FRAME_UNKNOWN;
    b->frame_kinds[i] = (uint8_t)kind;
    return i;
}

jp_frame_kind jp_batch_frame_kind(const jp_batch *b, size_t i)
{
    return i < b->nframe_kinds && b->frame_kinds[i] < JP_FRAME_KIND_COUNT
               ? (jp_frame_kind)b->frame_kinds[i]
               : JP_FRAME_UNKNOWN;
}

uint32_t jp_batch_add_thread(jp_batch *b, const char *name, size_t len)
{
    b->threads = jp_xgrow(b->threads, &b->threads_cap, b->nthreads + 1, sizeof *b->threads);
    b->threads[b->nthreads] = jp_xstrndup(name, len);
    return (uint32_t)b->nthreads++;
}

uint32_t jp_batch_add_stack(jp_batch *b, const uint32_t *frames, uint32_t depth, bool truncated)
{
    b->stacks = jp_xgrow(b->stacks, &b->stacks_cap, b->nstacks + 1, sizeof *b->stacks);
    jp_batch_stack *s = &b->stacks[b->nstacks];
    s->frames = jp_xcalloc(depth ? depth : 1, sizeof *s->frames);
    if (depth)
        memcpy(s->frames, frames, depth * sizeof *frames);
    s->depth = depth;
    s->truncated = truncated;
    /* Hash frame names in place (no temporary name array needed). */
    uint64_t id = jp_stack_id_begin(depth);
    for (uint32_t i = 0; i < depth; i++) {
        const char *n = b->frames[frames[i]];
        id = jp_hash_combine(id, jp_frame_name_hash(n, strlen(n)));
    }
    s->id = id;
    return (uint32_t)b->nstacks++;
}

jp_batch_window *jp_batch_add_window(jp_batch *b)
{
    b->windows = jp_xgrow(b->windows, &b->windows_cap, b->nwindows + 1, sizeof *b->windows);
    jp_batch_window *w = &b->windows[b->nwindows++];
    memset(w, 0, sizeof *w);
    return w;
}

void jp_batch_window_add_row(jp_batch_window *w, uint32_t stack, uint32_t thread, uint64_t samples,
                             uint64_t value)
{
    w->rows = jp_xgrow(w->rows, &w->rows_cap, w->nrows + 1, sizeof *w->rows);
    w->rows[w->nrows++] =
        (jp_batch_row){.stack = stack, .thread = thread, .samples = samples, .value = value};
}

jp_batch_gc *jp_batch_add_gc(jp_batch *b)
{
    b->gcs = jp_xgrow(b->gcs, &b->gcs_cap, b->ngcs + 1, sizeof *b->gcs);
    jp_batch_gc *g = &b->gcs[b->ngcs++];
    memset(g, 0, sizeof *g);
    return g;
}

size_t jp_batch_add_profile(jp_batch *b, const jp_profile *p, const jp_batch_target *target,
                            int64_t start_ns, int64_t end_ns)
{
    /* Profile frame index -> batch frame or thread index (threads share the
     * profile's frame table). */
    uint32_t *map = jp_xcalloc(p->nframes ? p->nframes : 1, sizeof *map);
    for (size_t f = 0; f < p->nframes; f++) {
        size_t len;
        const char *name = jp_profile_frame_name(p, (uint32_t)f, &len);
        if (p->frames[f].kinds & (1u << JP_FRAME_THREAD))
            map[f] = jp_batch_add_thread(b, name, len);
        else
            map[f] = jp_batch_add_frame_kind(b, name, len, jp_frame_primary_kind(&p->frames[f]));
    }
    uint32_t *smap = jp_xcalloc(p->nstacks ? p->nstacks : 1, sizeof *smap);
    uint32_t *tmp = NULL;
    size_t tmp_cap = 0;
    for (size_t s = 0; s < p->nstacks; s++) {
        const jp_stack *st = &p->stacks[s];
        tmp = jp_xgrow(tmp, &tmp_cap, st->depth + 1, sizeof *tmp);
        const uint32_t *fr = jp_profile_stack_frames(p, (uint32_t)s);
        for (uint32_t i = 0; i < st->depth; i++)
            tmp[i] = map[fr[i]];
        smap[s] = jp_batch_add_stack(b, tmp, st->depth, st->truncated);
    }
    free(tmp);
    size_t added = 0;
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        const jp_kind_table *t = &p->kinds[k];
        if (!t->count)
            continue;
        jp_batch_window *w = jp_batch_add_window(b);
        jp_batch_target_copy(&w->target, target);
        w->kind = (jp_kind)k;
        w->start_ns = start_ns;
        w->end_ns = end_ns;
        w->period_ns = t->period_ns;
        w->events = t->events;
        w->truncated = t->truncated > 0;
        /* the recorder said it lost samples (jdk.CPUTimeSamplesLost) */
        w->dropped = w->dropped || t->lost > 0;
        for (size_t c = 0; c < t->count; c++) {
            const jp_sample *cell = &t->cells[c];
            uint32_t th = cell->thread == JP_NO_THREAD ? JP_BATCH_NO_THREAD : map[cell->thread];
            jp_batch_window_add_row(w, smap[cell->stack], th, cell->samples, cell->value);
        }
        added++;
    }
    free(map);
    free(smap);
    if (jp_gc_log_any(&p->gc)) {
        jp_batch_gc *g = jp_batch_add_gc(b);
        jp_batch_target_copy(&g->target, target);
        int64_t span = end_ns > start_ns ? end_ns - start_ns : 0;
        jp_gc_window_compute(&p->gc, 0, 0, p->kinds[JP_KIND_ALLOC].value, span, &g->w);
        g->w.s.from_ns = start_ns;
        g->w.s.to_ns = end_ns;
        added++;
    }
    return added;
}
