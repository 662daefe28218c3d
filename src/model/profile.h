/* profile.h - the aggregated profile: interned frames, interned stacks, and
 * per profile kind the (stack, thread) -> samples/value table.
 *
 * Memory grows with distinct frames, stacks and (stack, thread) pairs only,
 * never with the number of events added. Frames are keyed by their printed
 * name (what a collapsed line and a flame bar show); the kinds a name was seen
 * with are kept as a bit mask for colouring. Thread names live in the same
 * table as frames of kind JP_FRAME_THREAD so --threads can put them on top.
 *
 * Ownership: jp_profile_new() returns a heap object freed by
 * jp_profile_free(). Pointers returned by getters are borrowed and live until
 * the next intern call or the free. Not thread-safe. */
#ifndef JP_MODEL_PROFILE_H
#define JP_MODEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "model/gc.h"
#include "model/oldobj.h"

/* ---- profile kinds (ARCHITECTURE.md, "Profile kind") ---- */
typedef enum jp_kind {
    JP_KIND_CPU = 0,
    JP_KIND_WALL,
    JP_KIND_ALLOC,
    JP_KIND_LOCK,
    JP_KIND_PARK,
    /* Appended, never inserted: stores keep the kind as its number. */
    JP_KIND_NATIVEMEM,  /* native mallocs (async-profiler nativemem) */
    JP_KIND_LIVE,       /* heap objects still live at the end (async-profiler live) */
    JP_KIND_NATIVELOCK, /* pthread mutex waits (async-profiler nativelock) */
    JP_KIND_CPUTIME,    /* JDK 25 CPU-time samples (jdk.CPUTimeSample, JEP 509) */
    JP_KIND_IO,         /* socket and file reads/writes, ns blocked (jdk.SocketRead, ...) */
    JP_KIND_OLD,        /* sampled objects still alive, by allocation site (jdk.OldObjectSample) */
    JP_KIND_COUNT
} jp_kind;

/* "cpu", "wall", ...; NULL for an out-of-range kind. */
const char *jp_kind_name(jp_kind k);
/* Parses a kind name; returns false when unknown. */
bool jp_kind_parse(const char *s, jp_kind *out);
/* Unit of the kind's value: "ns" or "bytes". */
const char *jp_kind_unit(jp_kind k);
/* True when the kind's value counts bytes (alloc, nativemem, live, old). */
bool jp_kind_is_bytes(jp_kind k);
/* The kind names joined as "cpu, wall, ... or cputime" (for messages). */
const char *jp_kind_list(void);

/* ---- frames ---- */
typedef enum jp_frame_kind {
    JP_FRAME_INTERPRETED = 0,
    JP_FRAME_JIT,
    JP_FRAME_INLINED,
    JP_FRAME_C1,
    JP_FRAME_NATIVE,
    JP_FRAME_CPP,
    JP_FRAME_KERNEL,
    JP_FRAME_UNKNOWN,
    JP_FRAME_THREAD, /* synthetic: a thread name used as a root frame */
    JP_FRAME_KIND_COUNT
} jp_frame_kind;

const char *jp_frame_kind_name(jp_frame_kind k);
/* Maps a JFR FrameType description ("Interpreted", "JIT compiled", "Inlined",
 * "Native", "C++", "Kernel", "C1 compiled") to a kind; JP_FRAME_UNKNOWN else. */
jp_frame_kind jp_frame_kind_from_jfr(const char *s, size_t len);

typedef struct jp_frame {
    uint32_t name_off; /* into the profile's name arena */
    uint32_t name_len;
    uint16_t kinds; /* bit (1 << jp_frame_kind) for every kind seen */
    uint64_t hash;  /* stable hash of the printed name */
} jp_frame;

/* ---- stacks ---- */
typedef struct jp_stack {
    uint32_t frames_off; /* into the profile's frame-id arena; root first */
    uint32_t depth;
    uint64_t id;    /* stable 64-bit id from the frame names */
    bool truncated; /* the recorder cut the stack (too deep) */
} jp_stack;

#define JP_NO_THREAD UINT32_MAX

/* One aggregated cell: all events of one kind with this stack (and thread). */
typedef struct jp_sample {
    uint32_t stack;  /* index into the stack table */
    uint32_t thread; /* frame index of the thread name, or JP_NO_THREAD */
    uint64_t samples;
    uint64_t value;
} jp_sample;

