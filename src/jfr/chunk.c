/* chunk.c - one chunk: header, metadata, pools, the rare events, and the
 * resolution of its aggregated events into the chunk's profile. */
#include "jfr/chunk.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/xalloc.h"
#include "jfr/agg.h"
#include "jfr/events.h"
#include "jfr/meta.h"
#include "jfr/pool.h"
#include "jfr/resolve.h"
#include "jfr/split.h"

/* ---- header ---- */

jp_err jfr_header_parse(const jfr_ctx *c, size_t off, uint32_t no, jfr_header *h, jp_error *err)
{
    jfr_where w = {.base_off = off, .name = c->name, .chunk = no, .err = err};
    uint8_t buf[JFR_HEADER_SIZE];
    uint64_t avail = c->src.len - off;
    if (avail < JFR_HEADER_SIZE)
        return jfr_fail(&w, JP_ERR_TRUNCATED, NULL, "chunk header cut off (%llu of %d bytes)",
                        (unsigned long long)avail, JFR_HEADER_SIZE);
    jp_err rc = jfr_src_copy(&c->src, off, buf, sizeof buf, err);
    if (rc)
        return rc;
    const uint8_t *p = buf;
    w.base = buf;
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
                        "chunk size %" PRIu64 " runs past the end of the input (%llu bytes left)",
                        h->size, (unsigned long long)avail);
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
        for (s++; *s >= '0' && *s <= '9'; s++) {
            v += (*s - '0') * scale;
            scale /= 10;
        }
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

/* Events read field by field, outside the compiled rows: */
#define EV_SETTING JFR_EV_NSPECS /* jdk.ActiveSetting */

#define OLD_NFIELDS 6
static const char *const old_field_names[OLD_NFIELDS] = {
    "startTime", "allocationTime", "objectAge", "lastKnownHeapUsage", "objectSize", "object"};
/* GC evidence (model/gc.h): no stack, read field by field (they are few). */
enum { GC_COLL, GC_PAUSE, GC_HEAP, GC_TALLOC, GC__COUNT };
#define EV_GC (EV_SETTING + 1) /* + GC_* */
#define GC_MAX_FIELDS 7
static const struct {
    const char *name;
    const char *fields[GC_MAX_FIELDS];
} gc_specs[GC__COUNT] = {
    [GC_COLL] = {"jdk.GarbageCollection",
                 {"startTime", "duration", "gcId", "name", "cause", "sumOfPauses", "longestPause"}},
    [GC_PAUSE] = {"jdk.GCPhasePause", {"startTime", "duration", "gcId", "name"}},
    [GC_HEAP] = {"jdk.GCHeapSummary", {"startTime", "gcId", "when", "heapUsed"}},
    [GC_TALLOC] = {"jdk.ThreadAllocationStatistics", {"startTime", "allocated", "thread"}},
};
_Static_assert(EV_GC + GC__COUNT <= JFR_EV_MAX, "event index space");
/* Bytes of a metadata event (the JDK's are a few hundred kB). */
#define JFR_MAX_META_BYTES (64u << 20)
/* Stack keys counted in lanes at most: 16 bytes each per lane. */
#define JFR_DENSE_MAX (1u << 17)

typedef struct chunk chunk;

/* The chunk before, decoded again only when a key is missing here. */
typedef struct prev_chunk {
    bool tried;
    bool ok;
    bool have_pools;
    jfr_header h;
    jfr_meta *meta;
    jfr_pools pools;
    jfr_resolver res;
} prev_chunk;

