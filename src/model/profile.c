#include "model/profile.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

static const char *const jp_kind_names[JP_KIND_COUNT] = {
    "cpu",  "wall",       "alloc",   "lock", "park", "nativemem",
    "live", "nativelock", "cputime", "io",   "old"};

const char *jp_kind_name(jp_kind k)
{
    return (unsigned)k < JP_KIND_COUNT ? jp_kind_names[k] : NULL;
}

bool jp_kind_parse(const char *s, jp_kind *out)
{
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        if (!strcmp(s, jp_kind_names[k])) {
            *out = (jp_kind)k;
            return true;
        }
    }
    return false;
}

bool jp_kind_is_bytes(jp_kind k)
{
    return k == JP_KIND_ALLOC || k == JP_KIND_NATIVEMEM || k == JP_KIND_LIVE || k == JP_KIND_OLD;
}

const char *jp_kind_unit(jp_kind k)
{
    return jp_kind_is_bytes(k) ? "bytes" : "ns";
}

const char *jp_kind_list(void)
{
    return "cpu, wall, alloc, lock, park, nativemem, live, nativelock, cputime, io or old";
}

static const char *const jp_frame_kind_names[JP_FRAME_KIND_COUNT] = {
    "interpreted", "jit", "inlined", "c1", "native", "cpp", "kernel", "unknown", "thread"};

const char *jp_frame_kind_name(jp_frame_kind k)
{
    return (unsigned)k < JP_FRAME_KIND_COUNT ? jp_frame_kind_names[k] : "unknown";
}

jp_frame_kind jp_frame_kind_from_jfr(const char *s, size_t len)
{
    static const struct {
        const char *text;
        jp_frame_kind kind;
    } map[] = {
        {"Interpreted", JP_FRAME_INTERPRETED},
        {"JIT compiled", JP_FRAME_JIT},
        {"Inlined", JP_FRAME_INLINED},
        {"Native", JP_FRAME_NATIVE},
        {"C++", JP_FRAME_CPP},
        {"Kernel", JP_FRAME_KERNEL},
        {"C1 compiled", JP_FRAME_C1},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strlen(map[i].text) == len && !memcmp(map[i].text, s, len))
            return map[i].kind;
    return JP_FRAME_UNKNOWN;
}

jp_frame_kind jp_frame_primary_kind(const jp_frame *f)
{
    /* Most specific first: a name seen as native code is native code. */
    static const jp_frame_kind order[] = {JP_FRAME_THREAD, JP_FRAME_KERNEL,     JP_FRAME_CPP,
                                          JP_FRAME_NATIVE, JP_FRAME_INLINED,    JP_FRAME_C1,
                                          JP_FRAME_JIT,    JP_FRAME_INTERPRETED};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (f->kinds & (1u << order[i]))
            return order[i];
    return JP_FRAME_UNKNOWN;
}

jp_profile *jp_profile_new(void)
{
    jp_profile *p = jp_xcalloc(1, sizeof *p);
    jp_u64map_init(&p->frame_index);
    jp_u64map_init(&p->stack_index);
    for (int k = 0; k < JP_KIND_COUNT; k++)
        jp_u64map_init(&p->kinds[k].index);
    jp_gc_log_init(&p->gc);
    jp_old_log_init(&p->old);
    return p;
}

void jp_profile_free(jp_profile *p)
{
    if (!p)
        return;
    free(p->frames);
    free(p->names);
    jp_u64map_cleanup(&p->frame_index);
    free(p->stacks);
    free(p->stack_frames);
    jp_u64map_cleanup(&p->stack_index);
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        free(p->kinds[k].cells);
        jp_u64map_cleanup(&p->kinds[k].index);
    }
    jp_gc_log_cleanup(&p->gc);
    jp_old_log_cleanup(&p->old);
    free(p);
}

