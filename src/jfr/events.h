/* events.h - which events feed which kinds, and the loop that aggregates a
 * run of a chunk's events (internal to src/jfr).
 *
 * A jfr_evtab is compiled once per chunk from its metadata (jfr_evtab_build)
 * and only read afterwards, so several threads may run jfr_events_run over
 * disjoint runs of the same chunk's events at once, each into an
 * accumulator of its own (jfr_acc, see agg.h); accumulators add up in any
 * order. Events that do more than add to a cell (the "rare" ones: settings,
 * GC evidence, io endpoints, malloc/free pairing) are handed to a callback
 * in file order instead; the caller decides whether to handle them at once
 * (one thread) or to queue them and handle the queues in file order.
 *
 * Every read is bounded by the run's end and each event's size: an event
 * that does not decode stops the run with an error naming its offset. */
#ifndef JP_JFR_EVENTS_H
#define JP_JFR_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jfr/agg.h"
#include "jfr/chunk.h"
#include "jfr/meta.h"
#include "jfr/plan.h"

/* ---- the events a profile is made of (ARCHITECTURE.md, "Profile kind") ---- */

// NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding): one static table, a row an event
typedef struct jfr_ev_spec {
    const char *name;
    const char *thread, *thread_alt; /* field naming the thread */
    const char *value;               /* field holding the value (samples for wall) */
    const char *state;               /* field holding the thread state */
    uint8_t slot;
    uint32_t kinds; /* kinds this event can feed */
    bool duration;  /* value is a tick count to convert to ns */
} jfr_ev_spec;

#define JFR_EV_NSPECS 18 /* rows of jfr_ev_specs */
extern const jfr_ev_spec jfr_ev_specs[JFR_EV_NSPECS];

/* Event index space of a chunk's type table: 0 .. JFR_EV_NSPECS - 1 are the
 * rows of jfr_ev_specs; the rest are rare types the chunk registers itself
 * (jfr_evtab_want), up to JFR_EV_MAX. */
#define JFR_EV_MAX 48

/* Plan slots of an event row. */
enum { JFR_S_TIME, JFR_S_STACK, JFR_S_THREAD, JFR_S_STATE, JFR_S_VALUE, JFR_S_ADDR, JFR_S__COUNT };

/* What the loop needs of a wanted row, in one place. */
/* How a row's value adds up. */
enum { JFR_ADD_VALUE = 0, JFR_ADD_SAMPLES, JFR_ADD_DURATION, JFR_ADD_LOST };

typedef struct jfr_row {
    uint8_t slot; /* JFR_SLOT_* */
    uint8_t add;  /* JFR_ADD_*: the value, samples (wall), ticks to ns, lost samples */
    bool fast;    /* the plan runs as steps (plan.h) */
    uint8_t nfop; /* its steps */
    jfr_fop fop[JFR_PLAN_SLOTS];
    uint64_t value0; /* the value when the event has no value field */
    bool lead;       /* the row can be a run's lead type (events.c) */
} jfr_row;

/* Type table entries: the event index + 1, and this bit for a rare one. */
#define JFR_EV_RARE 0x80

typedef struct jfr_evtab {
    const jfr_ctx *c;
    const jfr_meta *meta;
    int64_t start_ns, start_ticks; /* the chunk header's clock */
    double ns_per_tick;
    jfr_plan plans[JFR_EV_NSPECS];
    jfr_row rows[JFR_EV_NSPECS];
    uint8_t *lut; /* type id -> event index + 1 | JFR_EV_RARE, 0 = not wanted */
    size_t lut_n;
    uint64_t far_id[JFR_EV_MAX]; /* type ids past the table */
    uint8_t far_ev[JFR_EV_MAX];
    int nfar;
    uint64_t exec_id;         /* type id of jdk.ExecutionSample, UINT64_MAX if none */
    uint32_t cls[JFR_EV_MAX]; /* class index of each wanted row, JFR_NONE when absent */
    uint64_t dense_base;      /* the range of stack keys accumulators count in lanes */
    size_t dense_n;           /* (agg.h), 0 for none */
} jfr_evtab;

