/* events.c - the event rows, their compiled plans and the event loop. */
#include "jfr/events.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

/* Largest event type id looked up by table; larger ones by a short list. */
#define JFR_LUT_MAX 65536

#define KB(k) (1u << (k))
const jfr_ev_spec jfr_ev_specs[JFR_EV_NSPECS] = {
    {"jdk.ExecutionSample", "sampledThread", "eventThread", NULL, "state", JFR_SLOT_EXEC,
     KB(JP_KIND_CPU) | KB(JP_KIND_WALL), false},
    {"profiler.WallClockSample", "sampledThread", "eventThread", "samples", "state", JFR_SLOT_WALL,
     KB(JP_KIND_WALL), false},
    {"jdk.ObjectAllocationSample", "eventThread", NULL, "weight", NULL, JFR_SLOT_ALLOC,
     KB(JP_KIND_ALLOC), false},
    {"jdk.ObjectAllocationInNewTLAB", "eventThread", NULL, "tlabSize", NULL, JFR_SLOT_ALLOC,
     KB(JP_KIND_ALLOC), false},
    {"jdk.ObjectAllocationOutsideTLAB", "eventThread", NULL, "allocationSize", NULL, JFR_SLOT_ALLOC,
     KB(JP_KIND_ALLOC), false},
    {"jdk.JavaMonitorEnter", "eventThread", NULL, "duration", NULL, JFR_SLOT_LOCK, KB(JP_KIND_LOCK),
     true},
    {"jdk.ThreadPark", "eventThread", NULL, "duration", NULL, JFR_SLOT_PARK, KB(JP_KIND_PARK),
     true},
    {"profiler.Malloc", "eventThread", NULL, "size", NULL, JFR_SLOT_NMEM, KB(JP_KIND_NATIVEMEM),
     false},
    {"profiler.Free", "eventThread", NULL, NULL, NULL, JFR_SLOT_FREE, KB(JP_KIND_NATIVEMEM), false},
    {"profiler.LiveObject", "eventThread", NULL, "allocationSize", NULL, JFR_SLOT_LIVE,
     KB(JP_KIND_LIVE), false},
    {"profiler.NativeLock", "eventThread", NULL, "duration", NULL, JFR_SLOT_NLOCK,
     KB(JP_KIND_NATIVELOCK), true},
    {"jdk.CPUTimeSample", "eventThread", NULL, "samplingPeriod", NULL, JFR_SLOT_CPUTIME,
     KB(JP_KIND_CPUTIME), true},
    {"jdk.CPUTimeSamplesLost", "eventThread", NULL, "lostSamples", NULL, JFR_SLOT_LOST,
     KB(JP_KIND_CPUTIME), false},
    /* I/O: the time blocked; host, port and path stay in the recording */
    {"jdk.SocketRead", "eventThread", NULL, "duration", NULL, JFR_SLOT_IO, KB(JP_KIND_IO), true},
    {"jdk.SocketWrite", "eventThread", NULL, "duration", NULL, JFR_SLOT_IO, KB(JP_KIND_IO), true},
    {"jdk.FileRead", "eventThread", NULL, "duration", NULL, JFR_SLOT_IO, KB(JP_KIND_IO), true},
    {"jdk.FileWrite", "eventThread", NULL, "duration", NULL, JFR_SLOT_IO, KB(JP_KIND_IO), true},
    /* objects still alive when the recording ended, at their allocation
     * site; objectSize where the JDK records it (25 does, 17 not: 0). A
     * rare row: class, age and heap use go to the old-object log */
    {"jdk.OldObjectSample", "eventThread", NULL, "objectSize", NULL, JFR_SLOT_OLD, KB(JP_KIND_OLD),
     false},
};

void jfr_evtab_want(jfr_evtab *t, uint64_t id, unsigned ev, bool rare)
{
    if (ev >= JFR_EV_MAX)
        return;
    uint8_t e = (uint8_t)((ev + 1) | (rare ? JFR_EV_RARE : 0));
    if (id < JFR_LUT_MAX) {
        if (id >= t->lut_n) {
            t->lut = jp_xrealloc(t->lut, (size_t)id + 1);
            memset(t->lut + t->lut_n, 0, (size_t)id + 1 - t->lut_n);
            t->lut_n = (size_t)id + 1;
        }
        t->lut[id] = e;
    } else if (t->nfar < JFR_EV_MAX) {
        t->far_id[t->nfar] = id;
        t->far_ev[t->nfar++] = e;
    }
}

