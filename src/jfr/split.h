/* split.h - a chunk's events walked in steps, on one thread or on several
 * (internal to src/jfr).
 *
 * jfr_events_range walks a range of events on the calling thread: from
 * memory in place, from a file a step at a time into a buffer, an event cut
 * by a step's end carried into the next, an unwanted event longer than a
 * step passed over unread. The serial path of a chunk is that, once.
 *
 * jfr_split_run cuts the range into spans and walks them on the team's
 * threads at once, each span into the accumulator of the thread that took
 * it. A thread takes two neighbouring spans at a time and walks both at
 * once, an event of one, then an event of the other (jfr_events_run2): the
 * walk from an event to the next waits on the load of its size, and two
 * independent walks hide each other's waits. So a team of one thread (a
 * --jobs 1 read of a big chunk) is faster than one walk from start to end. No thread walks the
 * whole range to find where events begin: each span's first event is found by looking at the bytes
 * around a nominal offset (events are size-prefixed; a place where every plausible chain of sizes
 * agrees within a few kB is taken), and then verified: a span's walk must end exactly where the
 * next span starts, else the range is damaged or a guess was wrong. Every walk ending on its mark
 * proves, from the range's first byte on, that every span started on an event: the events, and so
 * the sums (agg.h: the sum does not depend on who added what), are the
 * serial ones.
 *
 * Rare events (events.h) reach the rare callback in file order, one
 * thread at a time: the span that holds the oldest unfinished events calls
 * it at once, later spans queue copies of theirs until the spans before
 * them are finished. At most JFR_SPLIT_AHEAD spans per thread (its two)
 * are taken and not yet finished, and a span holds at most JFR_SPAN_MAX bytes, which
 * bounds those queues whatever the chunk's size.
 *
 * Damage anywhere (a walk that does not end on its mark, an event that
 * does not decode, a rare event whose callback fails) stops the threads and
 * makes jfr_split_run return false: the caller then walks the range again
 * on one thread, which stops at the damage exactly as a serial read does
 * (so its error, its warnings and its partial result are the serial ones). */
#ifndef JP_JFR_SPLIT_H
#define JP_JFR_SPLIT_H

#include <stdbool.h>
#include <stdint.h>

#include "jfr/agg.h"
#include "jfr/events.h"
#include "jfr/src.h"

#define JFR_SPLIT_BLOCK (256u << 10)    /* default smallest span */
#define JFR_SPAN_MAX (8u << 20)         /* largest span */
#define JFR_SPLIT_AHEAD 2               /* spans in flight per thread */
#define JFR_MAX_EVENT_BYTES (64u << 20) /* a wanted event longer than this: damage */

/* One walk over a range of a chunk's events. */
typedef struct jfr_walk {
    const jfr_evtab *t;
    jfr_acc *acc;       /* where the events add up */
    const jfr_src *src; /* the input */
    jfr_bytes *buf;     /* a file's steps (jfr_split_run: unused) */
    jfr_win *win;       /* ... or its windows, when src->map (jfr_split_run: unused) */
    size_t step;        /* bytes read at a time from a file */
    jfr_rare_fn rare;
    void *rare_arg;
    jfr_where *w; /* errors; its base and base_off follow the step, for the rare callback */
} jfr_walk;

/* Walks the events at [pos, end) on the calling thread. JP_OK, or the
 * error of the first event that does not decode or runs past end. */
jp_err jfr_events_range(const jfr_walk *x, uint64_t pos, uint64_t end);

/* Finding an event near an offset without walking to it (a span's first
 * event): caller storage, zero-initialized; jfr_scan_init once per chunk
 * (the arrays are kept), jfr_scan_cleanup at the end. */
#define JFR_SCAN_BYTES 8192u /* bytes looked at */
typedef struct jfr_scan {
    const jfr_meta *meta;
    bool any_class;  /* no class is flagged an event: any class id may be one */
    jfr_bytes bytes; /* the window, from a file */
    uint64_t *fate;  /* per byte of the window: where its chain of sizes leaves it */
    uint32_t *steps; /* ... and after how many events */
    uint32_t *path;  /* a chain being followed */
} jfr_scan;

void jfr_scan_init(jfr_scan *sc, const jfr_meta *m);
void jfr_scan_cleanup(jfr_scan *sc);
/* A guess at the offset of the first event at or after lo, among the
 * events at [.., end) of src, from the JFR_SCAN_BYTES at lo alone; 0 when
 * the bytes do not say. Each byte of the window's first quarter is taken
 * as a possible start and its chain of sizes (each event's size, and a type
 * id the metadata knows) followed to the end of the window; the offset
 * where all chains that read as events leave the window is the guess. A
 * guess can be wrong (a chain in the payloads of events that never joins
 * the true one): whoever walks to it verifies it. */
uint64_t jfr_scan_event(jfr_scan *sc, const jfr_src *src, uint64_t lo, uint64_t end);

/* The threads of one read and what they keep from chunk to chunk (step
 * buffers, accumulators). Not thread-safe: one chunk at a time. */
typedef struct jfr_team jfr_team;

/* A team of `jobs` threads (>= 1; the caller of jfr_split_run is one of
 * them, the others start on the first run). */
jfr_team *jfr_team_new(int jobs);
/* Stops and joins the threads; NULL is a no-op. */
void jfr_team_free(jfr_team *tm);

/* Walks [start, end) as x says on the team's threads, in spans of at
 * least `block` bytes (and at most JFR_SPAN_MAX). True when all of it
 * decoded; false (x->acc and the callback's state then hold part of the
 * run: the caller resets them) on damage. x->buf and x->w are not used:
 * errors are the serial walk's to report. */
bool jfr_split_run(jfr_team *tm, const jfr_walk *x, uint64_t start, uint64_t end, size_t block);

#endif
