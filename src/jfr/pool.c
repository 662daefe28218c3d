/* pool.c - checkpoint chain walk and the key -> offset index of pools. */
#include "jfr/pool.h"

#include <string.h>

static const char *const jfr_pool_names[JFR_POOL__COUNT] = {
    [JFR_POOL_STRING] = "java.lang.String",       [JFR_POOL_SYMBOL] = "jdk.types.Symbol",
    [JFR_POOL_CLASS] = "java.lang.Class",         [JFR_POOL_METHOD] = "jdk.types.Method",
    [JFR_POOL_FRAMETYPE] = "jdk.types.FrameType", [JFR_POOL_THREAD] = "java.lang.Thread",
    [JFR_POOL_STACK] = "jdk.types.StackTrace",    [JFR_POOL_STATE] = "jdk.types.ThreadState",
    [JFR_POOL_GCNAME] = "jdk.types.GCName",       [JFR_POOL_GCCAUSE] = "jdk.types.GCCause",
    [JFR_POOL_GCWHEN] = "jdk.types.GCWhen",       [JFR_POOL_OLDOBJECT] = "jdk.types.OldObject",
};

void jfr_pools_init(jfr_pools *pl, const jfr_meta *m)
{
    memset(pl, 0, sizeof *pl);
    for (int k = 0; k < JFR_POOL__COUNT; k++) {
        pl->cls[k] = jfr_meta_class(m, jfr_pool_names[k]);
        jp_u64map_init(&pl->index[k]);
    }
}

void jfr_pools_cleanup(jfr_pools *pl)
{
    for (int k = 0; k < JFR_POOL__COUNT; k++)
        jp_u64map_cleanup(&pl->index[k]);
    jfr_bytes_cleanup(&pl->arena);
}

static int pool_kind_of(const jfr_pools *pl, uint32_t cls)
{
    for (int k = 0; k < JFR_POOL__COUNT; k++)
        if (pl->cls[k] == cls)
            return k;
    return -1;
}

/* One pool inside a checkpoint: type id, count, count x (key, value).
 * Offsets of values count from `base`. */
static jp_err pool_read(jfr_pools *pl, const jfr_meta *m, const uint8_t **pp, const uint8_t *end,
                        const uint8_t *base, const jfr_where *w)
{
    const uint8_t *p = *pp;
    uint64_t type = 0, count = 0;
    if (!jfr_varint(&p, end, &type))
        return jfr_fail(w, JP_ERR_FORMAT, p, "constant pool type runs past its checkpoint");
    uint32_t cls = jfr_meta_class_by_id(m, type);
    if (cls == JFR_NONE)
        return jfr_fail(w, JP_ERR_FORMAT, *pp, "constant pool of undefined type id %llu",
                        (unsigned long long)type);
    const uint8_t *at = p;
    if (!jfr_varint(&p, end, &count))
        return jfr_fail(w, JP_ERR_FORMAT, at, "constant pool count runs past its checkpoint");
    /* Each entry takes at least its key byte. */
    if (count > (uint64_t)(end - p))
        return jfr_fail(w, JP_ERR_LIMIT, at, "constant pool count %llu exceeds limit",
                        (unsigned long long)count);
    int kind = pool_kind_of(pl, cls);
    for (uint64_t i = 0; i < count; i++) {
        uint64_t key;
        const uint8_t *kat = p;
        if (!jfr_varint(&p, end, &key))
            return jfr_fail(w, JP_ERR_FORMAT, kat, "constant pool key runs past its checkpoint");
        if (kind >= 0) {
            /* The chain runs newest first; keep the first value seen. */
            bool inserted;
            jp_u64map_upsert(&pl->index[kind], key, (uint64_t)(p - base), &inserted);
        }
        jp_err rc = jfr_skip_class(m, cls, &p, end, 0, w);
        if (rc)
            return rc;
    }
    pl->entries += count;
    *pp = p;
    return JP_OK;
}

/* Parses the checkpoint event [cp, end); returns its delta to the previous
 * one. */
static jp_err checkpoint_read(jfr_pools *pl, const jfr_meta *m, const uint8_t *cp,
                              const uint8_t *end, const uint8_t *base, int64_t *delta,
                              const jfr_where *w)
{
    const uint8_t *p = cp;
    uint64_t size, type = 0, v;
    if (!jfr_varint(&p, end, &size))
        return jfr_fail(w, JP_ERR_FORMAT, cp, "checkpoint event size runs past the chunk");
    if (!jfr_varint(&p, end, &type) || type != 1)
        return jfr_fail(w, JP_ERR_FORMAT, cp, "checkpoint chain points at an event of type %llu",
                        (unsigned long long)type);
    /* start time, duration, delta, then one byte of type flags */
    if (!jfr_varint(&p, end, &v) || !jfr_varint(&p, end, &v) || !jfr_varint(&p, end, &v) ||
        p >= end)
        return jfr_fail(w, JP_ERR_FORMAT, cp, "checkpoint header runs past the event");
    *delta = (int64_t)v;
    p++;
    const uint8_t *at = p;
    uint64_t npools;
    if (!jfr_varint(&p, end, &npools))
        return jfr_fail(w, JP_ERR_FORMAT, at, "checkpoint pool count runs past the event");
    if (npools > (uint64_t)(end - p))
        return jfr_fail(w, JP_ERR_LIMIT, at, "checkpoint pool count %llu exceeds limit",
                        (unsigned long long)npools);
    for (uint64_t i = 0; i < npools; i++) {
        jp_err rc = pool_read(pl, m, &p, end, base, w);
        if (rc)
            return rc;
    }
    if (p != end)
        return jfr_fail(w, JP_ERR_FORMAT, p, "checkpoint content ends %lld bytes before its size",
                        (long long)(end - p));
    return JP_OK;
}