/* Rows whose events do more than add to a cell go to the rare callback. */
static bool row_rare(const jfr_ctx *c, const jfr_ev_spec *sp)
{
    if (c->leak && (sp->slot == JFR_SLOT_NMEM || sp->slot == JFR_SLOT_FREE))
        return true;
    return (sp->slot == JFR_SLOT_IO && c->io_detail) || sp->slot == JFR_SLOT_OLD;
}

/* Whether events of a row can be taken by the lead type's short path (see
 * "the lead type" below): a stack, then a value or a state, after a few
 * integers each; no thread, no time filter. */
static bool lead_shape(const jfr_ctx *c, const jfr_row *row)
{
    return !c->filter && !c->plans_only && row->fast && row->nfop == 2 &&
           row->add == JFR_ADD_VALUE && row->fop[0].slot == JFR_S_STACK &&
           (row->fop[1].slot == JFR_S_VALUE || row->fop[1].slot == JFR_S_STATE) &&
           row->fop[0].skip <= 3 && row->fop[1].skip <= 3;
}

static void row_plan(jfr_evtab *t, unsigned i, uint32_t cls)
{
    const jfr_meta *m = t->meta;
    const jfr_ctx *c = t->c;
    const jfr_ev_spec *sp = &jfr_ev_specs[i];
    bool leak = c->leak && (sp->slot == JFR_SLOT_NMEM || sp->slot == JFR_SLOT_FREE);
    uint32_t caps[JFR_S__COUNT];
    caps[JFR_S_TIME] = c->filter || leak ? jfr_meta_field(m, cls, "startTime") : JFR_NONE;
    caps[JFR_S_STACK] = jfr_meta_field(m, cls, "stackTrace");
    caps[JFR_S_THREAD] = JFR_NONE;
    if (c->threads) {
        caps[JFR_S_THREAD] = jfr_meta_field(m, cls, sp->thread);
        if (caps[JFR_S_THREAD] == JFR_NONE && sp->thread_alt)
            caps[JFR_S_THREAD] = jfr_meta_field(m, cls, sp->thread_alt);
    }
    caps[JFR_S_STATE] = sp->state ? jfr_meta_field(m, cls, sp->state) : JFR_NONE;
    caps[JFR_S_VALUE] = sp->value ? jfr_meta_field(m, cls, sp->value) : JFR_NONE;
    caps[JFR_S_ADDR] = leak ? jfr_meta_field(m, cls, "address") : JFR_NONE;
    jfr_plan *pl = &t->plans[i];
    jfr_plan_compile(pl, m, cls, caps, JFR_S__COUNT);
    jfr_row *row = &t->rows[i];
    *row = (jfr_row){.slot = sp->slot,
                     .add = sp->slot == JFR_SLOT_LOST   ? JFR_ADD_LOST
                            : sp->slot == JFR_SLOT_WALL ? JFR_ADD_SAMPLES
                            : sp->duration              ? JFR_ADD_DURATION
                                                        : JFR_ADD_VALUE,
                     .fast = pl->fast,
                     .nfop = pl->nfop,
                     .value0 = sp->slot == JFR_SLOT_WALL};
    memcpy(row->fop, pl->fop, sizeof row->fop);
    row->lead = lead_shape(c, row);
    t->cls[i] = cls;
    jfr_evtab_want(t, m->classes[cls].id, i, row_rare(c, sp));
}

void jfr_evtab_build(jfr_evtab *t, const jfr_ctx *c, const jfr_meta *m, const jfr_header *h)
{
    memset(t, 0, sizeof *t);
    t->c = c;
    t->meta = m;
    t->start_ns = h->start_ns;
    t->start_ticks = h->start_ticks;
    t->ns_per_tick = 1e9 / (double)h->ticks_per_sec;
    t->exec_id = UINT64_MAX;
    for (unsigned i = 0; i < JFR_EV_MAX; i++)
        t->cls[i] = JFR_NONE;
    uint32_t ex = jfr_meta_class(m, jfr_ev_specs[0].name);
    if (ex != JFR_NONE)
        t->exec_id = m->classes[ex].id;
    for (unsigned i = 0; i < JFR_EV_NSPECS; i++) {
        const jfr_ev_spec *sp = &jfr_ev_specs[i];
        jfr_plan_init(&t->plans[i]);
        uint32_t cls = jfr_meta_class(m, sp->name);
        if (cls == JFR_NONE || !(c->kinds & sp->kinds))
            continue;
        /* Frees matter only for pairing. */
        if (sp->slot == JFR_SLOT_FREE && !c->leak)
            continue;
        row_plan(t, i, cls);
    }
}

