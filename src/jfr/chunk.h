/* chunk.h - decoding one chunk (internal to src/jfr).
 *
 * A jfr_ctx is what every chunk of one jfr_read_* call shares: the input and
 * the resolved options, read-only while a chunk decodes (its events on
 * several threads, see split.h). A chunk decodes into a jfr_chunk_out of its
 * own: its frames and stacks in a
 * profile, its events aggregated into cells whose kind and value are decided
 * when the chunk is merged (merge.h), because that needs the sampling
 * settings of earlier chunks (async-profiler writes them in the first only).
 * Everything else a chunk builds (metadata, pool index, caches, plans) is
 * freed when it ends. */
#ifndef JP_JFR_CHUNK_H
#define JP_JFR_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jfr/internal.h"
#include "jfr/leak.h"
#include "jfr/src.h"
#include "model/gc.h"
#include "model/oldobj.h"
#include "model/iodetail.h"
#include "model/profile.h"

/* Sampling settings found in jdk.ActiveSetting events. */
typedef struct jfr_settings {
    bool any;           /* the chunk had a setting we use */
    int64_t jdk_period; /* JDK: ExecutionSample "period", ns (smallest seen) */
    bool has_interval;  /* async-profiler: "interval" of the main event, ns */
    int64_t interval;
    bool has_wall; /* async-profiler: "wall" interval next to cpu, ns */
    int64_t wall;
    bool has_event; /* async-profiler: "event" (cpu, wall, itimer, ...) */
    char event[32];
} jfr_settings;

typedef struct jfr_header {
    int major, minor;
    uint64_t size, cp, meta; /* chunk size; offsets within the chunk */
    int64_t start_ns, duration_ns, start_ticks, ticks_per_sec;
    uint8_t flags; /* byte 67: bit 0 = compressed integers */
} jfr_header;

typedef struct jfr_ctx {
    jfr_src src; /* the input */
    const char *name;
    uint32_t kinds; /* effective mask of jp_kind bits */
    bool threads;
    bool plans_only; /* jfr_options.plans_only */
    bool gc;         /* fill the GC log */
    bool filter;     /* keep events with from_ns <= start < to_ns */
    int64_t from_ns, to_ns;
    uint32_t nstates; /* thread states to keep (upper case), 0 = all */
    char states[JFR_MAX_STATES][32];
    bool leak;             /* pair profiler.Malloc with profiler.Free */
    bool io_detail;        /* read the endpoint / path of io events */
    jp_io_detail *io_out;  /* where the merger adds them (jfr_options.io_detail) */
    int jobs;              /* threads that decode a chunk's events (jfr_options.jobs, resolved) */
    struct jfr_team *team; /* those threads (split.h; one: the caller), for the whole read */
    jfr_bytes *buf;        /* one thread's step of a file's events, for the whole read */
    jfr_win *win;          /* ... or its window, when they are mapped (src.h) */
    uint32_t block;        /* smallest span of events (jfr_options.block, resolved) */
    uint32_t step;         /* bytes of a file read at a time by one thread (the same when set) */
} jfr_ctx;

/* What produced a cell: decides its kind when merged. */
enum {
    JFR_SLOT_EXEC = 0, /* jdk.ExecutionSample: cpu or wall */
    JFR_SLOT_WALL,     /* profiler.WallClockSample */
    JFR_SLOT_ALLOC,
    JFR_SLOT_LOCK,
    JFR_SLOT_PARK,
    JFR_SLOT_NMEM,
    JFR_SLOT_LIVE,
    JFR_SLOT_NLOCK,
    JFR_SLOT_CPUTIME,
    JFR_SLOT_IO,   /* jdk.SocketRead/Write, jdk.FileRead/Write */
    JFR_SLOT_OLD,  /* jdk.OldObjectSample */
    JFR_SLOT_FREE, /* profiler.Free: only ever a leak event */
    JFR_SLOT_LOST, /* jdk.CPUTimeSamplesLost: only ever a count */
};

/* A thread state as the cpu/wall split needs it. */
enum { JFR_STATE_NONE = 0, JFR_STATE_DEFAULT, JFR_STATE_OTHER };

typedef struct jfr_cell {
    uint32_t stack, thread; /* in the chunk's profile; thread may be JP_NO_THREAD */
    uint8_t slot, state;
    uint64_t events, samples, value;
} jfr_cell;

typedef struct jfr_chunk_out {
    uint32_t no; /* 1-based */
    size_t off;
    jfr_header h;
    jp_profile *prof; /* owned unless `direct` */
    bool direct;      /* prof is the reader's output (first chunk into an empty profile) */
    jfr_cell *cells;
    size_t ncells;
    jfr_settings set;
    bool ap_states; /* ThreadState pool holds STATE_DEFAULT: async-profiler's cpu/wall split */
    uint64_t lost;  /* jdk.CPUTimeSamplesLost.lostSamples */
    jfr_leak_chunk leak;
    jp_io_detail io; /* with c->io_detail: this chunk's endpoints and paths */
    jp_gc_log gc;    /* this chunk's GC evidence, added to prof->gc when it ends */
    jp_old_log old;  /* this chunk's old objects (kind old), added to prof->old likewise */
    jfr_report rep;  /* this chunk's counters, warnings and error */
    jfr_warner warn;
    jp_err rc;
} jfr_chunk_out;

/* Parses and checks the header of the chunk at `off` (chunk number `no`).
 * Damage (cut header, bad magic, impossible or unfinished sizes and offsets)
 * is an error through err (may be NULL). */
jp_err jfr_header_parse(const jfr_ctx *c, size_t off, uint32_t no, jfr_header *h, jp_error *err);

/* Prepares o for chunk `no` at `off`; prof NULL makes a profile of its own. */
void jfr_chunk_out_init(jfr_chunk_out *o, const jfr_ctx *c, uint32_t no, size_t off,
                        const jfr_header *h, jp_profile *prof);
void jfr_chunk_out_cleanup(jfr_chunk_out *o);

/* Decodes the chunk of o, its events on c->jobs threads. prev_off is where
 * the chunk before starts (for keys JDK 17 leaves there), SIZE_MAX for
 * none. Sets o->rc; the events before any damage stay in o. The result does
 * not depend on c->jobs. Thread-safe for distinct o. */
void jfr_chunk_decode(const jfr_ctx *c, jfr_chunk_out *o, size_t prev_off);

/* Parses a JFR timespan setting ("20 ms", "10ms", "1 s", "500 us") to ns. */
bool jfr_timespan_parse(const char *s, int64_t *ns);

#endif
