/* leak.h - pairing native mallocs with their frees (nativemem with `leak`).
 *
 * Internal to src/jfr. The question is "who leaks": mallocs whose address no
 * later profiler.Free releases, leaving out the youngest ones, which are not
 * leaks yet (async-profiler's converter: --leak, --tail). A chunk collects
 * its Malloc and Free events (jfr_leak_chunk_add) and reduces them
 * (jfr_leak_chunk_reduce): in time order, file order breaking ties, only the
 * last event of each address matters to what comes after. The reader applies
 * the reduced chunks in file order to one jfr_leak (jfr_leak_apply); at the
 * end jfr_leak_finish adds the mallocs still alive to the profile, except
 * those in the last `tail` fraction of the span from the first to the last
 * Malloc/Free event. A Free of an address never seen is not an error.
 *
 * Memory: a chunk holds its own Malloc/Free events until it is reduced; the
 * jfr_leak one entry per address seen. Caller storage (_init/_cleanup); not
 * thread-safe, but separate objects may be used by separate threads. */
#ifndef JP_JFR_LEAK_H
#define JP_JFR_LEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "model/profile.h"

typedef struct jfr_leak_ev {
    int64_t t; /* ns since the epoch */
    uint64_t addr;
    uint64_t size;  /* 0 for a free */
    uint64_t stack; /* pool key, then (after the chunk resolves it) model stack index */
    uint64_t thread;
    uint32_t seq; /* file order within the chunk */
    bool is_free;
} jfr_leak_ev;

/* One chunk's events; after reduce, the last event of each address. */
typedef struct jfr_leak_chunk {
    jfr_leak_ev *ev;
    size_t n, cap;
    bool any; /* saw a Malloc or Free (min_t/max_t valid) */
    int64_t min_t, max_t;
} jfr_leak_chunk;

void jfr_leak_chunk_init(jfr_leak_chunk *c);
void jfr_leak_chunk_cleanup(jfr_leak_chunk *c);
void jfr_leak_chunk_add(jfr_leak_chunk *c, int64_t t, uint64_t addr, uint64_t size, uint64_t stack,
                        uint64_t thread, bool is_free);
void jfr_leak_chunk_reduce(jfr_leak_chunk *c);

typedef struct jfr_leak_entry {
    int64_t t;
    uint64_t size;
    uint32_t stack, thread;
    bool alive;
} jfr_leak_entry;

typedef struct jfr_leak {
    jp_u64map index; /* address -> entry */
    jfr_leak_entry *e;
    size_t n, cap;
    bool any;
    int64_t min_t, max_t;
} jfr_leak;

void jfr_leak_init(jfr_leak *l);
void jfr_leak_cleanup(jfr_leak *l);
/* Applies a reduced chunk whose stack/thread fields are model indexes of a
 * chunk profile; smap/fmap map them into the target profile (NULL: same). */
void jfr_leak_apply(jfr_leak *l, const jfr_leak_chunk *c, const uint32_t *smap,
                    const uint32_t *fmap);
/* Adds the leaks to p as nativemem (1 sample, size bytes each); returns how
 * many. A malloc at time t counts when t <= max - (int64)(tail * (max - min)). */
uint64_t jfr_leak_finish(jfr_leak *l, jp_profile *p, double tail);

#endif
