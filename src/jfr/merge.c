/* merge.c - chunk results into the output profile (see merge.h). */
#include "jfr/merge.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jfr_merger_init(jfr_merger *m, const jfr_ctx *c, jp_profile *out, jfr_report *rep)
{
    memset(m, 0, sizeof *m);
    m->c = c;
    m->out = out;
    m->rep = rep;
    m->warn = (jfr_warner){.rep = rep, .name = c->name};
    jfr_leak_init(&m->leak);
}

void jfr_merger_cleanup(jfr_merger *m)
{
    jfr_leak_cleanup(&m->leak);
}

typedef struct periods {
    bool ap_wall; /* async-profiler "event=wall": ExecutionSample is wall */
    int64_t ns[JP_KIND_COUNT];
    bool assumed[JP_KIND_COUNT];
} periods;

/* The cpu and wall sampling periods, from this chunk's settings or, when it
 * has none, from the chunks before it. */
static void merge_periods(jfr_merger *m, const jfr_chunk_out *o, periods *pr)
{
    if (o->set.any)
        m->carried = o->set;
    const jfr_settings *s = &m->carried;
    bool ap_wall = s->has_event && !strcmp(s->event, "wall");
    bool ap_time = !s->has_event || !strcmp(s->event, "cpu") || !strcmp(s->event, "itimer") ||
                   !strcmp(s->event, "ctimer") || ap_wall;
    memset(pr, 0, sizeof *pr);
    pr->ap_wall = ap_wall;
    /* async-profiler records interval 0 for "its default". */
    int64_t cpu = 0, wall = 0;
    if (s->jdk_period > 0)
        cpu = s->jdk_period;
    else if (s->has_interval && !ap_wall && ap_time)
        cpu = s->interval;
    if (ap_wall && s->has_interval)
        wall = s->interval;
    else if (s->has_wall)
        wall = s->wall;
    pr->assumed[JP_KIND_CPU] = cpu <= 0;
    pr->assumed[JP_KIND_WALL] = wall <= 0;
    pr->ns[JP_KIND_CPU] = cpu > 0 ? cpu : 10000000;
    pr->ns[JP_KIND_WALL] = wall > 0 ? wall : 50000000;
}

static void merge_note_period(jfr_merger *m, jfr_warner *wn, const periods *pr, jp_kind kind)
{
    jp_kind_table *t = &m->out->kinds[kind];
    if (pr->assumed[kind])
        jfr_warn(wn, JFR_WARN_PERIOD_ASSUMED,
                 "%s period unknown (not recorded, or 0); period assumed %" PRId64 " ms",
                 jp_kind_name(kind), pr->ns[kind] / 1000000);
    if (!t->period_ns)
        t->period_ns = pr->ns[kind];
    else if (t->period_ns != pr->ns[kind])
        jfr_warn(wn, JFR_WARN_PERIOD_CHANGED,
                 "%s sampling period changes between chunks (%" PRId64 " -> %" PRId64 " ns)",
                 jp_kind_name(kind), t->period_ns, pr->ns[kind]);
}

/* The kind of a cell. jdk.ExecutionSample: async-profiler 2.x writes cpu
 * (STATE_DEFAULT) and wall (every other state) samples into it, as its own
 * converter splits them; without STATE_DEFAULT in the pool (the JDK) it is
 * cpu, or wall in an async-profiler "event=wall" recording. */
static jp_kind cell_kind(const jfr_cell *cell, bool ap_states, const periods *pr)
{
    static const jp_kind kinds[] = {
        [JFR_SLOT_EXEC] = JP_KIND_CPU,        [JFR_SLOT_WALL] = JP_KIND_WALL,
        [JFR_SLOT_ALLOC] = JP_KIND_ALLOC,     [JFR_SLOT_LOCK] = JP_KIND_LOCK,
        [JFR_SLOT_PARK] = JP_KIND_PARK,       [JFR_SLOT_NMEM] = JP_KIND_NATIVEMEM,
        [JFR_SLOT_LIVE] = JP_KIND_LIVE,       [JFR_SLOT_NLOCK] = JP_KIND_NATIVELOCK,
        [JFR_SLOT_CPUTIME] = JP_KIND_CPUTIME, [JFR_SLOT_FREE] = JP_KIND_NATIVEMEM,
        [JFR_SLOT_LOST] = JP_KIND_CPUTIME,    [JFR_SLOT_IO] = JP_KIND_IO,
        [JFR_SLOT_OLD] = JP_KIND_OLD,
    };
    if (cell->slot != JFR_SLOT_EXEC)
        return kinds[cell->slot];
    if (ap_states)
        return cell->state == JFR_STATE_DEFAULT ? JP_KIND_CPU : JP_KIND_WALL;
    return pr->ap_wall ? JP_KIND_WALL : JP_KIND_CPU;
}

