/* batch.h - the upload batch: what an agent sends to jprof-server in one
 * POST /api/v1/ingest, as plain C data (docs/API.md has the JSON shape).
 *
 * A batch carries profile windows that share one frame-name table and one
 * stack table (each stack a root-first list of frame indexes), plus target
 * status, thread snapshots, deadlocks, heap histograms, a heartbeat and the
 * agent's queue counters. Thread snapshots and deadlocks travel as JSON text (their codec is
 * src/wire/snapshot_json.*); the server stores and serves that text as is.
 *
 * Ownership: jp_batch_init() a caller-storage batch; every pointer in it is
 * owned by the batch (heap) and released by jp_batch_cleanup(). The decoder
 * (batch_json.h) fills one; producers (the agent) may fill one by hand with
 * the jp_batch_add_* helpers. Not thread-safe. */
#ifndef JP_WIRE_BATCH_H
#define JP_WIRE_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/gc.h"
#include "model/profile.h"

/* Hard caps a decoder enforces (the server may configure lower ones). */
#define JP_BATCH_STRING_MAX 4096 /* bytes of any identity string, reason, frame name */
#define JP_BATCH_DEPTH_MAX 2048  /* frames per stack */
#define JP_BATCH_ID_MAX 128      /* bytes of a batch id */

/* One JVM (ARCHITECTURE.md, "Target"). Strings are NULL when unknown; the
 * store treats NULL as "". namespace and service are required on windows. */
typedef struct jp_batch_target {
    char *cluster, *ns, *workload, *service, *pod, *container, *node;
    int64_t pid;          /* 0 when unknown */
    int64_t jvm_start_ns; /* JVM start, ns since epoch; 0 when unknown */
    char *jvm;            /* vendor and version, e.g. "Eclipse Adoptium 17.0.9" */
} jp_batch_target;

/* One root-first stack: indexes into jp_batch.frames. */
typedef struct jp_batch_stack {
    uint32_t *frames;
    uint32_t depth;
    bool truncated; /* the recorder cut it */
    uint64_t id;    /* jp_batch_stack_id() of its frame names (computed, never trusted) */
} jp_batch_stack;

/* One aggregated row of a window: all events of one stack (and thread). */
typedef struct jp_batch_row {
    uint32_t stack;  /* index into jp_batch.stacks */
    uint32_t thread; /* index into jp_batch.threads, or JP_BATCH_NO_THREAD */
    uint64_t samples;
    uint64_t value; /* in the kind's unit (ns or bytes) */
} jp_batch_row;

#define JP_BATCH_NO_THREAD UINT32_MAX

/* (target, kind, start, end, period) -> rows (ARCHITECTURE.md, "Profile window"). */
typedef struct jp_batch_window {
    jp_batch_target target;
    jp_kind kind;
    int64_t start_ns, end_ns; /* ns since epoch; start <= end */
    int64_t period_ns;        /* sampling period, 0 when not a sampled kind */
    uint64_t events;          /* raw events the recorder produced in the window */
    bool dropped;             /* the recorder lost events (buffer full) */
    bool truncated;           /* some stacks were cut, or rows were capped by the agent */
    jp_batch_row *rows;
    size_t nrows, rows_cap;
} jp_batch_window;

/* Why a target is or is not profiled, at a time. */
typedef struct jp_batch_status {
    jp_batch_target target;
    int64_t time_ns;
    char *state;      /* "active", "skipped", "failed", "stopped", ... */
    char *reason;     /* a status reason word, e.g. "disabled", "conflict", "attach_timeout"; may be
                         NULL */
    char *message;    /* free text for humans; may be NULL */
    char *engine;     /* "jfr", "async-profiler"; may be NULL */
    char *mode;       /* what the target's policy asks: "continuous", "temporary", "disabled",
                         "off"; may be NULL (an older agent) */
    int64_t until_ns; /* end of a temporary window (also once expired), 0 none */
} jp_batch_status;

/* A JSON document about one target at one time (a thread snapshot or a
 * deadlock event), kept as compact JSON text. */
typedef struct jp_batch_doc {
    jp_batch_target target;
    int64_t time_ns;
    char *json; /* NUL-terminated compact JSON object */
    size_t len;
} jp_batch_doc;

/* The GC summary of one target over one profile window (model/gc.h; its
 * JSON in wire/gc_json.h). */
typedef struct jp_batch_gc {
    jp_batch_target target;
    jp_gc_window w; /* w.s.from_ns, w.s.to_ns: the window */
} jp_batch_gc;

