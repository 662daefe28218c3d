/* chunk.c - one chunk: header, metadata, pools, event loop, aggregation. */
#include "jfr/chunk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/xalloc.h"
#include "jfr/meta.h"
#include "jfr/plan.h"
#include "jfr/pool.h"
#include "jfr/resolve.h"

/* Pages already parsed are given back every this many bytes. */
#define JFR_RELEASE_STEP (8u << 20)
/* Largest event type id looked up by table; larger ones by a short list. */
#define JFR_LUT_MAX 65536

/* ---- header ---- */

jp_err jfr_header_parse(const jfr_ctx *c, size_t off, uint32_t no, jfr_header *h, jp_error *err)
{
    jfr_where w = {.base = c->base, .name = c->name, .chunk = no, .err = err};
    const uint8_t *p = c->base + off;
    size_t avail = c->len - off;
    if (avail < JFR_HEADER_SIZE)
        return jfr_fail(&w, JP_ERR_TRUNCATED, p, "chunk header cut off (%zu of %d bytes)", avail,
                        JFR_HEADER_SIZE);
    if (memcmp(p, "FLR", 4) != 0)
        return jfr_fail(&w, JP_ERR_FORMAT, p, "not a JFR chunk (bad magic %02x %02x %02x %02x)",
                        p[0], p[1], p[2], p[3]);
    h->major = jfr_be16(p + 4);
    h->minor = jfr_be16(p + 6);
    if (h->major != 2)
        return jfr_fail(&w, JP_ERR_UNSUPPORTED, p + 4, "format version %d.%d is not supported",
                        h->major, h->minor);
    h->size = jfr_be64(p + 8);
    h->cp = jfr_be64(p + 16);
    h->meta = jfr_be64(p + 24);
    h->start_ns = (int64_t)jfr_be64(p + 32);
    h->duration_ns = (int64_t)jfr_be64(p + 40);
    h->start_ticks = (int64_t)jfr_be64(p + 48);
    h->ticks_per_sec = (int64_t)jfr_be64(p + 56);
    h->flags = p[67];
    if (h->size < JFR_HEADER_SIZE)
        return jfr_fail(&w, JP_ERR_FORMAT, p + 8, "impossible chunk size %" PRIu64, h->size);
    if (h->size > avail)
        return jfr_fail(&w, JP_ERR_TRUNCATED, p + 8,
                        "chunk size %" PRIu64 " runs past the end of the input (%zu bytes left)",
                        h->size, avail);
    if (h->cp == 0 || h->meta == 0)
        return jfr_fail(&w, JP_ERR_TRUNCATED, p + 16,
                        "chunk was never finished (checkpoint offset %" PRIu64
                        ", metadata offset %" PRIu64 ")",
                        h->cp, h->meta);
    if (h->cp < JFR_HEADER_SIZE || h->cp >= h->size)
        return jfr_fail(&w, JP_ERR_FORMAT, p + 16,
                        "checkpoint offset %" PRIu64 " outside the chunk", h->cp);
    if (h->meta < JFR_HEADER_SIZE || h->meta >= h->size)
        return jfr_fail(&w, JP_ERR_FORMAT, p + 24, "metadata offset %" PRIu64 " outside the chunk",
                        h->meta);
    if (h->ticks_per_sec <= 0)
        return jfr_fail(&w, JP_ERR_FORMAT, p + 56, "impossible ticks per second %" PRId64,
                        h->ticks_per_sec);
    return JP_OK;
}

void jfr_release(jfr_ctx *c, size_t from, size_t to)
{
    if (!c->release || !c->page)
        return;
    size_t a = from & ~(c->page - 1), b = to & ~(c->page - 1);
    /* The mapping is private and read-only: dropped pages re-fault from the
     * file if a lazy pool lookup needs them again. */
    if (b > a)
        madvise((void *)(c->base + a), b - a, MADV_DONTNEED);
}