static void merge_report(jfr_merger *m, const jfr_chunk_out *o)
{
    jfr_report *r = m->rep;
    const jfr_report *cr = &o->rep;
    if (o->no == 1) {
        r->major = o->h.major;
        r->minor = o->h.minor;
    }
    r->events_read += cr->events_read;
    r->events_filtered += cr->events_filtered;
    if (cr->start_ns || cr->end_ns) {
        if (!r->start_ns || cr->start_ns < r->start_ns)
            r->start_ns = cr->start_ns;
        if (cr->end_ns > r->end_ns)
            r->end_ns = cr->end_ns;
        jp_profile *p = m->out;
        if (!p->start_ns || cr->start_ns < p->start_ns)
            p->start_ns = cr->start_ns;
        if (cr->end_ns > p->end_ns)
            p->end_ns = cr->end_ns;
    }
}

jp_err jfr_merger_add(jfr_merger *m, const jfr_chunk_out *o)
{
    const jfr_ctx *c = m->c;
    jp_profile *out = m->out;
    /* Warnings of the merge itself (periods) belong to this chunk. */
    jfr_warner wn = o->warn;
    jfr_report wrep = o->rep;
    wn.rep = &wrep;
    periods pr;
    merge_periods(m, o, &pr);
    uint32_t *fmap = NULL, *smap = NULL;
    if (!o->direct) {
        jp_profile_merge_maps(out, o->prof, &fmap, &smap);
        jp_gc_log_append(&out->gc, &o->prof->gc);
        jp_old_log_append(&out->old, &o->prof->old);
    }
    bool sampled[JP_KIND_COUNT] = {false};
    for (size_t i = 0; i < o->ncells; i++) {
        const jfr_cell *cell = &o->cells[i];
        jp_kind kind = cell_kind(cell, o->ap_states, &pr);
        if (!(c->kinds & (1u << kind)))
            continue;
        uint64_t value = cell->value;
        if (cell->slot == JFR_SLOT_EXEC || cell->slot == JFR_SLOT_WALL) {
            value = cell->samples * (uint64_t)pr.ns[kind];
            sampled[kind] = true;
        }
        uint32_t stack = smap ? smap[cell->stack] : cell->stack;
        uint32_t thread = cell->thread == JP_NO_THREAD || !fmap ? cell->thread : fmap[cell->thread];
        jp_profile_add(out, kind, stack, thread, cell->events, cell->samples, value);
        m->rep->events_used += cell->events;
    }
    for (int kind = 0; kind < JP_KIND_COUNT; kind++)
        if (sampled[kind])
            merge_note_period(m, &wn, &pr, (jp_kind)kind);
    if (c->kinds & (1u << JP_KIND_CPUTIME))
        out->kinds[JP_KIND_CPUTIME].lost += o->lost;
    if (c->leak)
        jfr_leak_apply(&m->leak, &o->leak, smap, fmap);
    if (c->io_out)
        jp_io_detail_merge(c->io_out, &o->io);
    free(fmap);
    free(smap);
    jfr_warner_merge(&m->warn, &wn);
    merge_report(m, o);
    if (o->rc) {
        m->rep->partial = true;
        m->rep->error = o->rep.error;
        return o->rc;
    }
    m->rep->chunks_read++;
    return JP_OK;
}

void jfr_merger_finish(jfr_merger *m, double tail)
{
    if (m->c->leak && (m->c->kinds & (1u << JP_KIND_NATIVEMEM)))
        m->rep->events_used += jfr_leak_finish(&m->leak, m->out, tail);
}