void jfr_evtab_cleanup(jfr_evtab *t)
{
    for (unsigned i = 0; i < JFR_EV_NSPECS; i++)
        jfr_plan_cleanup(&t->plans[i]);
    free(t->lut);
    memset(t, 0, sizeof *t);
}

void jfr_evtab_dense(jfr_evtab *t, uint64_t base, size_t n)
{
    t->dense_base = base;
    t->dense_n = n;
}

static inline void fields_init(const jfr_evtab *t, const jfr_row *row, uint64_t *s)
{
    s[JFR_S_TIME] = (uint64_t)t->start_ticks;
    s[JFR_S_STACK] = s[JFR_S_THREAD] = s[JFR_S_STATE] = 0;
    s[JFR_S_VALUE] = row->value0;
}

bool jfr_evtab_fields(const jfr_evtab *t, unsigned i, const uint8_t *p, const uint8_t *end,
                      uint64_t *s)
{
    fields_init(t, &t->rows[i], s);
    s[JFR_S_ADDR] = 0;
    return jfr_plan_run(&t->plans[i], t->meta, p, end, s);
}

/* Slot i of s as one 8-byte load. The steps store the slots one by one; left
 * to itself the compiler reads two neighbours with one 16-byte load, which
 * cannot take its bytes from two stores still in flight and waits for them
 * to reach the cache (about 1.5 ns an event, perf annotate on alloc). */
static inline uint64_t slot_get(const uint64_t *s, int i)
{
    uint64_t v = s[i];
    __asm__("" : "+r"(v));
    return v;
}

/* The event of a row with fields s into acc. */
static inline __attribute__((always_inline)) void row_add(const jfr_evtab *t, jfr_acc *acc,
                                                          const jfr_row *row, const uint64_t *s)
{
    uint64_t value = slot_get(s, JFR_S_VALUE);
    if (JFR_UNLIKELY(row->add >= JFR_ADD_DURATION)) {
        if (row->add == JFR_ADD_LOST) {
            acc->lost += value;
            return;
        }
        int64_t ns = jfr_d2i((double)(int64_t)value * t->ns_per_tick);
        value = ns > 0 ? (uint64_t)ns : 0;
    }
    jfr_acc_add1(acc, row->slot, row->add == JFR_ADD_SAMPLES, slot_get(s, JFR_S_STACK),
                 slot_get(s, JFR_S_THREAD), slot_get(s, JFR_S_STATE), value);
}

void jfr_events_add(const jfr_evtab *t, jfr_acc *acc, unsigned i, const uint64_t *s)
{
    row_add(t, acc, &t->rows[i], s);
}

static unsigned far_index(const jfr_evtab *t, uint64_t type)
{
    for (int i = 0; i < t->nfar; i++)
        if (t->far_id[i] == type)
            return t->far_ev[i];
    return 0;
}

bool jfr_evtab_wanted(const jfr_evtab *t, uint64_t id)
{
    return id < t->lut_n ? t->lut[id] != 0 : far_index(t, id) != 0;
}

/* One event of a wanted, non-rare row. */
static inline __attribute__((always_inline)) jp_err hot_event(const jfr_evtab *t, jfr_acc *acc,
                                                              unsigned i, const uint8_t *ev,
                                                              const uint8_t *p, const uint8_t *next,
                                                              const jfr_run *r)
{
    const jfr_row *row = &t->rows[i];
    uint64_t s[JFR_PLAN_SLOTS];
    fields_init(t, row, s);
    bool ok = JFR_LIKELY(row->fast) ? jfr_steps_run(row->fop, row->nfop, p, next, r->lim, s)
                                    : jfr_plan_run(&t->plans[i], t->meta, p, next, s);
    if (JFR_UNLIKELY(!ok))
        return jfr_fail(r->w, JP_ERR_FORMAT, ev, "malformed %s event", jfr_ev_specs[i].name);
    if (t->c->filter) {
        int64_t ns = jfr_evtab_time(t, s[JFR_S_TIME]);
        if (ns < t->c->from_ns || ns >= t->c->to_ns) {
            acc->events_filtered++;
            return JP_OK;
        }
    }
    row_add(t, acc, row, s);
    return JP_OK;
}