bool jfr_timespan_parse(const char *s, int64_t *ns)
{
    while (*s == ' ')
        s++;
    if (*s < '0' || *s > '9')
        return false;
    double v = 0;
    for (; *s >= '0' && *s <= '9'; s++)
        v = v * 10 + (*s - '0');
    if (*s == '.') {
        double scale = 0.1;
        for (s++; *s >= '0' && *s <= '9'; s++, scale /= 10)
            v += (*s - '0') * scale;
    }
    while (*s == ' ')
        s++;
    static const struct {
        const char *unit;
        double ns;
    } units[] = {{"ns", 1},   {"us", 1e3},   {"ms", 1e6},   {"s", 1e9},
                 {"m", 60e9}, {"min", 60e9}, {"h", 3600e9}, {"d", 86400e9}};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcmp(s, units[i].unit)) {
            double r = v * units[i].ns;
            if (r > 9.2e18)
                return false;
            *ns = (int64_t)r;
            return true;
        }
    }
    return false;
}

/* ---- per-chunk aggregation of raw (slot, stack key, thread key) ---- */

enum { AGG_EXEC, AGG_WALL, AGG_ALLOC, AGG_LOCK, AGG_PARK };

typedef struct agg_cell {
    uint64_t stack, thread; /* pool keys, resolved when the chunk ends */
    uint64_t events, samples, value;
    uint32_t slot, used;
} agg_cell;

typedef struct agg {
    agg_cell *cells;
    size_t cap, count;
} agg;

static inline size_t agg_hash(uint32_t slot, uint64_t stack, uint64_t thread)
{
    return (size_t)jp_hash_u64(stack ^ (thread * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)slot << 59));
}

static void agg_grow(agg *a)
{
    size_t ncap = a->cap ? a->cap * 2 : 1024;
    agg_cell *n = jp_xcalloc(ncap, sizeof *n);
    for (size_t i = 0; i < a->cap; i++) {
        if (!a->cells[i].used)
            continue;
        const agg_cell *c = &a->cells[i];
        size_t j = agg_hash(c->slot, c->stack, c->thread) & (ncap - 1);
        while (n[j].used)
            j = (j + 1) & (ncap - 1);
        n[j] = *c;
    }
    free(a->cells);
    a->cells = n;
    a->cap = ncap;
}

static inline void agg_add(agg *a, uint32_t slot, uint64_t stack, uint64_t thread, uint64_t samples,
                           uint64_t value)
{
    if ((a->count + 1) * 2 > a->cap)
        agg_grow(a);
    size_t mask = a->cap - 1;
    for (size_t i = agg_hash(slot, stack, thread) & mask;; i = (i + 1) & mask) {
        agg_cell *c = &a->cells[i];
        if (!c->used) {
            *c = (agg_cell){.stack = stack,
                            .thread = thread,
                            .events = 1,
                            .samples = samples,
                            .value = value,
                            .slot = slot,
                            .used = 1};
            a->count++;
            return;
        }
        if (c->stack == stack && c->thread == thread && c->slot == slot) {
            c->events++;
            c->samples += samples;
            c->value += value;
            return;
        }
    }
}

/* ---- the events a profile is made of (ARCHITECTURE.md, "Profile kind") ---- */

typedef struct ev_spec {
    const char *name;
    const char *thread, *thread_alt; /* field naming the thread */
    const char *value;               /* field holding the value (samples for wall) */
    uint8_t agg;
    uint32_t kinds; /* kinds this event can feed */
    bool duration;  /* value is a tick count to convert to ns */
} ev_spec;

#define KB(k) (1u << (k))
static const ev_spec specs[] = {
    {"jdk.ExecutionSample", "sampledThread", "eventThread", NULL, AGG_EXEC,
     KB(JP_KIND_CPU) | KB(JP_KIND_WALL), false},
    {"profiler.WallClockSample", "sampledThread", "eventThread", "samples", AGG_WALL,
     KB(JP_KIND_WALL), false},
    {"jdk.ObjectAllocationSample", "eventThread", NULL, "weight", AGG_ALLOC, KB(JP_KIND_ALLOC),
     false},
    {"jdk.ObjectAllocationInNewTLAB", "eventThread", NULL, "tlabSize", AGG_ALLOC, KB(JP_KIND_ALLOC),
     false},
    {"jdk.ObjectAllocationOutsideTLAB", "eventThread", NULL, "allocationSize", AGG_ALLOC,
     KB(JP_KIND_ALLOC), false},
    {"jdk.JavaMonitorEnter", "eventThread", NULL, "duration", AGG_LOCK, KB(JP_KIND_LOCK), true},
    {"jdk.ThreadPark", "eventThread", NULL, "duration", AGG_PARK, KB(JP_KIND_PARK), true},
};
#define NSPECS (sizeof specs / sizeof specs[0])
#define EV_SETTING NSPECS /* jdk.ActiveSetting */