/* Compiles the rows of jfr_ev_specs that the chunk's metadata declares and
 * the options want. */
void jfr_evtab_build(jfr_evtab *t, const jfr_ctx *c, const jfr_meta *m, const jfr_header *h);
void jfr_evtab_cleanup(jfr_evtab *t);
/* Counts the stack keys [base, base + n) in lanes (agg.h); 0 for none. */
void jfr_evtab_dense(jfr_evtab *t, uint64_t base, size_t n);
/* True when events of type id are wanted (hot or rare). */
bool jfr_evtab_wanted(const jfr_evtab *t, uint64_t id);
/* Routes type `id` to event index ev (>= JFR_EV_NSPECS: a rare type). */
void jfr_evtab_want(jfr_evtab *t, uint64_t id, unsigned ev, bool rare);

/* Ticks to ns since the epoch the way the JDK converts them:
 * start_ns + (ticks - start_ticks) * (1e9 / ticks_per_second). */
static inline int64_t jfr_evtab_time(const jfr_evtab *t, uint64_t ticks)
{
    int64_t d;
    double dd;
    if (__builtin_sub_overflow((int64_t)ticks, t->start_ticks, &d))
        dd = (double)(int64_t)ticks - (double)t->start_ticks;
    else
        dd = (double)d;
    return jfr_sat_add(t->start_ns, jfr_d2i(dd * t->ns_per_tick));
}

/* Decodes the plan of row i over an event's fields into s (JFR_S_* slots,
 * JFR_PLAN_SLOTS long). False when the fields do not decode. */
bool jfr_evtab_fields(const jfr_evtab *t, unsigned i, const uint8_t *p, const uint8_t *end,
                      uint64_t *s);

/* A rare event: ev its first byte, p its fields, next the byte after it.
 * A non-zero return stops the run with that code (the callback has filled
 * the error). */
typedef jp_err (*jfr_rare_fn)(void *arg, unsigned ev_index, const uint8_t *ev, const uint8_t *p,
                              const uint8_t *next);

typedef struct jfr_run {
    const uint8_t *p, *end; /* the events: [p, end) */
    const uint8_t *lim;     /* end of the readable bytes (>= end), for word reads */
    bool tail_ok;           /* an event running past end is where the run stops, not damage */
    const uint8_t *stop;    /* out: where the run stopped (end, the cut event, or the damage) */
    jfr_rare_fn rare;
    void *rare_arg;
    const jfr_where *w; /* for errors */
    /* in: the lead type (events.c) the walk's run before this one ended
     * with, when lead_known (else one is picked); out: this run's */
    bool lead_known;
    uint64_t lead_type;
} jfr_run;

/* Aggregates the events of r into acc. Returns JP_OK, or the error of the
 * first event that does not decode (r->stop is that event). */
jp_err jfr_events_run(const jfr_evtab *t, jfr_acc *acc, jfr_run *r);

/* Aggregates the events of two runs into acc at once, a step of one and a
 * step of the other (one thread keeps two walks in flight: faster than one
 * after the other), until either stops: *which says which (0: a, 1: b),
 * its r->stop and the return value are what jfr_events_run would give.
 * The other's r->stop is where it got to: jfr_events_run or this again
 * goes on from there (set its r->p to it). The runs are independent: each
 * its own rare callback, its own errors. */
jp_err jfr_events_run2(const jfr_evtab *t, jfr_acc *acc, jfr_run *a, jfr_run *b, int *which);

/* Adds one decoded event of row i (slots s) to acc, as the loop does. */
void jfr_events_add(const jfr_evtab *t, jfr_acc *acc, unsigned i, const uint64_t *s);

#endif