typedef struct jp_batch {
    char *id;                /* idempotency id, unique per batch (required) */
    char *collector;         /* collector identity, e.g. "jprof-agent@node-1" (required) */
    char *collector_version; /* may be NULL */
    int64_t sent_ns;         /* when the agent sent it (0 unknown) */
    bool heartbeat;          /* the agent's periodic "I am alive" */
    /* the agent's retry queue, cumulative since the agent started */
    uint64_t queue_dropped_batches, queue_dropped_bytes;
    int64_t queue_oldest_dropped_ns; /* window start of the oldest dropped data, 0 none */
    uint64_t queue_bytes;            /* bytes queued when sent */
    bool has_queue;                  /* the batch carried the queue counters */

    char **frames; /* frame-name table (printed names, NUL-terminated) */
    size_t nframes, frames_cap;
    /* each frame's kind (jp_frame_kind: interpreted, jit, inlined, native,
     * ...) for colouring; nframe_kinds is 0 (all unknown, an older agent) or
     * nframes */
    uint8_t *frame_kinds;
    size_t nframe_kinds, frame_kinds_cap;
    char **threads; /* thread-name table */
    size_t nthreads, threads_cap;
    jp_batch_stack *stacks;
    size_t nstacks, stacks_cap;
    jp_batch_window *windows;
    size_t nwindows, windows_cap;
    jp_batch_status *statuses;
    size_t nstatuses, statuses_cap;
    jp_batch_doc *snapshots; /* thread snapshots */
    size_t nsnapshots, snapshots_cap;
    jp_batch_doc *deadlocks;
    size_t ndeadlocks, deadlocks_cap;
    jp_batch_gc *gcs; /* GC summaries (none from an older agent) */
    size_t ngcs, gcs_cap;
    /* heap histograms: {"target", "time", "histogram": wire/heap_json.h};
     * at most JP_BATCH_HEAP_CLASSES classes each */
    jp_batch_doc *heaps;
    size_t nheaps, heaps_cap;
} jp_batch;

/* Classes one uploaded heap histogram may list (its biggest; the totals
 * count every class). */
#define JP_BATCH_HEAP_CLASSES 4096

void jp_batch_init(jp_batch *b);
void jp_batch_cleanup(jp_batch *b);
/* Frees the bulk of a batch: its frame and thread names, stacks and
 * windows' rows (nrows becomes 0). Its id, collector, queue counters,
 * windows' targets and figures, and documents stay (what a server answers
 * with once the store has encoded the rest). jp_batch_cleanup still frees
 * what is left. */
void jp_batch_shed(jp_batch *b);

/* The stable stack id of root-first frame names, identical to the id
 * jp_profile_stack() gives the same stack (src/model/profile.c), so ids
 * agree between a JFR file read locally and the server. */
uint64_t jp_batch_stack_id(const char *const *names, const size_t *lens, size_t depth);

/* Frees the strings of a target and zeroes it. */
void jp_batch_target_cleanup(jp_batch_target *t);
/* Deep copy (dst must be clean). */
void jp_batch_target_copy(jp_batch_target *dst, const jp_batch_target *src);

/* Builders (used by the JFR ingest path and by producers). Each returns the
 * new element's index; strings are copied. */
uint32_t jp_batch_add_frame(jp_batch *b, const char *name, size_t len);
/* The same with the frame's kind (then every frame has one; others unknown). */
uint32_t jp_batch_add_frame_kind(jp_batch *b, const char *name, size_t len, jp_frame_kind kind);
/* Frame i's kind, JP_FRAME_UNKNOWN when the batch did not say. */
jp_frame_kind jp_batch_frame_kind(const jp_batch *b, size_t i);
uint32_t jp_batch_add_thread(jp_batch *b, const char *name, size_t len);
/* Computes the stack id from the frame names; takes a copy of frames. */
uint32_t jp_batch_add_stack(jp_batch *b, const uint32_t *frames, uint32_t depth, bool truncated);
/* Returns the new window (zeroed, target empty); valid until the next add. */
jp_batch_window *jp_batch_add_window(jp_batch *b);
void jp_batch_window_add_row(jp_batch_window *w, uint32_t stack, uint32_t thread, uint64_t samples,
                             uint64_t value);

/* Returns the new GC record (zeroed, target empty); valid until the next add. */
jp_batch_gc *jp_batch_add_gc(jp_batch *b);

/* Adds one window per kind present in `p` (a parsed JFR file) for `target`,
 * covering [start_ns, end_ns), and the GC record of the window when the
 * profile holds GC events (the allocation profile's total is the last
 * resort for the rate, as for a local recording). Frames, threads and
 * stacks are interned into the batch's tables. Returns the number of
 * windows and GC records added. */
size_t jp_batch_add_profile(jp_batch *b, const jp_profile *p, const jp_batch_target *target,
                            int64_t start_ns, int64_t end_ns);

#endif