/* ---- the lead type: one event type decoded without the row tables ----
 * A recording is mostly one event type: allocation events in an alloc read,
 * execution samples in a cpu read. When that type's row is the common shape
 * (a few integers, the stack, a few more, then its value or thread state;
 * no thread, no time filter), the loop decodes it with the row's numbers in
 * registers: no step table, no slot array, one bound check an event. Any
 * event it cannot take whole (a size or type of more than one byte, an
 * integer longer than the word it reads, too near the end of the run or of
 * the readable bytes, a field past the event) goes to the row's plan as
 * before, which decodes it or names the damage: same cells either way. */
typedef struct jfr_lead {
    bool on;           /* the run has a lead type */
    uint64_t type;     /* its type id */
    unsigned sk0, sk1; /* integers before the stack, and between it and the second one */
    bool state;        /* the second integer is a thread state (else the value) */
    uint32_t slot;
    uint64_t value0; /* the value of a state row */
} jfr_lead;

/* Bytes past an event its decoding may read: four word reads of eight
 * bytes, each starting at most eight bytes past the one before. */
#define JFR_LEAD_SLACK 40

/* The lead of row `best` (JFR_EV_NSPECS: no lead). */
static jfr_lead lead_of_row(const jfr_evtab *t, unsigned best)
{
    if (best >= JFR_EV_NSPECS)
        return (jfr_lead){.on = false, .type = UINT64_MAX}; /* no one-byte type */
    const jfr_row *row = &t->rows[best];
    return (jfr_lead){.on = true,
                      .type = t->meta->classes[t->cls[best]].id,
                      .sk0 = row->fop[0].skip,
                      .sk1 = row->fop[1].skip,
                      .state = row->fop[1].slot == JFR_S_STATE,
                      .slot = row->slot,
                      .value0 = row->value0};
}

/* The lead type of the events from p: of the rows that can be one (and
 * whose type id takes one byte, as the path reads it), the one with the
 * most events among the next 64 such (their heads only, and at most 1,024
 * heads: a few microseconds). */
static jfr_lead lead_pick(const jfr_evtab *t, const uint8_t *p, const uint8_t *end)
{
    unsigned hits[JFR_EV_NSPECS] = {0};
    for (int n = 0, seen = 0; n < 1024 && seen < 64 && p < end; n++) {
        const uint8_t *ev = p;
        uint64_t size, type;
        if (!jfr_varint(&p, end, &size) || size == 0 || size > (uint64_t)(end - ev) ||
            !jfr_varint(&p, ev + size, &type))
            break;
        p = ev + size;
        unsigned e = type < 0x80 && type < t->lut_n ? t->lut[type] : 0;
        if (e && !(e & JFR_EV_RARE) && e - 1 < JFR_EV_NSPECS && t->rows[e - 1].lead) {
            hits[e - 1]++;
            seen++;
        }
    }
    unsigned best = JFR_EV_NSPECS;
    for (unsigned i = 0; i < JFR_EV_NSPECS; i++)
        if (hits[i] && (best == JFR_EV_NSPECS || hits[i] > hits[best]))
            best = i;
    return lead_of_row(t, best);
}

/* The lead a run starts with: the one the walk's run before it ended with
 * (r->lead_type, when r->lead_known and that type can still lead), else one
 * picked from the events at p. Carried over, the pick is not made again at
 * every step of a file (1,024 event heads each in a cpu read of an
 * allocation recording: 2% of its time); should the commonest type change,
 * the loop picks again (JFR_LEAD_REPICK). */
static jfr_lead lead_first(const jfr_evtab *t, const jfr_run *r, const uint8_t *p)
{
    if (r->lead_known) {
        uint64_t type = r->lead_type;
        if (type == UINT64_MAX)
            return lead_of_row(t, JFR_EV_NSPECS);
        unsigned e = type < 0x80 && type < t->lut_n ? t->lut[type] : 0;
        if (e && !(e & JFR_EV_RARE) && e - 1 < JFR_EV_NSPECS && t->rows[e - 1].lead)
            return lead_of_row(t, e - 1);
    }
    return lead_pick(t, p, r->end);
}