struct chunk {
    const jfr_ctx *c;
    jfr_chunk_out *o;
    jfr_where w;  /* the chunk: offsets from the start of the input */
    jfr_where ew; /* the bytes of the event loop's current run (rare events) */
    const jfr_header *h;
    jfr_meta *meta;
    jfr_pools pools;
    jfr_resolver res;
    jfr_evtab tab;
    jfr_acc acc; /* the events of the chunk, by raw keys */
    uint32_t set_cls;
    uint32_t set_fields[3]; /* id, name, value */
    uint32_t gc_cls[GC__COUNT];
    uint32_t gc_fields[GC__COUNT][GC_MAX_FIELDS];
    /* io detail: per row, the fields host, address, port (sockets) or
     * path (files); JFR_NONE where absent */
    uint32_t io_fields[JFR_EV_NSPECS][3];
    /* jdk.OldObjectSample: startTime, allocationTime, objectAge,
     * lastKnownHeapUsage, objectSize, object (JFR_NONE where absent) */
    uint32_t old_fields[OLD_NFIELDS];
    jp_strbuf t_name, t_value, t_addr, t_cause;
    jp_u64map states; /* state key -> JFR_STATE_* | 4 when the --state filter drops it */
    size_t prev_off;
    prev_chunk prev;
};

/* Lanes for the range of stack keys when it is dense enough: async-profiler
 * 4.x numbers its stacks by slots of its trace table (a range a few times
 * the count), the JDK's ids grow through the recording. A chunk of many
 * events affords a sparse range: lanes cost about a nanosecond per key of
 * the range (zeroed, then walked), the cells a few more per event than a
 * lane, and an event takes 16-20 bytes (async-profiler's later chunks hold
 * 2-3 k stacks over its 64 Ki trace slots: cells for every event, 2-3 ns
 * more each, before). Only without threads (a thread key sends an event to
 * the cells). */
static void chunk_dense(chunk *k)
{
    const jp_u64map *ix = &k->pools.index[JFR_POOL_STACK];
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < ix->cap; i++) {
        if (!ix->used[i])
            continue;
        lo = ix->keys[i] < lo ? ix->keys[i] : lo;
        hi = ix->keys[i] > hi ? ix->keys[i] : hi;
    }
    /* Key 0 is "no stack"; keys missing from the pool land in the cells. */
    if (k->c->threads || !ix->count || lo > hi)
        return;
    lo = lo > 0 ? lo - 1 : 0;
    uint64_t n = hi - lo + 1;
    if (n <= JFR_DENSE_MAX && (n <= 16 * (uint64_t)ix->count + 1024 || n <= k->h->size / 16))
        jfr_evtab_dense(&k->tab, lo, (size_t)n);
}