enum { S_TIME, S_STACK, S_THREAD, S_VALUE };

struct chunk {
    jfr_ctx *c;
    jfr_where w;
    const jfr_header *h;
    const uint8_t *start, *end;
    jfr_meta *meta; /* shared with the chunk before when identical */
    jfr_pools pools;
    jfr_resolver res;
    jfr_plan plans[NSPECS];
    uint8_t *lut; /* type id -> event index + 1, 0 = not wanted */
    size_t lut_n;
    uint64_t far_id[NSPECS + 1];
    uint8_t far_ev[NSPECS + 1];
    int nfar;
    uint64_t exec_id; /* type id of jdk.ExecutionSample, UINT64_MAX if none */
    uint32_t set_cls;
    uint32_t set_fields[3]; /* id, name, value */
    jfr_settings set;
    agg agg;
    double ns_per_tick;
    jp_strbuf t_name, t_value;
};

static void chunk_want(chunk *k, uint64_t id, unsigned ev)
{
    if (id < JFR_LUT_MAX) {
        if (id >= k->lut_n) {
            k->lut = jp_xrealloc(k->lut, (size_t)id + 1);
            memset(k->lut + k->lut_n, 0, (size_t)id + 1 - k->lut_n);
            k->lut_n = (size_t)id + 1;
        }
        k->lut[id] = (uint8_t)(ev + 1);
    } else if (k->nfar < (int)NSPECS + 1) {
        k->far_id[k->nfar] = id;
        k->far_ev[k->nfar++] = (uint8_t)(ev + 1);
    }
}

static void chunk_plans(chunk *k)
{
    const jfr_meta *m = k->meta;
    for (unsigned i = 0; i < NSPECS; i++) {
        const ev_spec *sp = &specs[i];
        uint32_t cls = jfr_meta_class(m, sp->name);
        if (cls == JFR_NONE || !(k->c->kinds & sp->kinds))
            continue;
        if (i == 0)
            k->exec_id = m->classes[cls].id;
        uint32_t caps[4];
        caps[S_TIME] = k->c->filter ? jfr_meta_field(m, cls, "startTime") : JFR_NONE;
        caps[S_STACK] = jfr_meta_field(m, cls, "stackTrace");
        caps[S_THREAD] = JFR_NONE;
        if (k->c->threads) {
            caps[S_THREAD] = jfr_meta_field(m, cls, sp->thread);
            if (caps[S_THREAD] == JFR_NONE && sp->thread_alt)
                caps[S_THREAD] = jfr_meta_field(m, cls, sp->thread_alt);
        }
        caps[S_VALUE] = sp->value ? jfr_meta_field(m, cls, sp->value) : JFR_NONE;
        jfr_plan_compile(&k->plans[i], m, cls, caps, 4);
        chunk_want(k, m->classes[cls].id, i);
    }
    /* Settings are read whatever kinds are wanted: they are few, and what
     * they say carries over to later chunks. */
    k->set_cls = jfr_meta_class(m, "jdk.ActiveSetting");
    if (k->set_cls != JFR_NONE) {
        k->set_fields[0] = jfr_meta_field(m, k->set_cls, "id");
        k->set_fields[1] = jfr_meta_field(m, k->set_cls, "name");
        k->set_fields[2] = jfr_meta_field(m, k->set_cls, "value");
        if (k->exec_id == UINT64_MAX) {
            uint32_t ex = jfr_meta_class(m, specs[0].name);
            if (ex != JFR_NONE)
                k->exec_id = m->classes[ex].id;
        }
        chunk_want(k, m->classes[k->set_cls].id, EV_SETTING);
    }
}

static bool parse_ns_int(const char *s, int64_t *out)
{
    char *e;
    long long v = strtoll(s, &e, 10);
    if (e == s || *e || v < 0)
        return false;
    *out = v;
    return true;
}