/* Past k (at most 3) integers at p, found in one word. *bad is set when
 * they do not end within its eight bytes (the position returned is then
 * eight bytes on, so that the reads after it stay within the slack). */
static inline __attribute__((always_inline)) const uint8_t *lead_skip(const uint8_t *p, unsigned k,
                                                                      bool *bad)
{
    if (!k)
        return p;
    uint64_t m = ~jfr_le64(p) & 0x8080808080808080ULL;
    if (k >= 2)
        m &= m - 1;
    if (k >= 3)
        m &= m - 1;
    *bad |= !m;
    return p + ((unsigned)__builtin_ctzll(m | 1ULL << 63) >> 3) + 1;
}

/* Past one integer at p, its value in *v; *bad set when it is longer than
 * four bytes (the keys and sizes the path reads stay below 2^28; a longer
 * one goes to the plan). Four bytes on 32 bits: short constants. */
static inline __attribute__((always_inline)) const uint8_t *lead_int(const uint8_t *p, uint64_t *v,
                                                                     bool *bad)
{
    if (*p < 0x80) {
        *v = *p;
        return p + 1;
    }
    uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    uint32_t m = ~w & 0x80808080u;
    *bad |= !m;
    m |= 1u << 31;
    /* m ^ (m - 1): the bits up to the last byte's, so the integer's bytes */
    *v = jfr_varint_pack32(w & (m ^ (m - 1)));
    return p + ((unsigned)__builtin_ctz(m) >> 3) + 1;
}

/* Where a loop adds events of the lead type: the accumulator's range of
 * stack keys and the lanes of the lead's slot, copied out of acc so that
 * the compiler keeps them in registers (stores to a lane could alias acc). */
typedef struct jfr_lead_acc {
    jfr_acc *acc;
    uint64_t base;
    size_t n;
    jfr_dense **lanes;
} jfr_lead_acc;

/* An event of the lead type whose fields start at p and end at next
 * (with JFR_LEAD_SLACK readable bytes past it) into the accumulator; false
 * when the plan must take it. Positions only grow, so one check at the end
 * bounds every field by the event. */
static inline __attribute__((always_inline)) bool lead_event(const jfr_lead q, jfr_lead_acc a,
                                                             jfr_dense **lane0, const uint8_t *p,
                                                             const uint8_t *next)
{
    uint64_t stack, second;
    bool bad = false;
    p = lead_int(lead_skip(p, q.sk0, &bad), &stack, &bad);
    p = lead_int(lead_skip(p, q.sk1, &bad), &second, &bad);
    if (JFR_UNLIKELY(bad | (p > next)))
        return false;
    uint64_t state = q.state ? second : 0, value = q.state ? q.value0 : second;
    uint64_t key = stack - a.base;
    if (JFR_LIKELY(key < a.n && state < JFR_ACC_STATES)) {
        jfr_dense *d = q.state ? a.lanes[state] : *lane0;
        if (JFR_UNLIKELY(!d)) {
            d = jfr_acc_lane(a.acc, q.slot * JFR_ACC_STATES + (unsigned)state);
            if (!q.state)
                *lane0 = d;
        }
        d[key].events++;
        d[key].amount += value;
    } else {
        jfr_acc_add(a.acc, q.slot, stack, 0, state, 1, 1, value);
    }
    return true;
}

/* Where the lead path may go from p on without checking sizes: up to the
 * returned position, an event with a one-byte size (at most 127) ends within
 * the run and has the slack readable after it. The bound does not move with
 * p, so a loop works it out once. */
static inline const uint8_t *lead_stop(const uint8_t *p, const uint8_t *end, const uint8_t *lim)
{
    size_t run = (size_t)(end - p), readable = (size_t)(lim - p);
    size_t room = readable > JFR_LEAD_SLACK ? readable - JFR_LEAD_SLACK : 0;
    if (run < room)
        room = run;
    return room > 127 ? p + room - 127 : p;
}

/* One event at *pp by the lead path: an event of the lead type, or one
 * nobody wants. True when taken (*pp is then past it, and *n or *k counts
 * it); false when the event needs the general path. */