typedef struct jp_kind_table {
    jp_sample *cells;
    size_t count, cap;
    jp_u64map index;    /* (stack << 32 | thread) -> cell index */
    uint64_t events;    /* events accepted for this kind */
    uint64_t samples;   /* sum of cell samples */
    uint64_t value;     /* sum of cell values */
    uint64_t truncated; /* events whose stack was truncated */
    int64_t period_ns;  /* sampling period when known (cpu, wall), else 0 */
    uint64_t lost;      /* samples the recorder says it lost (jdk.CPUTimeSamplesLost) */
} jp_kind_table;

typedef struct jp_profile {
    /* frames */
    jp_frame *frames;
    size_t nframes, frames_cap;
    char *names; /* arena of printed names (not NUL-terminated) */
    size_t names_len, names_cap;
    jp_u64map frame_index; /* name hash (+thread flag) -> frame index (chained via probing below) */
    /* stacks */
    jp_stack *stacks;
    size_t nstacks, stacks_cap;
    uint32_t *stack_frames; /* arena of frame indexes */
    size_t stack_frames_len, stack_frames_cap;
    jp_u64map stack_index; /* stack id -> stack index */
    /* per kind */
    jp_kind_table kinds[JP_KIND_COUNT];
    /* recording range, ns since epoch (0 when unknown) */
    int64_t start_ns, end_ns;
    /* garbage collections of the range (model/gc.h); jp_profile_merge appends */
    jp_gc_log gc;
    /* the old kind's sampled live objects: class, age, heap use (model/oldobj.h) */
    jp_old_log old;
} jp_profile;

jp_profile *jp_profile_new(void);
void jp_profile_free(jp_profile *p);

/* Interns a frame by printed name; returns its index. `kind` is added to the
 * frame's kind mask. Names longer than JP_FRAME_NAME_MAX are cut. */
#define JP_FRAME_NAME_MAX 4096
uint32_t jp_profile_frame(jp_profile *p, const char *name, size_t len, jp_frame_kind kind);
/* Interns a thread name (kept apart from frames of the same text). */
uint32_t jp_profile_thread(jp_profile *p, const char *name, size_t len);

/* A stack's id, the same in a profile, in an ingest batch (src/wire/batch.c)
 * and in both stores, so stacks compare across them: jp_stack_id_begin of
 * its depth, then jp_hash_combine with each frame's jp_frame_name_hash, root
 * first. A caller with a table of frames hashes each name once. */
uint64_t jp_frame_name_hash(const char *name, size_t len);
uint64_t jp_stack_id_begin(size_t depth);

/* Interns a stack of frame indexes, root first; returns its index. A stack is
 * identified by its frames only; `truncated` is or-ed into the stored flag. */
uint32_t jp_profile_stack(jp_profile *p, const uint32_t *frames, size_t depth, bool truncated);

/* Adds events to (kind, stack, thread). thread may be JP_NO_THREAD. `events`
 * is the number of raw events this represents (usually 1). */
void jp_profile_add(jp_profile *p, jp_kind kind, uint32_t stack, uint32_t thread, uint64_t events,
                    uint64_t samples, uint64_t value);

/* Accessors. */
static inline const char *jp_profile_frame_name(const jp_profile *p, uint32_t f, size_t *len)
{
    *len = p->frames[f].name_len;
    return p->names + p->frames[f].name_off;
}
static inline const uint32_t *jp_profile_stack_frames(const jp_profile *p, uint32_t s)
{
    return p->stack_frames + p->stacks[s].frames_off;
}
/* The kind used for colouring a frame seen with several kinds. */
jp_frame_kind jp_frame_primary_kind(const jp_frame *f);
/* True when the profile has any events of kind k. */
bool jp_profile_has_kind(const jp_profile *p, jp_kind k);
/* Bytes of heap the profile holds (for benchmarks and limits). */
size_t jp_profile_memory(const jp_profile *p);

/* Merges every cell of src into dst (frames and stacks re-interned) and
 * appends its GC log. */
void jp_profile_merge(jp_profile *dst, const jp_profile *src);
/* The same for the kinds in the mask (bit 1 << jp_kind) only; the frames and
 * stacks of src are all interned either way. */
void jp_profile_merge_kinds(jp_profile *dst, const jp_profile *src, uint32_t kinds);
/* Interns the frames and stacks of src into dst (no cells) and returns the
 * maps of src indexes to dst indexes in *fmap (frames) and *smap (stacks);
 * the caller frees both. */
void jp_profile_merge_maps(jp_profile *dst, const jp_profile *src, uint32_t **fmap,
                           uint32_t **smap);

#endif