/* The checkpoint event at chunk offset cp: in place, or read into the
 * arena at *at. Sets *wc to name offsets in it. */
static jp_err checkpoint_get(jfr_pools *pl, const jfr_src *src, uint64_t chunk_off,
                             uint64_t chunk_size, uint64_t cp, bool in_place, const uint8_t **ev,
                             const uint8_t **end, jfr_where *wc, const jfr_where *w)
{
    uint64_t avail = chunk_size - cp, size = 0;
    jfr_bytes head = {0};
    size_t n = avail < 10 ? (size_t)avail : 10;
    const uint8_t *h;
    jp_err rc = jfr_src_get(src, chunk_off + cp, n, &head, 0, &h, w->err);
    if (!rc) {
        const uint8_t *p = h;
        if (!jfr_varint(&p, h + n, &size) || size == 0 || size > avail)
            rc = jfr_fail(w, JP_ERR_FORMAT, NULL, "checkpoint event size runs past the chunk");
    }
    jfr_bytes_cleanup(&head);
    if (rc)
        return rc;
    if (pl->arena.len + size > JFR_MAX_POOL_BYTES)
        return jfr_fail(w, JP_ERR_LIMIT, NULL,
                        "checkpoint events of more than %u bytes in one chunk", JFR_MAX_POOL_BYTES);
    size_t at = pl->arena.len;
    const uint8_t *from;
    if ((rc = jfr_src_get(src, chunk_off + cp, (size_t)size, &pl->arena, at, &from, w->err)))
        return rc;
    if (src->mem && !in_place) {
        jfr_bytes_reserve(&pl->arena, at + (size_t)size);
        memcpy(pl->arena.data + at, from, (size_t)size);
        pl->arena.len = at + (size_t)size;
    }
    *ev = in_place ? from : pl->arena.data + at;
    *end = *ev + size;
    *wc = *w;
    wc->base = *ev;
    wc->base_off = chunk_off + cp;
    return JP_OK;
}

/* Copies the first checkpoint, read in place, to the start of the arena
 * where the offsets of its values are counted the same. */
static void checkpoint_keep(jfr_pools *pl, const uint8_t *ev, size_t size)
{
    jfr_bytes_reserve(&pl->arena, size);
    memcpy(pl->arena.data, ev, size);
    pl->arena.len = size;
}

/* Checkpoints are copied into the arena, from memory too, so that a value
 * is read within the same bounds either way; but the first one of a chunk
 * in memory is read in place, and copied only when another one follows:
 * async-profiler writes one checkpoint a chunk, whose values are then read
 * where they are (its copy cost as much as its walk: a fresh page of the
 * arena is a page fault, dear under this VM's hypervisor). */
jp_err jfr_pools_load(jfr_pools *pl, const jfr_meta *m, const jfr_src *src, uint64_t chunk_off,
                      uint64_t chunk_size, uint64_t last_cp, const jfr_where *w)
{
    jp_u64map seen;
    jp_u64map_init(&seen);
    jp_err rc = JP_OK;
    uint64_t cp = last_cp;
    const uint8_t *first = NULL, *first_end = NULL; /* the first, while in place */
    for (;;) {
        bool inserted;
        jp_u64map_upsert(&seen, cp, 0, &inserted);
        jfr_where at_cp = *w;
        at_cp.base = NULL; /* offsets from the chunk, not a pointer */
        at_cp.base_off = chunk_off + cp;
        if (!inserted) {
            rc = jfr_fail(&at_cp, JP_ERR_FORMAT, NULL, "checkpoint chain loops back to itself");
            break;
        }
        if (++pl->checkpoints > JFR_MAX_CHECKPOINTS) {
            rc = jfr_fail(&at_cp, JP_ERR_LIMIT, NULL, "more than %d checkpoints in one chunk",
                          JFR_MAX_CHECKPOINTS);
            break;
        }
        if (first) {
            checkpoint_keep(pl, first, (size_t)(first_end - first));
            first = first_end = NULL;
        }
        bool in_place = src->mem && pl->checkpoints == 1;
        const uint8_t *ev = NULL, *end = NULL;
        jfr_where wc;
        if ((rc = checkpoint_get(pl, src, chunk_off, chunk_size, cp, in_place, &ev, &end, &wc,
                                 &at_cp)))
            break;
        if (in_place) {
            first = ev;
            first_end = end;
        }
        int64_t delta = 0;
        if ((rc = checkpoint_read(pl, m, ev, end, in_place ? ev : pl->arena.data, &delta, &wc)))
            break;
        if (delta == 0)
            break;
        int64_t next;
        if (__builtin_add_overflow((int64_t)cp, delta, &next) || next < JFR_HEADER_SIZE ||
            (uint64_t)next >= chunk_size) {
            rc = jfr_fail(&at_cp, JP_ERR_FORMAT, NULL,
                          "checkpoint delta %lld points outside the chunk", (long long)delta);
            break;
        }
        cp = (uint64_t)next;
    }
    jp_u64map_cleanup(&seen);
    if (first) {
        pl->base = first;
        pl->end = pl->lim = first_end;
    } else {
        pl->base = pl->arena.data;
        pl->end = pl->arena.data ? pl->arena.data + pl->arena.len : NULL;
        pl->lim = pl->end ? pl->end + JFR_SRC_PAD : NULL;
    }
    return rc;
}