static inline __attribute__((always_inline)) bool lead_one(const jfr_lead q, const jfr_lead_acc qa,
                                                           const uint8_t *lut, size_t lut_n,
                                                           jfr_dense **lane0, const uint8_t **pp,
                                                           uint64_t *n, uint64_t *k)
{
    const uint8_t *p = *pp;
    uint64_t w = jfr_le64(p);
    unsigned size = (unsigned)w & 0xff, type = (unsigned)(w >> 8) & 0xff;
    if ((w & 0x8080) || size < 2)
        return false;
    if (type != q.type) {
        /* a one-byte type past the table is not wanted (jfr_evtab_want) */
        if (type <= 1 || (type < lut_n && lut[type]))
            return false;
        (*k)++;
    } else if (JFR_LIKELY(lead_event(q, qa, lane0, p + 2, p + size))) {
        (*n)++;
    } else {
        return false;
    }
    *pp = p + size;
    return true;
}

/* Where one walk through a run has got to, and what it counted since the
 * lead type was picked. */
typedef struct jfr_chain {
    jfr_run *r;
    const uint8_t *p;
    const uint8_t *stop; /* lead_stop of the run */
    uint64_t nread;      /* events counted, but the lead type's */
    uint64_t leads;      /* events of the lead type */
    uint64_t others;     /* events of another type that could lead */
} jfr_chain;

/* Events of another type that could lead, at least this many and more than
 * the lead's, since the last pick: time to pick again. */
#define JFR_LEAD_REPICK 256

/* What the general path says of a walk after an event. */
enum { JFR_CH_GO, JFR_CH_STOP, JFR_CH_REPICK };

/* The event at c->p that the lead path did not take, by the general path:
 * JFR_CH_GO with c->p past it; JFR_CH_STOP with c->p on it (at the run's
 * end, an event cut by it, or damage: *rc says which); JFR_CH_REPICK with
 * c->p past it when another type should lead. */
static inline __attribute__((always_inline)) int
slow_event(const jfr_evtab *t, jfr_acc *acc, const jfr_lead q, jfr_chain *c, jp_err *rc)
{
    jfr_run *r = c->r;
    const uint8_t *p = c->p, *end = r->end, *ev = p;
    if (p >= end)
        return JFR_CH_STOP;
    uint64_t size = 0, type;
    /* Most events: a size and a type of one byte each, read at once
     * (the second byte is readable: the run's end or its padding). */
    unsigned b0 = p[0], b1 = p + 1 < r->lim ? p[1] : 0x80;
    if (JFR_LIKELY(((b0 | b1) & 0x80) == 0 && b0 >= 2 && b0 <= (uint64_t)(end - ev))) {
        size = b0;
        type = b1;
        p += 2;
    } else {
        bool whole = jfr_varint(&p, end, &size);
        if (JFR_UNLIKELY(!whole || size == 0 || size > (uint64_t)(end - ev))) {
            /* cut by the end of the run: the caller goes on from here */
            if (!(r->tail_ok && (!whole || size != 0)))
                *rc = jfr_fail(r->w, JP_ERR_FORMAT, ev, "event size %" PRIu64 " is impossible here",
                               size);
            return JFR_CH_STOP;
        }
        if (JFR_UNLIKELY(!jfr_varint(&p, ev + size, &type))) {
            *rc = jfr_fail(r->w, JP_ERR_FORMAT, ev, "event type runs past the event");
            return JFR_CH_STOP;
        }
    }
    const uint8_t *next = ev + size;
    size_t lut_n = t->lut_n;
    unsigned e = type < lut_n ? t->lut[type] : (t->nfar ? far_index(t, type) : 0);
    if (e) {
        unsigned i = (e & ~(unsigned)JFR_EV_RARE) - 1;
        if (JFR_LIKELY(!(e & JFR_EV_RARE))) {
            *rc = hot_event(t, acc, i, ev, p, next, r);
            c->others += t->rows[i].lead && type != q.type;
        } else
            *rc = r->rare(r->rare_arg, i, ev, p, next);
        if (*rc)
            return JFR_CH_STOP;
        c->nread++;
    } else {
        c->nread += type > 1; /* metadata and checkpoints are not events */
    }
    c->p = next;
    if (JFR_UNLIKELY(c->others >= JFR_LEAD_REPICK) && c->others > c->leads)
        return JFR_CH_REPICK;
    return JFR_CH_GO;
}

static inline jfr_lead_acc lead_acc(jfr_acc *acc, const jfr_lead q)
{
    return (jfr_lead_acc){acc, acc->dense_base, acc->dense_n, &acc->lane[q.slot * JFR_ACC_STATES]};
}

