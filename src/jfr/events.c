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

jp_err jfr_events_run(const jfr_evtab *t, jfr_acc *acc, jfr_run *r)
{
    const uint8_t *p = r->p, *end = r->end;
    const uint8_t *lut = t->lut;
    size_t lut_n = t->lut_n;
    uint64_t nread = 0;
    jp_err rc = JP_OK;
    if (acc->dense_n != t->dense_n || acc->dense_base != t->dense_base)
        jfr_acc_dense(acc, t->dense_base, t->dense_n);
    while (p < end) {
        const uint8_t *ev = p;
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
                p = ev;
                if (r->tail_ok && (!whole || size != 0)) {
                    /* cut by the end of the run: the caller goes on from here */
                    break;
                }
                rc = jfr_fail(r->w, JP_ERR_FORMAT, ev, "event size %" PRIu64 " is impossible here",
                              size);
                break;
            }
            if (JFR_UNLIKELY(!jfr_varint(&p, ev + size, &type))) {
                p = ev;
                rc = jfr_fail(r->w, JP_ERR_FORMAT, ev, "event type runs past the event");
                break;
            }
        }
        const uint8_t *next = ev + size;
        unsigned e = type < lut_n ? lut[type] : (t->nfar ? far_index(t, type) : 0);
        if (e) {
            unsigned i = (e & ~(unsigned)JFR_EV_RARE) - 1;
            if (JFR_LIKELY(!(e & JFR_EV_RARE)))
                rc = hot_event(t, acc, i, ev, p, next, r);
            else
                rc = r->rare(r->rare_arg, i, ev, p, next);
            if (rc) {
                p = ev;
                break;
            }
            nread++;
        } else {
            nread += type > 1; /* metadata and checkpoints are not events */
        }
        p = next;
    }
    acc->events_read += nread;
    r->stop = p;
    return rc;
}