/* The rows of events.c, and the rare types read here. */
static void chunk_plans(chunk *k)
{
    const jfr_meta *m = k->meta;
    jfr_evtab_build(&k->tab, k->c, m, k->h);
    chunk_dense(k);
    for (unsigned i = 0; i < JFR_EV_NSPECS; i++) {
        uint32_t cls = k->tab.cls[i];
        if (cls != JFR_NONE && jfr_ev_specs[i].slot == JFR_SLOT_OLD)
            for (int f = 0; f < OLD_NFIELDS; f++)
                k->old_fields[f] = jfr_meta_field(m, cls, old_field_names[f]);
        if (cls == JFR_NONE || jfr_ev_specs[i].slot != JFR_SLOT_IO || !k->c->io_detail)
            continue;
        bool sock = !strncmp(jfr_ev_specs[i].name, "jdk.Socket", 10);
        k->io_fields[i][0] = jfr_meta_field(m, cls, sock ? "host" : "path");
        k->io_fields[i][1] = sock ? jfr_meta_field(m, cls, "address") : JFR_NONE;
        k->io_fields[i][2] = sock ? jfr_meta_field(m, cls, "port") : JFR_NONE;
    }
    /* Settings are read whatever kinds are wanted: they are few, and what
     * they say carries over to later chunks. */
    k->set_cls = jfr_meta_class(m, "jdk.ActiveSetting");
    if (k->set_cls != JFR_NONE) {
        k->set_fields[0] = jfr_meta_field(m, k->set_cls, "id");
        k->set_fields[1] = jfr_meta_field(m, k->set_cls, "name");
        k->set_fields[2] = jfr_meta_field(m, k->set_cls, "value");
        jfr_evtab_want(&k->tab, m->classes[k->set_cls].id, EV_SETTING, true);
    }
    /* GC evidence is read whatever kinds are wanted: a few events a second. */
    for (unsigned g = 0; g < GC__COUNT && k->c->gc; g++) {
        uint32_t cls = jfr_meta_class(m, gc_specs[g].name);
        k->gc_cls[g] = cls;
        if (cls == JFR_NONE)
            continue;
        for (int f = 0; f < GC_MAX_FIELDS; f++)
            k->gc_fields[g][f] =
                gc_specs[g].fields[f] ? jfr_meta_field(m, cls, gc_specs[g].fields[f]) : JFR_NONE;
        jfr_evtab_want(&k->tab, m->classes[cls].id, EV_GC + g, true);
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
    jfr_settings *s = &k->o->set;
    bool exec = found[0] && nums[0] == k->tab.exec_id;
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

/* --io-detail: the endpoint or path of one io event, read only for a local
 * viewer (jfr_options.io_detail); strings are bounded by JFR_MAX_TEXT. An
 * event whose fields do not decode is counted under "[unreadable]". */
static void chunk_io(chunk *k, unsigned i, const uint8_t *p, const uint8_t *end, uint64_t ns)
{
    const uint32_t *f = k->io_fields[i];
    bool sock =
        f[1] != JFR_NONE || f[2] != JFR_NONE || !strncmp(jfr_ev_specs[i].name, "jdk.Socket", 10);
    uint32_t fields[3];
    int n = 0, at[3] = {-1, -1, -1};
    for (int j = 0; j < 3; j++)
        if (f[j] != JFR_NONE) {
            at[j] = n;
            fields[n++] = f[j];
        }
    uint64_t nums[3] = {0, 0, 0};
    jp_strbuf *texts[3] = {NULL, NULL, NULL};
    jp_strbuf *bufs[2] = {&k->t_name, &k->t_addr};
    for (int j = 0; j < 2; j++)
        if (at[j] >= 0) {
            jp_strbuf_reset(bufs[j]);
            texts[at[j]] = bufs[j];
        }
    bool found[3] = {false, false, false};
    jp_io_detail *d = &k->o->io;
    jp_io_target t = sock ? JP_IO_SOCKET : JP_IO_FILE;
    if (n && !jfr_resolve_fields(&k->res, k->tab.cls[i], p, end, fields, n, nums, texts, found)) {
        jp_io_detail_add(d, t, "[unreadable]", 12, 1, ns);
        return;
    }
    const char *a = at[0] >= 0 && found[at[0]] ? jp_strbuf_str(&k->t_name) : "";
    if (!sock) {
        jp_io_detail_add(d, t, *a ? a : "[no path]", *a ? strlen(a) : 9, 1, ns);
        return;
    }
    const char *b = at[1] >= 0 && found[at[1]] ? jp_strbuf_str(&k->t_addr) : "";
    int64_t port = at[2] >= 0 && found[at[2]] ? (int64_t)(int32_t)nums[at[2]] : -1;
    if (!*a && !*b)
        a = "[no address]";
    jp_io_detail_add_socket(d, a, strlen(a), b, strlen(b), port, 1, ns);
}

static int64_t chunk_span(const chunk *k, uint64_t ticks, bool found)
{
    if (!found)
        return -1;
    int64_t ns = jfr_d2i((double)(int64_t)ticks * k->tab.ns_per_tick);
    return ns > 0 ? ns : 0;
}

static void copy_text(char *dst, size_t cap, const jp_strbuf *t, bool found)
{
    size_t n = found ? t->len : 0;
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, found ? jp_strbuf_str(t) : "", n);
    dst[n] = 0;
}

/* One GC event into the chunk's GC log. A field that is missing or does
 * not decode stays unknown; only bytes that do not decode at all are
 * damage. */
static jp_err chunk_gc(chunk *k, unsigned g, const uint8_t *ev, const uint8_t *p,
                       const uint8_t *end)
{
    uint64_t n[GC_MAX_FIELDS] = {0};
    bool f[GC_MAX_FIELDS];
    jp_strbuf *texts[GC_MAX_FIELDS] = {NULL};
    if (g == GC_COLL || g == GC_PAUSE)
        texts[3] = &k->t_name;
    if (g == GC_COLL)
        texts[4] = &k->t_cause;
    if (g == GC_HEAP)
        texts[2] = &k->t_name;
    if (!jfr_resolve_fields(&k->res, k->gc_cls[g], p, end, k->gc_fields[g], GC_MAX_FIELDS, n, texts,
                            f))
        return jfr_fail(&k->ew, JP_ERR_FORMAT, ev, "malformed %s event", gc_specs[g].name);
    int64_t t = f[0] ? jfr_evtab_time(&k->tab, n[0]) : k->h->start_ns;
    if (k->c->filter && (t < k->c->from_ns || t >= k->c->to_ns)) {
        k->acc.events_filtered++;
        return JP_OK;
    }
    jp_gc_log *log = &k->o->gc;
    if (g == GC_COLL) {
        jp_gc_collection c = {.start_ns = t,
                              .duration_ns = chunk_span(k, n[1], f[1]),
                              .gc_id = n[2],
                              .sum_pauses_ns = chunk_span(k, n[5], f[5]),
                              .longest_pause_ns = chunk_span(k, n[6], f[6])};
        copy_text(c.name, sizeof c.name, &k->t_name, f[3]);
        copy_text(c.cause, sizeof c.cause, &k->t_cause, f[4]);
        jp_gc_log_collection(log, &c);
    } else if (g == GC_PAUSE) {
        jp_gc_pause ps = {.start_ns = t, .duration_ns = chunk_span(k, n[1], f[1]), .gc_id = n[2]};
        copy_text(ps.name, sizeof ps.name, &k->t_name, f[3]);
        jp_gc_log_pause(log, &ps);
    } else if (g == GC_HEAP) {
        const char *w = f[2] ? jp_strbuf_str(&k->t_name) : "";
        jp_gc_heap h = {.time_ns = t, .gc_id = n[1], .used = n[3]};
        h.when = !strcmp(w, "Before GC")  ? JP_GC_BEFORE
                 : !strcmp(w, "After GC") ? JP_GC_AFTER
                                          : JP_GC_WHEN_UNKNOWN;
        if (f[3])
            jp_gc_log_heap(log, &h);
    } else if (f[1] && f[2]) {
        jp_gc_talloc ta = {.time_ns = t, .thread = n[2], .allocated = n[1]};
        jp_gc_log_talloc(log, &ta);
    }
    return JP_OK;
}

/* The rest of a jdk.OldObjectSample (its stack goes to the cells): the
 * object's class, age, size and the heap in use, into the chunk's
 * old-object log. A field that is missing stays unknown. */
static void chunk_old(chunk *k, unsigned i, const uint8_t *p, const uint8_t *end)
{
    uint64_t n[OLD_NFIELDS] = {0};
    bool f[OLD_NFIELDS] = {false};
    if (!jfr_resolve_fields(&k->res, k->tab.cls[i], p, end, k->old_fields, OLD_NFIELDS, n, NULL, f))
        return; /* its plan decoded: the event is whole, only a field is odd */
    int64_t age = -1;
    if (f[2]) {
        int64_t ns = jfr_d2i((double)(int64_t)n[2] * k->tab.ns_per_tick);
        age = ns > 0 ? ns : 0;
    }
    jp_old_sample s = {.time_ns = f[0] ? jfr_evtab_time(&k->tab, n[0]) : k->h->start_ns,
                       .alloc_ns = f[1] ? jfr_evtab_time(&k->tab, n[1]) : 0,
                       .age_ns = age,
                       .heap_used = f[3] ? n[3] : 0,
                       .size = f[4] ? n[4] : 0};
    if (f[5] && jfr_resolve_old_class(&k->res, n[5], &k->t_name))
        snprintf(s.cls, sizeof s.cls, "%s", jp_strbuf_str(&k->t_name));
    jp_old_log_add(&k->o->old, &s);
}

/* A rows' event that pairs mallocs with frees, names an io endpoint or is
 * an old object. */
static jp_err chunk_row(chunk *k, unsigned i, const uint8_t *ev, const uint8_t *p,
                        const uint8_t *next)
{
    const jfr_ev_spec *sp = &jfr_ev_specs[i];
    uint64_t s[JFR_PLAN_SLOTS];
    if (!jfr_evtab_fields(&k->tab, i, p, next, s))
        return jfr_fail(&k->ew, JP_ERR_FORMAT, ev, "malformed %s event", sp->name);
    int64_t t = 0;
    if (k->c->filter || k->c->leak) {
        t = jfr_evtab_time(&k->tab, s[JFR_S_TIME]);
        if (k->c->filter && (t < k->c->from_ns || t >= k->c->to_ns)) {
            k->acc.events_filtered++;
            return JP_OK;
        }
    }
    if (sp->slot == JFR_SLOT_NMEM || sp->slot == JFR_SLOT_FREE) {
        jfr_leak_chunk_add(&k->o->leak, t, s[JFR_S_ADDR], s[JFR_S_VALUE], s[JFR_S_STACK],
                           s[JFR_S_THREAD], sp->slot == JFR_SLOT_FREE);
        return JP_OK;
    }
    if (sp->slot == JFR_SLOT_OLD) {
        chunk_old(k, i, p, next);
    } else {
        int64_t ns = jfr_d2i((double)(int64_t)s[JFR_S_VALUE] * k->tab.ns_per_tick);
        chunk_io(k, i, p, next, ns > 0 ? (uint64_t)ns : 0);
    }
    jfr_events_add(&k->tab, &k->acc, i, s);
    return JP_OK;
}

/* The rare-event callback of the event loop (events.h). */
static jp_err chunk_rare(void *arg, unsigned i, const uint8_t *ev, const uint8_t *p,
                         const uint8_t *next)
{
    chunk *k = arg;
    if (i == EV_SETTING) {
        chunk_setting(k, p, next);
        return JP_OK;
    }
    if (i >= EV_GC)
        return chunk_gc(k, i - EV_GC, ev, p, next);
    return chunk_row(k, i, ev, p, next);
}

typedef struct serial_walk {
    jfr_walk x;
    uint64_t start, end;
    jp_err rc;
} serial_walk;

static void serial_run(void *arg)
{
    serial_walk *sw = arg;
    sw->rc = jfr_events_range(&sw->x, sw->start, sw->end);
}

/* The events of the chunk on the calling thread, from start to end. */
static jp_err chunk_events_serial(chunk *k, uint64_t start, uint64_t end)
{
    k->ew = k->w;
    const jfr_ctx *c = k->c;
    serial_walk sw = {.x = {.t = &k->tab,
                            .acc = &k->acc,
                            .src = &c->src,
                            .buf = c->buf,
                            .win = c->win,
                            .step = c->step,
                            .rare = chunk_rare,
                            .rare_arg = k,
                            .w = &k->ew},
                      .start = start,
                      .end = end};
    if (!c->src.map) {
        serial_run(&sw);
        return sw.rc;
    }
    bool whole = jfr_guarded(serial_run, &sw);
    jfr_win_unmap(c->win);
    if (whole)
        return sw.rc;
    /* What a pread of the cut file says, at the window that faulted. */
    k->ew.base = NULL;
    return jfr_fail(&k->ew, JP_ERR_TRUNCATED, NULL,
                    "the file is shorter than it was (cut while it was read)");
}

/* Forgets what a parallel attempt at the events left behind. */
static void chunk_reset(chunk *k)
{
    jfr_chunk_out *o = k->o;
    jfr_acc_cleanup(&k->acc);
    jfr_acc_init(&k->acc);
    memset(&o->set, 0, sizeof o->set);
    jfr_leak_chunk_cleanup(&o->leak);
    jfr_leak_chunk_init(&o->leak);
    jp_io_detail_cleanup(&o->io);
    jp_io_detail_init(&o->io);
    jp_gc_log_cleanup(&o->gc);
    jp_gc_log_init(&o->gc);
    jp_old_log_cleanup(&o->old);
    jp_old_log_init(&o->old);
}

static jp_err chunk_events(chunk *k)
{
    uint64_t start = k->o->off + JFR_HEADER_SIZE, end = k->o->off + k->h->size;
    if (k->c->team && end - start >= 2 * (uint64_t)k->c->block) {
        /* Rare events that fail there are decoded again here: no message. */
        k->ew = (jfr_where){.name = k->c->name, .chunk = k->o->no};
        jfr_walk x = {.t = &k->tab,
                      .acc = &k->acc,
                      .src = &k->c->src,
                      .step = k->c->step,
                      .rare = chunk_rare,
                      .rare_arg = k};
        if (jfr_split_run(k->c->team, &x, start, end, k->c->block))
            return JP_OK;
        chunk_reset(k);
    }
    return chunk_events_serial(k, start, end);
}

/* ---- thread states ---- */

static bool state_wanted(const jfr_ctx *c, const char *name)
{
    for (uint32_t i = 0; i < c->nstates; i++)
        if (!strcasecmp(c->states[i], name))
            return true;
    return false;
}

/* JFR_STATE_* of a state key, | 4 when --state drops it. A key that is not
 * in the pool has no name: it is "other", and no --state keeps it. */
static unsigned chunk_state(chunk *k, uint64_t key)
{
    uint64_t v;
    if (jp_u64map_get(&k->states, key, &v))
        return (unsigned)v;
    bool named = jfr_resolve_state(&k->res, key, &k->t_name);
    const char *name = named ? jp_strbuf_str(&k->t_name) : "";
    unsigned st = named && !strcmp(name, "STATE_DEFAULT") ? JFR_STATE_DEFAULT : JFR_STATE_OTHER;
    if (k->c->nstates && !state_wanted(k->c, name))
        st |= 4;
    jp_u64map_put(&k->states, key, st);
    return st;
}

/* async-profiler names the state of its cpu samples STATE_DEFAULT; the JDK
 * has no such state. Its presence in the pool tells the dialect. */
static bool chunk_ap_states(chunk *k)
{
    const jp_u64map *ix = &k->pools.index[JFR_POOL_STATE];
    for (size_t i = 0; i < ix->cap; i++)
        if (ix->used[i] && (chunk_state(k, ix->keys[i]) & 3) == JFR_STATE_DEFAULT)
            return true;
    return false;
}

/* ---- end of chunk: resolution into the chunk's profile ---- */

_Static_assert(sizeof(jfr_cell) <= sizeof(jfr_agg_cell), "cells written over the sums");

/* Cells in key order: frames and stacks enter the profile in the same order
 * whatever the number of threads that added the events up. */
static void chunk_flush(chunk *k)
{
    const jfr_ctx *c = k->c;
    jfr_chunk_out *o = k->o;
    o->rep.events_read += k->acc.events_read;
    o->rep.events_filtered += k->acc.events_filtered;
    o->lost += k->acc.lost;
    o->ap_states = chunk_ap_states(k);
    size_t ncells, nout = 0;
    jfr_agg_cell *cells = jfr_acc_sorted(&k->acc, &ncells);
    /* The chunk's cells are written over the sorted sums they come from: a
     * cell is smaller than a sum, and the n-th is written only once the
     * n-th sum was read. No second array of fresh pages (dear on some
     * VMs). */
    jfr_cell *out = (jfr_cell *)(void *)cells;
    for (size_t i = 0; i < ncells; i++) {
        const jfr_agg_cell sum = cells[i], *a = &sum;
        unsigned st = JFR_STATE_NONE;
        if (a->slot == JFR_SLOT_EXEC || a->slot == JFR_SLOT_WALL) {
            st = chunk_state(k, a->state);
            if (st & 4) {
                o->rep.events_filtered += a->events;
                continue;
            }
        }
        jfr_cell cell = {
            .stack = jfr_resolve_stack(&k->res, a->stack),
            .thread = c->threads ? jfr_resolve_thread(&k->res, a->thread) : JP_NO_THREAD,
            .slot = (uint8_t)a->slot,
            .state = (uint8_t)st,
            .events = a->events,
            .samples = a->samples,
            .value = a->value,
        };
        out[nout++] = cell;
    }
    o->cells = out;
    o->ncells = nout;
    jfr_leak_chunk *lk = &o->leak;
    jfr_leak_chunk_reduce(lk);
    for (size_t i = 0; i < lk->n; i++) {
        jfr_leak_ev *e = &lk->ev[i];
        if (e->is_free)
            continue;
        e->stack = jfr_resolve_stack(&k->res, e->stack);
        e->thread = c->threads ? jfr_resolve_thread(&k->res, e->thread) : JP_NO_THREAD;
    }
}

/* ---- the chunk before, for keys JDK 17 left there ---- */

/* The metadata of the chunk at off into m: in place, or read into b. */
static jp_err chunk_meta(const jfr_ctx *c, uint64_t off, const jfr_header *h, jfr_meta *m,
                         jfr_bytes *b, const jfr_where *w)
{
    uint64_t at = off + h->meta, avail = h->size - h->meta, size = 0;
    uint8_t head[10];
    size_t n = avail < sizeof head ? (size_t)avail : sizeof head;
    jfr_where wm = *w;
    wm.base = NULL;
    wm.base_off = at;
    jp_err rc = jfr_src_copy(&c->src, at, head, n, w->err);
    if (rc)
        return rc;
    const uint8_t *p = head;
    if (!jfr_varint(&p, head + n, &size) || size == 0 || size > avail)
        return jfr_fail(&wm, JP_ERR_FORMAT, NULL, "metadata event size runs past the chunk");
    if (size > JFR_MAX_META_BYTES)
        return jfr_fail(&wm, JP_ERR_LIMIT, NULL,
                        "metadata event of %" PRIu64 " bytes exceeds the limit of %u bytes", size,
                        JFR_MAX_META_BYTES);
    const uint8_t *ev;
    if ((rc = jfr_src_get(&c->src, at, (size_t)size, b, 0, &ev, w->err)))
        return rc;
    wm.base = ev;
    return jfr_meta_parse(m, ev, ev + size, &wm);
}

static jfr_resolver *chunk_prev(void *arg)
{
    chunk *k = arg;
    prev_chunk *pc = &k->prev;
    if (pc->tried)
        return pc->ok ? &pc->res : NULL;
    pc->tried = true;
    if (k->prev_off == SIZE_MAX || jfr_header_parse(k->c, k->prev_off, k->o->no - 1, &pc->h, NULL))
        return NULL;
    /* Quiet: damage in the chunk before was reported when it was read. */
    const jfr_where quiet = {.name = k->c->name, .chunk = k->o->no - 1};
    pc->meta = jfr_meta_new();
    jfr_bytes b = {0};
    jp_err rc = chunk_meta(k->c, k->prev_off, &pc->h, pc->meta, &b, &quiet);
    jfr_bytes_cleanup(&b);
    if (rc)
        return NULL;
    jfr_pools_init(&pc->pools, pc->meta);
    jfr_resolver_init(&pc->res, pc->meta, &pc->pools, k->o->prof, &k->o->warn);
    pc->have_pools = true;
    pc->ok = !jfr_pools_load(&pc->pools, pc->meta, &k->c->src, k->prev_off, pc->h.size, pc->h.cp,
                             &quiet);
    return pc->ok ? &pc->res : NULL;
}

static void prev_cleanup(prev_chunk *pc)
{
    if (pc->have_pools) {
        jfr_resolver_cleanup(&pc->res);
        jfr_pools_cleanup(&pc->pools);
    }
    jfr_meta_unref(pc->meta);
}

/* ---- the chunk ---- */

void jfr_chunk_out_init(jfr_chunk_out *o, const jfr_ctx *c, uint32_t no, size_t off,
                        const jfr_header *h, jp_profile *prof)
{
    memset(o, 0, sizeof *o);
    o->no = no;
    o->off = off;
    o->h = *h;
    o->direct = prof != NULL;
    o->prof = prof ? prof : jp_profile_new();
    jfr_leak_chunk_init(&o->leak);
    jp_io_detail_init(&o->io);
    jp_gc_log_init(&o->gc);
    jp_old_log_init(&o->old);
    jfr_report_init(&o->rep);
    o->warn = (jfr_warner){.rep = &o->rep, .name = c->name, .chunk = no};
}

void jfr_chunk_out_cleanup(jfr_chunk_out *o)
{
    if (!o->direct)
        jp_profile_free(o->prof);
    free(o->cells);
    jfr_leak_chunk_cleanup(&o->leak);
    jp_io_detail_cleanup(&o->io);
    jp_gc_log_cleanup(&o->gc);
    jp_old_log_cleanup(&o->old);
    memset(o, 0, sizeof *o);
}

static void chunk_range(chunk *k)
{
    jfr_report *r = &k->o->rep;
    r->start_ns = k->h->start_ns;
    r->end_ns = jfr_sat_add(k->h->start_ns, k->h->duration_ns);
}

static void chunk_init(chunk *k, const jfr_ctx *c, jfr_chunk_out *o, size_t prev_off)
{
    memset(k, 0, sizeof *k);
    k->c = c;
    k->o = o;
    k->w = (jfr_where){.name = c->name, .chunk = o->no, .err = &o->rep.error};
    k->ew = k->w;
    k->h = &o->h;
    jfr_acc_init(&k->acc);
    k->set_cls = JFR_NONE;
    for (unsigned g = 0; g < GC__COUNT; g++)
        k->gc_cls[g] = JFR_NONE;
    jp_strbuf_init(&k->t_cause, 0);
    jp_strbuf_init(&k->t_name, 0);
    jp_strbuf_init(&k->t_value, 0);
    jp_strbuf_init(&k->t_addr, 0);
    jp_u64map_init(&k->states);
    k->prev_off = prev_off;
}

static void chunk_cleanup(chunk *k, bool have_pools)
{
    jfr_evtab_cleanup(&k->tab);
    jfr_acc_cleanup(&k->acc);
    jp_strbuf_cleanup(&k->t_name);
    jp_strbuf_cleanup(&k->t_value);
    jp_strbuf_cleanup(&k->t_addr);
    jp_strbuf_cleanup(&k->t_cause);
    jp_u64map_cleanup(&k->states);
    if (have_pools) {
        jfr_resolver_cleanup(&k->res);
        jfr_pools_cleanup(&k->pools);
    }
    prev_cleanup(&k->prev);
    jfr_meta_unref(k->meta);
}

void jfr_chunk_decode(const jfr_ctx *c, jfr_chunk_out *o, size_t prev_off)
{
    chunk k;
    chunk_init(&k, c, o, prev_off);
    const jfr_header *h = &o->h;
    if (!(h->flags & 1))
        jfr_warn(&o->warn, JFR_WARN_FLAGS,
                 "header does not flag compressed integers; read as compressed like the JDK");
    k.meta = jfr_meta_new();
    jfr_bytes mb = {0};
    jp_err rc = chunk_meta(c, o->off, h, k.meta, &mb, &k.w);
    jfr_bytes_cleanup(&mb);
    if (rc) {
        chunk_cleanup(&k, false);
        o->rc = rc;
        return;
    }
    jfr_pools_init(&k.pools, k.meta);
    jfr_resolver_init(&k.res, k.meta, &k.pools, o->prof, &o->warn);
    k.res.prev_get = chunk_prev;
    k.res.prev_arg = &k;
    rc = jfr_pools_load(&k.pools, k.meta, &c->src, o->off, h->size, h->cp, &k.w);
    if (!rc) {
        chunk_plans(&k);
        chunk_range(&k);
        rc = chunk_events(&k);
        /* Events before any damage count: flush them either way. */
        chunk_flush(&k);
    }
    jp_gc_log_append(&o->prof->gc, &o->gc);
    jp_old_log_append(&o->prof->old, &o->old);
    chunk_cleanup(&k, true);
    o->rc = rc;
}