/* The event loop over c's run, with q's numbers as constants where the
 * caller has them: the lead path as far as it goes, then one event by the
 * general path, and again. Stops at the run's end, at damage, or, with
 * *again set, where another type should lead; c->p is where it stopped.
 * Few values live here, so they stay in registers. */
static inline __attribute__((always_inline)) jp_err
events_loop(const jfr_evtab *t, jfr_acc *acc, const jfr_lead q, jfr_chain *c, bool *again)
{
    const uint8_t *lut = t->lut;
    size_t lut_n = t->lut_n;
    const jfr_lead_acc qa = lead_acc(acc, q);
    jp_err rc = JP_OK;
    for (;;) {
        const uint8_t *p = c->p, *stop = c->stop;
        uint64_t n = 0, k = 0;
        jfr_dense *lane0 = qa.lanes[0]; /* a value row's lane, kept at hand */
        while (p < stop && lead_one(q, qa, lut, lut_n, &lane0, &p, &n, &k))
            ;
        c->p = p;
        c->leads += n;
        c->nread += k;
        int st = slow_event(t, acc, q, c, &rc);
        if (st != JFR_CH_GO) {
            *again = st == JFR_CH_REPICK;
            return rc;
        }
    }
}

/* The same over two runs at once, a and b, an event of one then an event
 * of the other: the walk from one event to the next waits on the load of
 * its size, and two independent walks keep the core busy while each waits
 * (a cpu read that passes over allocations, bench/jfr/decode: 3.5 ns an
 * event on one walk, 2.8 on two). Returns when either stops as
 * events_loop does, *which telling which (0: a, 1: b); the other has moved
 * on to its c->p. */
static inline __attribute__((always_inline)) jp_err events_loop2(const jfr_evtab *t, jfr_acc *acc,
                                                                 const jfr_lead q, jfr_chain *a,
                                                                 jfr_chain *b, int *which,
                                                                 bool *again)
{
    const uint8_t *lut = t->lut;
    size_t lut_n = t->lut_n;
    const jfr_lead_acc qa = lead_acc(acc, q);
    jp_err rc = JP_OK;
    jfr_chain *ch[2] = {a, b};
    for (;;) {
        const uint8_t *pa = a->p, *pb = b->p, *sa = a->stop, *sb = b->stop;
        uint64_t na = 0, nb = 0, ka = 0, kb = 0;
        jfr_dense *lane0 = qa.lanes[0];
        while (pa < sa && pb < sb && lead_one(q, qa, lut, lut_n, &lane0, &pa, &na, &ka) &&
               lead_one(q, qa, lut, lut_n, &lane0, &pb, &nb, &kb))
            ;
        a->p = pa;
        b->p = pb;
        a->leads += na;
        b->leads += nb;
        a->nread += ka;
        b->nread += kb;
        /* Each walk one event further: the one that could not go on by the
         * lead path by the general one (the other takes a step either way). */
        for (int i = 0; i < 2; i++) {
            jfr_chain *c = ch[i];
            const uint8_t *p = c->p;
            uint64_t m = 0, k = 0;
            if (p < c->stop && lead_one(q, qa, lut, lut_n, &lane0, &p, &m, &k)) {
                c->p = p;
                c->leads += m;
                c->nread += k;
                continue;
            }
            int st = slow_event(t, acc, q, c, &rc);
            if (st != JFR_CH_GO) {
                *which = i;
                *again = st == JFR_CH_REPICK;
                return rc;
            }
        }
    }
}

/* The loops for the common shapes, with their numbers known to the
 * compiler (about 20 instructions fewer an event): async-profiler's
 * allocations in a new TLAB (2, 2), the JDK's allocation samples and
 * allocations outside a TLAB (2, 1), execution samples and their state
 * (2, 0). */
#define JFR_LEAD_LOOP(name, name2, k0, k1, st)                                                     \
    static __attribute__((noinline)) jp_err name(const jfr_evtab *t, jfr_acc *acc, jfr_lead q,     \
                                                 jfr_chain *c, bool *again)                        \
    {                                                                                              \
        q.sk0 = k0;                                                                                \
        q.sk1 = k1;                                                                                \
        q.state = st;                                                                              \
        return events_loop(t, acc, q, c, again);                                                   \
    }                                                                                              \
    static __attribute__((noinline)) jp_err name2(const jfr_evtab *t, jfr_acc *acc, jfr_lead q,    \
                                                  jfr_chain *a, jfr_chain *b, int *which,          \
                                                  bool *again)                                     \
    {                                                                                              \
        q.sk0 = k0;                                                                                \
        q.sk1 = k1;                                                                                \
        q.state = st;                                                                              \
        return events_loop2(t, acc, q, a, b, which, again);                                        \
    }