/* One jdk.ActiveSetting: remembers what sets the cpu and wall periods. */
static void chunk_setting(chunk *k, const uint8_t *p, const uint8_t *end)
{
    uint64_t nums[3] = {0, 0, 0};
    jp_strbuf *texts[3] = {NULL, &k->t_name, &k->t_value};
    bool found[3];
    if (!jfr_resolve_fields(&k->res, k->set_cls, p, end, k->set_fields, 3, nums, texts, found) ||
        !found[1] || !found[2])
        return;
    const char *name = jp_strbuf_str(&k->t_name), *val = jp_strbuf_str(&k->t_value);
    jfr_settings *s = &k->set;
    bool exec = found[0] && nums[0] == k->exec_id;
    int64_t v;
    if (exec && !strcmp(name, "period") && jfr_timespan_parse(val, &v) && v > 0) {
        if (!s->jdk_period || v < s->jdk_period)
            s->jdk_period = v; /* concurrent recordings: the fastest one wins */
        s->any = true;
    } else if (exec && !strcmp(name, "interval") && parse_ns_int(val, &v)) {
        s->has_interval = s->any = true;
        s->interval = v;
    } else if (exec && !strcmp(name, "wall") && parse_ns_int(val, &v)) {
        s->has_wall = s->any = true;
        s->wall = v;
    } else if (!strcmp(name, "event")) {
        s->has_event = s->any = true;
        snprintf(s->event, sizeof s->event, "%s", val);
    }
}

/* Ticks to ns since the epoch the way the JDK converts them:
 * start_ns + (ticks - start_ticks) * (1e9 / ticks_per_second). */
static inline int64_t chunk_time(const chunk *k, uint64_t ticks)
{
    int64_t d;
    double dd;
    if (__builtin_sub_overflow((int64_t)ticks, k->h->start_ticks, &d))
        dd = (double)(int64_t)ticks - (double)k->h->start_ticks;
    else
        dd = (double)d;
    return jfr_sat_add(k->h->start_ns, jfr_d2i(dd * k->ns_per_tick));
}

static jp_err chunk_event(chunk *k, unsigned i, const uint8_t *ev, const uint8_t *p,
                          const uint8_t *end)
{
    if (i == EV_SETTING) {
        chunk_setting(k, p, end);
        return JP_OK;
    }
    const ev_spec *sp = &specs[i];
    uint64_t s[JFR_PLAN_SLOTS] = {(uint64_t)k->h->start_ticks, 0, 0, sp->agg == AGG_WALL};
    if (JFR_UNLIKELY(!jfr_plan_run(&k->plans[i], k->meta, p, end, s)))
        return jfr_fail(&k->w, JP_ERR_FORMAT, ev, "malformed %s event", sp->name);
    if (k->c->filter) {
        int64_t t = chunk_time(k, s[S_TIME]);
        if (t < k->c->from_ns || t >= k->c->to_ns) {
            k->c->rep->events_filtered++;
            return JP_OK;
        }
    }
    uint64_t samples = 1, value = s[S_VALUE];
    if (sp->agg == AGG_WALL) {
        samples = s[S_VALUE];
        value = 0;
    } else if (sp->duration) {
        int64_t ns = jfr_d2i((double)(int64_t)value * k->ns_per_tick);
        value = ns > 0 ? (uint64_t)ns : 0;
    }
    agg_add(&k->agg, sp->agg, s[S_STACK], s[S_THREAD], samples, value);
    return JP_OK;
}

static unsigned chunk_far(const chunk *k, uint64_t type)
{
    for (int i = 0; i < k->nfar; i++)
        if (k->far_id[i] == type)
            return k->far_ev[i];
    return 0;
}

static jp_err chunk_events(chunk *k)
{
    jfr_ctx *c = k->c;
    const uint8_t *p = k->start + JFR_HEADER_SIZE, *end = k->end;
    const uint8_t *lut = k->lut;
    size_t lut_n = k->lut_n;
    uint64_t nread = 0;
    size_t released = (size_t)(p - c->base);
    jp_err rc = JP_OK;
    while (p < end) {
        const uint8_t *ev = p;
        uint64_t size = 0, type;
        if (JFR_UNLIKELY(!jfr_varint(&p, end, &size) || size == 0 || size > (uint64_t)(end - ev))) {
            rc = jfr_fail(&k->w, JP_ERR_FORMAT, ev, "event size %" PRIu64 " is impossible here",
                          size);
            break;
        }
        const uint8_t *next = ev + size;
        if (JFR_UNLIKELY(!jfr_varint(&p, next, &type))) {
            rc = jfr_fail(&k->w, JP_ERR_FORMAT, ev, "event type runs past the event");
            break;
        }
        unsigned idx = type < lut_n ? lut[type] : (k->nfar ? chunk_far(k, type) : 0);
        if (idx && (rc = chunk_event(k, idx - 1, ev, p, next)))
            break;
        nread += type > 1; /* metadata and checkpoints are not events */
        p = next;
        if (JFR_UNLIKELY((size_t)(p - c->base) - released >= JFR_RELEASE_STEP)) {
            jfr_release(c, released, (size_t)(p - c->base));
            released = (size_t)(p - c->base);
        }
    }
    c->rep->events_read += nread;
    return rc;
}