static uint32_t jp_profile_intern(jp_profile *p, const char *name, size_t len, bool thread,
                                  jp_frame_kind kind)
{
    if (len > JP_FRAME_NAME_MAX)
        len = JP_FRAME_NAME_MAX;
    uint64_t h = jp_frame_name_hash(name, len);
    uint64_t key = thread ? jp_hash_combine(h, 0x746872656164ULL) : h;
    /* Linear re-probing on the (astronomically rare) 64-bit collision. */
    for (;;) {
        uint64_t idx;
        if (!jp_u64map_get(&p->frame_index, key, &idx))
            break;
        jp_frame *f = &p->frames[idx];
        bool is_thread = (f->kinds & (1u << JP_FRAME_THREAD)) != 0;
        if (f->name_len == len && is_thread == thread &&
            !memcmp(p->names + f->name_off, name, len)) {
            f->kinds |= (uint16_t)(1u << kind);
            return (uint32_t)idx;
        }
        key++;
    }
    p->names = jp_xgrow(p->names, &p->names_cap, p->names_len + len + 1, 1);
    if (len)
        memcpy(p->names + p->names_len, name, len);
    p->frames = jp_xgrow(p->frames, &p->frames_cap, p->nframes + 1, sizeof *p->frames);
    jp_frame *f = &p->frames[p->nframes];
    f->name_off = (uint32_t)p->names_len;
    f->name_len = (uint32_t)len;
    f->kinds = (uint16_t)(1u << kind);
    f->hash = h;
    p->names_len += len;
    jp_u64map_put(&p->frame_index, key, p->nframes);
    return (uint32_t)p->nframes++;
}

uint32_t jp_profile_frame(jp_profile *p, const char *name, size_t len, jp_frame_kind kind)
{
    return jp_profile_intern(p, name, len, false, kind);
}

uint32_t jp_profile_thread(jp_profile *p, const char *name, size_t len)
{
    return jp_profile_intern(p, name, len, true, JP_FRAME_THREAD);
}

uint64_t jp_frame_name_hash(const char *name, size_t len)
{
    return jp_hash_bytes(name, len > JP_FRAME_NAME_MAX ? JP_FRAME_NAME_MAX : len);
}

uint64_t jp_stack_id_begin(size_t depth)
{
    return 0x6a70726f66ULL ^ depth;
}

uint32_t jp_profile_stack(jp_profile *p, const uint32_t *frames, size_t depth, bool truncated)
{
    uint64_t id = jp_stack_id_begin(depth);
    for (size_t i = 0; i < depth; i++)
        id = jp_hash_combine(id, p->frames[frames[i]].hash);
    uint64_t key = id;
    for (;;) {
        uint64_t idx;
        if (!jp_u64map_get(&p->stack_index, key, &idx))
            break;
        jp_stack *s = &p->stacks[idx];
        /* (an empty stack compares nothing: the arena may not exist yet) */
        if (s->depth == depth &&
            (!depth || !memcmp(p->stack_frames + s->frames_off, frames, depth * sizeof *frames))) {
            s->truncated |= truncated;
            return (uint32_t)idx;
        }
        key++;
    }
    p->stack_frames = jp_xgrow(p->stack_frames, &p->stack_frames_cap, p->stack_frames_len + depth,
                               sizeof *frames);
    if (depth)
        memcpy(p->stack_frames + p->stack_frames_len, frames, depth * sizeof *frames);
    p->stacks = jp_xgrow(p->stacks, &p->stacks_cap, p->nstacks + 1, sizeof *p->stacks);
    jp_stack *s = &p->stacks[p->nstacks];
    s->frames_off = (uint32_t)p->stack_frames_len;
    s->depth = (uint32_t)depth;
    s->id = id;
    s->truncated = truncated;
    p->stack_frames_len += depth;
    jp_u64map_put(&p->stack_index, key, p->nstacks);
    return (uint32_t)p->nstacks++;
}

void jp_profile_add(jp_profile *p, jp_kind kind, uint32_t stack, uint32_t thread, uint64_t events,
                    uint64_t samples, uint64_t value)
{
    jp_kind_table *t = &p->kinds[kind];
    uint64_t key = (uint64_t)stack << 32 | thread;
    bool inserted;
    uint64_t *slot = jp_u64map_upsert(&t->index, key, t->count, &inserted);
    if (inserted) {
        t->cells = jp_xgrow(t->cells, &t->cap, t->count + 1, sizeof *t->cells);
        t->cells[t->count] = (jp_sample){.stack = stack, .thread = thread};
        t->count++;
    }
    jp_sample *c = &t->cells[*slot];
    c->samples += samples;
    c->value += value;
    t->events += events;
    t->samples += samples;
    t->value += value;
    if (p->stacks[stack].truncated)
        t->truncated += events;
}