JFR_LEAD_LOOP(loop_alloc_tlab, loop2_alloc_tlab, 2, 2, false)
JFR_LEAD_LOOP(loop_alloc, loop2_alloc, 2, 1, false)
JFR_LEAD_LOOP(loop_exec, loop2_exec, 2, 0, true)
JFR_LEAD_LOOP(loop_any, loop2_any, q.sk0, q.sk1, q.state)

/* Which of the loops above takes q. */
enum { JFR_LOOP_ALLOC_TLAB, JFR_LOOP_ALLOC, JFR_LOOP_EXEC, JFR_LOOP_ANY };

static int loop_of(const jfr_lead q)
{
    if (q.on && q.sk0 == 2 && !q.state && q.sk1 == 2)
        return JFR_LOOP_ALLOC_TLAB;
    if (q.on && q.sk0 == 2 && !q.state && q.sk1 == 1)
        return JFR_LOOP_ALLOC;
    if (q.on && q.sk0 == 2 && q.state && q.sk1 == 0)
        return JFR_LOOP_EXEC;
    return JFR_LOOP_ANY;
}

static void run_start(const jfr_evtab *t, jfr_acc *acc, jfr_run *r, jfr_chain *c)
{
    if (acc->dense_n != t->dense_n || acc->dense_base != t->dense_base)
        jfr_acc_dense(acc, t->dense_base, t->dense_n);
    *c = (jfr_chain){.r = r, .p = r->p, .stop = lead_stop(r->p, r->end, r->lim)};
}

/* The loop of q's shape over chain a, or over a and b at once. */
static jp_err loop_for(const jfr_evtab *t, jfr_acc *acc, jfr_lead q, jfr_chain *a, jfr_chain *b,
                       int *which, bool *again)
{
    switch (loop_of(q)) {
    case JFR_LOOP_ALLOC_TLAB:
        return b ? loop2_alloc_tlab(t, acc, q, a, b, which, again)
                 : loop_alloc_tlab(t, acc, q, a, again);
    case JFR_LOOP_ALLOC:
        return b ? loop2_alloc(t, acc, q, a, b, which, again) : loop_alloc(t, acc, q, a, again);
    case JFR_LOOP_EXEC:
        return b ? loop2_exec(t, acc, q, a, b, which, again) : loop_exec(t, acc, q, a, again);
    default:
        return b ? loop2_any(t, acc, q, a, b, which, again) : loop_any(t, acc, q, a, again);
    }
}

/* Runs a, or a and b at once (b not NULL), until one stops (*which). One
 * lead for both: they are parts of one chunk. */
static jp_err events_drive(const jfr_evtab *t, jfr_acc *acc, jfr_run *a, jfr_run *b, int *which)
{
    jfr_chain ca, cb = {0};
    run_start(t, acc, a, &ca);
    if (b)
        run_start(t, acc, b, &cb);
    jp_err rc;
    bool again, first = true;
    jfr_lead q;
    *which = 0;
    do {
        q = first ? lead_first(t, a, ca.p) : lead_pick(t, ca.p, a->end);
        first = again = false;
        ca.leads = ca.others = cb.leads = cb.others = 0;
        rc = loop_for(t, acc, q, &ca, b ? &cb : NULL, which, &again);
        acc->events_read += ca.leads + cb.leads;
    } while (again && !rc);
    acc->events_read += ca.nread + cb.nread;
    a->stop = ca.p;
    a->lead_known = true;
    a->lead_type = q.type;
    if (b) {
        b->stop = cb.p;
        b->lead_known = true;
        b->lead_type = q.type;
    }
    return rc;
}

jp_err jfr_events_run(const jfr_evtab *t, jfr_acc *acc, jfr_run *r)
{
    int which;
    return events_drive(t, acc, r, NULL, &which);
}

jp_err jfr_events_run2(const jfr_evtab *t, jfr_acc *acc, jfr_run *a, jfr_run *b, int *which)
{
    return events_drive(t, acc, a, b, which);
}