/* ---- end of chunk: periods, resolution, hand-over to the profile ---- */

typedef struct periods {
    jp_kind exec_kind; /* what jdk.ExecutionSample means in this chunk */
    int64_t ns[JP_KIND_COUNT];
    bool assumed[JP_KIND_COUNT];
} periods;

/* The cpu and wall sampling periods, from this chunk's settings or, when it
 * has none (async-profiler writes them in the first chunk only), from the
 * chunks before it. */
static void chunk_periods(chunk *k, periods *pr)
{
    jfr_ctx *c = k->c;
    if (k->set.any)
        c->carried = k->set;
    const jfr_settings *s = &c->carried;
    bool ap_wall = s->has_event && !strcmp(s->event, "wall");
    bool ap_time = !s->has_event || !strcmp(s->event, "cpu") || !strcmp(s->event, "itimer") ||
                   !strcmp(s->event, "ctimer") || ap_wall;
    memset(pr, 0, sizeof *pr);
    pr->exec_kind = ap_wall ? JP_KIND_WALL : JP_KIND_CPU;
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

static void chunk_note_period(chunk *k, const periods *pr, jp_kind kind)
{
    jp_kind_table *t = &k->c->prof->kinds[kind];
    if (pr->assumed[kind])
        jfr_warn(&k->c->warn, JFR_WARN_PERIOD_ASSUMED,
                 "%s period unknown (not recorded, or 0); period assumed %" PRId64 " ms",
                 jp_kind_name(kind), pr->ns[kind] / 1000000);
    if (!t->period_ns)
        t->period_ns = pr->ns[kind];
    else if (t->period_ns != pr->ns[kind])
        jfr_warn(&k->c->warn, JFR_WARN_PERIOD_CHANGED,
                 "%s sampling period changes between chunks (%" PRId64 " -> %" PRId64 " ns)",
                 jp_kind_name(kind), t->period_ns, pr->ns[kind]);
}

static jp_kind slot_kind(uint32_t slot, const periods *pr)
{
    static const jp_kind kinds[] = {[AGG_EXEC] = JP_KIND_CPU,
                                    [AGG_WALL] = JP_KIND_WALL,
                                    [AGG_ALLOC] = JP_KIND_ALLOC,
                                    [AGG_LOCK] = JP_KIND_LOCK,
                                    [AGG_PARK] = JP_KIND_PARK};
    return slot == AGG_EXEC ? pr->exec_kind : kinds[slot];
}

static void chunk_flush(chunk *k)
{
    jfr_ctx *c = k->c;
    periods pr;
    chunk_periods(k, &pr);
    bool sampled[JP_KIND_COUNT] = {false};
    for (size_t i = 0; i < k->agg.cap; i++) {
        const agg_cell *cell = &k->agg.cells[i];
        if (!cell->used)
            continue;
        jp_kind kind = slot_kind(cell->slot, &pr);
        if (!(c->kinds & KB(kind)))
            continue;
        uint32_t stack = jfr_resolve_stack(&k->res, cell->stack);
        uint32_t thread = c->threads ? jfr_resolve_thread(&k->res, cell->thread) : JP_NO_THREAD;
        uint64_t value = cell->value;
        if (cell->slot == AGG_EXEC || cell->slot == AGG_WALL) {
            value = cell->samples * (uint64_t)pr.ns[kind];
            sampled[kind] = true;
        }
        jp_profile_add(c->prof, kind, stack, thread, cell->events, cell->samples, value);
        c->rep->events_used += cell->events;
    }
    for (int kind = 0; kind < JP_KIND_COUNT; kind++)
        if (sampled[kind])
            chunk_note_period(k, &pr, (jp_kind)kind);
}

static void chunk_range(chunk *k)
{
    jfr_ctx *c = k->c;
    int64_t s = k->h->start_ns, e = jfr_sat_add(k->h->start_ns, k->h->duration_ns);
    if (!c->rep->start_ns || s < c->rep->start_ns)
        c->rep->start_ns = s;
    if (e > c->rep->end_ns)
        c->rep->end_ns = e;
    if (!c->prof->start_ns || s < c->prof->start_ns)
        c->prof->start_ns = s;
    if (e > c->prof->end_ns)
        c->prof->end_ns = e;
}

static void chunk_init(chunk *k, jfr_ctx *c, size_t off, uint32_t no, const jfr_header *h)
{
    memset(k, 0, sizeof *k);
    k->c = c;
    k->w = (jfr_where){.base = c->base, .name = c->name, .chunk = no, .err = &c->rep->error};
    k->h = h;
    k->start = c->base + off;
    k->end = k->start + h->size;
    for (unsigned i = 0; i < NSPECS; i++)
        jfr_plan_init(&k->plans[i]);
    k->exec_id = UINT64_MAX;
    k->set_cls = JFR_NONE;
    k->ns_per_tick = 1e9 / (double)h->ticks_per_sec;
    jp_strbuf_init(&k->t_name, 0);
    jp_strbuf_init(&k->t_value, 0);
    c->warn.chunk = no;
}

/* Frees what only the event loop needed; meta, pools and resolver stay for
 * the next chunk's look-ups (see jfr_resolver.prev). */
static void chunk_trim(chunk *k)
{
    for (unsigned i = 0; i < NSPECS; i++)
        jfr_plan_cleanup(&k->plans[i]);
    free(k->lut);
    k->lut = NULL;
    free(k->agg.cells);
    k->agg.cells = NULL;
    jp_strbuf_cleanup(&k->t_name);
    jp_strbuf_cleanup(&k->t_value);
}

static void chunk_free(chunk *k, bool have_pools)
{
    if (!k)
        return;
    chunk_trim(k);
    if (have_pools) {
        jfr_resolver_cleanup(&k->res);
        jfr_pools_cleanup(&k->pools);
    }
    jfr_meta_unref(k->meta);
    free(k);
}

void jfr_ctx_cleanup(jfr_ctx *c)
{
    chunk_free(c->prev, true);
    c->prev = NULL;
}

jp_err jfr_chunk_read(jfr_ctx *c, size_t off, uint32_t no, const jfr_header *h)
{
    chunk *k = jp_xmalloc(sizeof *k);
    chunk_init(k, c, off, no, h);
    if (!(h->flags & 1))
        jfr_warn(&c->warn, JFR_WARN_FLAGS,
                 "header does not flag compressed integers; read as compressed like the JDK");
    const uint8_t *mev = k->start + h->meta;
    jp_err rc = JP_OK;
    if (c->prev && jfr_meta_same(c->prev->meta, mev, k->end)) {
        k->meta = jfr_meta_ref(c->prev->meta);
    } else {
        k->meta = jfr_meta_new();
        rc = jfr_meta_parse(k->meta, mev, k->end, &k->w);
    }
    if (rc) {
        chunk_free(k, false);
        return rc;
    }
    jfr_pools_init(&k->pools, k->meta);
    jfr_resolver_init(&k->res, k->meta, &k->pools, c->base, k->end, c->prof, &c->warn);
    rc = jfr_pools_load(&k->pools, k->meta, k->start, k->end, h->cp, &k->w);
    if (!rc) {
        /* The pool walk touched pages all over the chunk; the event loop
         * re-reads them in order. */
        jfr_release(c, off, off + h->size);
        k->res.prev = c->prev ? &c->prev->res : NULL;
        chunk_plans(k);
        chunk_range(k);
        rc = chunk_events(k);
        /* Events before any damage count: flush them either way. */
        chunk_flush(k);
    }
    /* Look-ups in the chunk before (metadata comparison, missing keys)
     * may have faulted its pages back in. */
    jfr_release(c, c->prev ? c->prev_off : off, off + h->size);
    chunk_free(c->prev, true);
    c->prev = NULL;
    if (rc) {
        chunk_free(k, true);
        return rc;
    }
    chunk_trim(k);
    k->res.prev = NULL;
    c->prev = k;
    c->prev_off = off;
    return JP_OK;
}