bool jp_profile_has_kind(const jp_profile *p, jp_kind k)
{
    return (unsigned)k < JP_KIND_COUNT && p->kinds[k].count > 0;
}

size_t jp_profile_memory(const jp_profile *p)
{
    size_t n = sizeof *p + p->frames_cap * sizeof *p->frames + p->names_cap +
               p->frame_index.cap * 17 + p->stacks_cap * sizeof *p->stacks +
               p->stack_frames_cap * sizeof *p->stack_frames + p->stack_index.cap * 17;
    for (int k = 0; k < JP_KIND_COUNT; k++)
        n += p->kinds[k].cap * sizeof(jp_sample) + p->kinds[k].index.cap * 17;
    return n + jp_gc_log_memory(&p->gc) + jp_old_log_memory(&p->old);
}

void jp_profile_merge_maps(jp_profile *dst, const jp_profile *src, uint32_t **fmap_out,
                           uint32_t **smap_out)
{
    uint32_t *fmap = jp_xreallocarray(NULL, src->nframes ? src->nframes : 1, sizeof *fmap);
    for (size_t i = 0; i < src->nframes; i++) {
        const jp_frame *f = &src->frames[i];
        bool thread = (f->kinds & (1u << JP_FRAME_THREAD)) != 0;
        uint32_t d = jp_profile_intern(dst, src->names + f->name_off, f->name_len, thread,
                                       thread ? JP_FRAME_THREAD : jp_frame_primary_kind(f));
        dst->frames[d].kinds |= f->kinds;
        fmap[i] = d;
    }
    uint32_t *smap = jp_xreallocarray(NULL, src->nstacks ? src->nstacks : 1, sizeof *smap);
    uint32_t *tmp = NULL;
    size_t tmp_cap = 0;
    for (size_t i = 0; i < src->nstacks; i++) {
        const jp_stack *s = &src->stacks[i];
        tmp = jp_xgrow(tmp, &tmp_cap, s->depth ? s->depth : 1, sizeof *tmp);
        for (uint32_t j = 0; j < s->depth; j++)
            tmp[j] = fmap[src->stack_frames[s->frames_off + j]];
        smap[i] = jp_profile_stack(dst, tmp, s->depth, s->truncated);
    }
    free(tmp);
    *fmap_out = fmap;
    *smap_out = smap;
}

void jp_profile_merge_kinds(jp_profile *dst, const jp_profile *src, uint32_t kinds)
{
    uint32_t *fmap, *smap;
    jp_profile_merge_maps(dst, src, &fmap, &smap);
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        if (!(kinds & (1u << k)))
            continue;
        const jp_kind_table *t = &src->kinds[k];
        for (size_t i = 0; i < t->count; i++) {
            const jp_sample *c = &t->cells[i];
            uint32_t th = c->thread == JP_NO_THREAD ? JP_NO_THREAD : fmap[c->thread];
            jp_profile_add(dst, (jp_kind)k, smap[c->stack], th, 0, c->samples, c->value);
        }
        jp_kind_table *d = &dst->kinds[k];
        d->events += t->events;
        d->truncated += t->truncated;
        d->lost += t->lost;
        if (!d->period_ns)
            d->period_ns = t->period_ns;
    }
    if (src->start_ns && (!dst->start_ns || src->start_ns < dst->start_ns))
        dst->start_ns = src->start_ns;
    if (src->end_ns > dst->end_ns)
        dst->end_ns = src->end_ns;
    free(smap);
    free(fmap);
}

void jp_profile_merge(jp_profile *dst, const jp_profile *src)
{
    jp_profile_merge_kinds(dst, src, (1u << JP_KIND_COUNT) - 1);
    jp_gc_log_append(&dst->gc, &src->gc);
    jp_old_log_append(&dst->old, &src->old);
}
