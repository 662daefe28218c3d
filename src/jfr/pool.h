/* pool.h - the constant pools of one chunk, indexed lazily.
 *
 * Internal to src/jfr. Loading walks the checkpoint chain once and, for the
 * few pool types a profile needs, remembers key -> offset of the value; values
 * are decoded only when an event refers to them (see resolve.h). Every other
 * pool is skipped by its declared shape. The checkpoint events are copied
 * into a buffer of the pools' own (they are a small part of a chunk), back
 * to back in chain order, from a file and from memory alike, so a value is
 * read within the same bounds either way; only a chunk in memory with one
 * checkpoint (async-profiler's) has it read in place, within the same
 * bounds too, borrowing the input. jfr_pools is caller storage
 * (jfr_pools_init / jfr_pools_cleanup). */
#ifndef JP_JFR_POOL_H
#define JP_JFR_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/hash.h"
#include "jfr/meta.h"
#include "jfr/src.h"

/* Bytes of checkpoint events a chunk may hold. */
#define JFR_MAX_POOL_BYTES (512u << 20)

typedef enum jfr_pool_kind {
    JFR_POOL_STRING = 0, /* java.lang.String */
    JFR_POOL_SYMBOL,     /* jdk.types.Symbol */
    JFR_POOL_CLASS,      /* java.lang.Class */
    JFR_POOL_METHOD,     /* jdk.types.Method */
    JFR_POOL_FRAMETYPE,  /* jdk.types.FrameType */
    JFR_POOL_THREAD,     /* java.lang.Thread */
    JFR_POOL_STACK,      /* jdk.types.StackTrace */
    JFR_POOL_STATE,      /* jdk.types.ThreadState */
    /* Label pools: one String field each, read as the text of the field
     * that refers to them (see jfr_resolve_fields). */
    JFR_POOL_GCNAME,    /* jdk.types.GCName */
    JFR_POOL_GCCAUSE,   /* jdk.types.GCCause */
    JFR_POOL_GCWHEN,    /* jdk.types.GCWhen */
    JFR_POOL_OLDOBJECT, /* jdk.types.OldObject (its class: the old kind's object class) */
    JFR_POOL__COUNT
} jfr_pool_kind;

typedef struct jfr_pools {
    uint32_t cls[JFR_POOL__COUNT];    /* class index per kind, JFR_NONE when undeclared */
    jp_u64map index[JFR_POOL__COUNT]; /* key -> offset of the value from `base` */
    uint32_t checkpoints;             /* checkpoint events walked */
    uint64_t entries;                 /* pool entries seen, of every type */
    /* Pool values lie in [base, end) once loaded; bytes up to `lim` may be
     * read (end + JFR_SRC_PAD, the arena's padding, or end when the values
     * are read in place), as the event loop's word reads do. */
    const uint8_t *base, *end, *lim;
    jfr_bytes arena; /* a file's checkpoint events */
} jfr_pools;

/* Finds the pool classes of m by name. */
void jfr_pools_init(jfr_pools *pl, const jfr_meta *m);
void jfr_pools_cleanup(jfr_pools *pl);

/* Walks the chain of the chunk at chunk_off (chunk_size bytes) of src,
 * starting at its header's checkpoint offset last_cp and following each
 * event's delta until it is 0. Detects cycles, steps outside the chunk,
 * overlong chains and more than JFR_MAX_POOL_BYTES of checkpoints.
 * w names the chunk in errors. */
jp_err jfr_pools_load(jfr_pools *pl, const jfr_meta *m, const jfr_src *src, uint64_t chunk_off,
                      uint64_t chunk_size, uint64_t last_cp, const jfr_where *w);

/* The value of `key` in pool k, NULL if absent; it ends before pl->end. */
static inline const uint8_t *jfr_pools_get(const jfr_pools *pl, jfr_pool_kind k, uint64_t key)
{
    uint64_t off;
    if (!jp_u64map_get(&pl->index[k], key, &off))
        return NULL;
    return pl->base + off;
}

#endif
