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
    t->rare[ev] = rare;
    if (id < JFR_LUT_MAX) {
        if (id >= t->lut_n) {
            t->lut = jp_xrealloc(t->lut, (size_t)id + 1);
            memset(t->lut + t->lut_n, 0, (size_t)id + 1 - t->lut_n);
            t->lut_n = (size_t)id + 1;
        }
        t->lut[id] = (uint8_t)(ev + 1);
    } else if (t->nfar < JFR_EV_MAX) {
        t->far_id[t->nfar] = id;
        t->far_ev[t->nfar++] = (uint8_t)(ev + 1);
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
    jfr_plan_compile(&t->plans[i], m, cls, caps, JFR_S__COUNT);
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

bool jfr_evtab_fields(const jfr_evtab *t, unsigned i, const uint8_t *p, const uint8_t *end,
                      uint64_t *s)
{
    const jfr_ev_spec *sp = &jfr_ev_specs[i];
    s[JFR_S_TIME] = (uint64_t)t->start_ticks;
    s[JFR_S_STACK] = s[JFR_S_THREAD] = s[JFR_S_STATE] = s[JFR_S_ADDR] = 0;
    s[JFR_S_VALUE] = sp->slot == JFR_SLOT_WALL;
    return jfr_plan_run(&t->plans[i], t->meta, p, end, s);
}

void jfr_events_add(const jfr_evtab *t, jfr_acc *acc, unsigned i, const uint64_t *s)
{
    const jfr_ev_spec *sp = &jfr_ev_specs[i];
    uint64_t samples = 1, value = s[JFR_S_VALUE];
    switch (sp->slot) {
    case JFR_SLOT_LOST:
        acc->lost += value;
        return;
    case JFR_SLOT_WALL:
        samples = value;
        value = 0;
        break;
    default:
        if (sp->duration) {
            int64_t ns = jfr_d2i((double)(int64_t)value * t->ns_per_tick);
            value = ns > 0 ? (uint64_t)ns : 0;
        }
        break;
    }
    jfr_acc_add(acc, sp->slot, s[JFR_S_STACK], s[JFR_S_THREAD], s[JFR_S_STATE], 1, samples, value);
}

static unsigned far_index(const jfr_evtab *t, uint64_t type)
{
    for (int i = 0; i < t->nfar; i++)
        if (t->far_id[i] == type)
            return t->far_ev[i];
    return 0;
}

/* One event of a wanted, non-rare row. */
static inline jp_err hot_event(const jfr_evtab *t, jfr_acc *acc, unsigned i, const uint8_t *ev,
                               const uint8_t *p, const uint8_t *next, const jfr_where *w)
{
    uint64_t s[JFR_PLAN_SLOTS];
    if (JFR_UNLIKELY(!jfr_evtab_fields(t, i, p, next, s)))
        return jfr_fail(w, JP_ERR_FORMAT, ev, "malformed %s event", jfr_ev_specs[i].name);
    if (t->c->filter) {
        int64_t ns = jfr_evtab_time(t, s[JFR_S_TIME]);
        if (ns < t->c->from_ns || ns >= t->c->to_ns) {
            acc->events_filtered++;
            return JP_OK;
        }
    }
    jfr_events_add(t, acc, i, s);
    return JP_OK;
}

jp_err jfr_events_run(const jfr_evtab *t, jfr_acc *acc, jfr_run *r)
{
    const uint8_t *p = r->p, *end = r->end;
    const uint8_t *lut = t->lut;
    size_t lut_n = t->lut_n;
    uint64_t nread = 0;
    jp_err rc = JP_OK;
    while (p < end) {
        const uint8_t *ev = p;
        uint64_t size = 0, type;
        bool whole = jfr_varint(&p, end, &size);
        if (JFR_UNLIKELY(!whole || size == 0 || size > (uint64_t)(end - ev))) {
            p = ev;
            if (r->tail_ok && (!whole || size != 0)) {
                /* cut by the end of the run: the caller goes on from here */
                r->need = whole ? ev + size : ev + 10;
                break;
            }
            rc = jfr_fail(r->w, JP_ERR_FORMAT, ev, "event size %" PRIu64 " is impossible here",
                          size);
            break;
        }
        const uint8_t *next = ev + size;
        if (JFR_UNLIKELY(!jfr_varint(&p, next, &type))) {
            p = ev;
            rc = jfr_fail(r->w, JP_ERR_FORMAT, ev, "event type runs past the event");
            break;
        }
        unsigned idx = type < lut_n ? lut[type] : (t->nfar ? far_index(t, type) : 0);
        if (idx) {
            if (JFR_UNLIKELY(t->rare[idx - 1]))
                rc = r->rare(r->rare_arg, idx - 1, ev, p, next);
            else
                rc = hot_event(t, acc, idx - 1, ev, p, next, r->w);
            if (rc) {
                p = ev;
                break;
            }
        }
        nread += type > 1; /* metadata and checkpoints are not events */
        p = next;
    }
    acc->events_read += nread;
    r->stop = p;
    return rc;
}
