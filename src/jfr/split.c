/* split.c - a chunk's events walked in steps, on one thread or several
 * (see split.h). */
#include "jfr/split.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "jfr/input.h"
#include "jfr/internal.h"

/* ---- one thread over a range ---- */

/* The size and type at the start of an event (type UINT64_MAX when cut);
 * false when even the size is cut. */
static bool event_head(const uint8_t *p, const uint8_t *end, uint64_t *size, uint64_t *type)
{
    *type = UINT64_MAX;
    if (!jfr_varint(&p, end, size))
        return false;
    if (!jfr_varint(&p, end, type))
        *type = UINT64_MAX;
    return true;
}

/* The first event of a step does not fit it: pass it over unread when it
 * is not wanted, else say how many bytes the step needs (0: damage or too
 * big, with the error in rc). */
static size_t big_event(const jfr_walk *x, jfr_run *r, uint64_t *pos, uint64_t end, size_t have,
                        jp_err *rc)
{
    uint64_t size, type;
    *rc = JP_OK;
    if (!event_head(r->p, r->end, &size, &type))
        return have + 16;
    if (size == 0 || size > end - *pos) {
        r->tail_ok = false; /* damage: the loop says what and where */
        *rc = jfr_events_run(x->t, x->acc, r);
        return 0;
    }
    if (type != UINT64_MAX && !jfr_evtab_wanted(x->t, type)) {
        x->acc->events_read += type > 1;
        *pos += size;
        return SIZE_MAX; /* passed over */
    }
    if (size > JFR_MAX_EVENT_BYTES) {
        *rc = jfr_fail(r->w, JP_ERR_LIMIT, r->p,
                       "event of %" PRIu64 " bytes exceeds the limit of %u bytes", size,
                       JFR_MAX_EVENT_BYTES);
        return 0;
    }
    return type == UINT64_MAX ? have + 16 : (size_t)size;
}

/* A walk over [pos, end) a run at a time: from memory, the range in one
 * run; from a file, a step at a time into x->buf, an event cut by the
 * step's end carried into the next step, or a window at a time mapped
 * (src->map: x->win), the next window starting at the cut event. range_fill
 * makes g->r the next run; once the loop has stopped in it, range_next
 * moves past what it took (done set at the end, or on an error, which it
 * returns). */
typedef struct ranger {
    const jfr_walk *x;
    uint64_t pos, end;
    size_t have, want;
    bool done;
    const uint8_t *at; /* the run's first byte, at pos */
    jfr_run r;
} ranger;

static void range_init(ranger *g, const jfr_walk *x, uint64_t pos, uint64_t end)
{
    *g = (ranger){.x = x, .pos = pos, .end = end, .want = x->step, .done = pos >= end};
}

/* A run of g's walk: it starts with the lead its run before ended with. */
static void range_run(ranger *g, jfr_run r)
{
    r.lead_known = g->r.lead_known;
    r.lead_type = g->r.lead_type;
    g->r = r;
}

static jp_err range_fill(ranger *g)
{
    const jfr_walk *x = g->x;
    const jfr_src *src = x->src;
    if (src->mem) {
        x->w->base = src->mem;
        x->w->base_off = 0;
        range_run(g, (jfr_run){.p = src->mem + g->pos,
                               .end = src->mem + g->end,
                               .lim = src->mem + g->end,
                               .rare = x->rare,
                               .rare_arg = x->rare_arg,
                               .w = x->w});
        return JP_OK;
    }
    size_t n = g->end - g->pos < g->want ? (size_t)(g->end - g->pos) : g->want;
    jp_err rc;
    if (src->map) {
        const uint8_t *lim;
        if ((rc = jfr_win_map(src, x->win, g->pos, n, &g->at, &lim, x->w->err))) {
            g->done = true;
            return rc;
        }
        x->w->base = g->at;
        x->w->base_off = g->pos;
        range_run(g, (jfr_run){.p = g->at,
                               .end = g->at + n,
                               .lim = lim,
                               .tail_ok = g->pos + n < g->end,
                               .rare = x->rare,
                               .rare_arg = x->rare_arg,
                               .w = x->w});
        return JP_OK;
    }
    jfr_bytes *b = x->buf;
    const uint8_t *data;
    if (n > g->have &&
        (rc = jfr_src_get(src, g->pos + g->have, n - g->have, b, g->have, &data, x->w->err))) {
        g->done = true;
        return rc;
    }
    g->have = n > g->have ? n : g->have;
    g->at = b->data;
    x->w->base = b->data;
    x->w->base_off = g->pos;
    range_run(g, (jfr_run){.p = b->data,
                           .end = b->data + g->have,
                           .lim = b->data + g->have + JFR_SRC_PAD,
                           .tail_ok = g->pos + g->have < g->end,
                           .rare = x->rare,
                           .rare_arg = x->rare_arg,
                           .w = x->w});
    return JP_OK;
}

static jp_err range_next(ranger *g, jp_err rc)
{
    const jfr_walk *x = g->x;
    if (rc || x->src->mem) {
        g->done = true; /* from memory the run was the range */
        if (x->src->map)
            jfr_win_unmap(x->win);
        return rc;
    }
    size_t used = (size_t)(g->r.stop - g->at);
    size_t have = x->src->map ? (size_t)(g->r.end - g->at) : g->have;
    g->want = x->step;
    if (used == 0 && g->r.tail_ok) {
        g->want = big_event(x, &g->r, &g->pos, g->end, have, &rc);
        if (!g->want) {
            g->done = true;
        } else if (g->want == SIZE_MAX) {
            g->want = x->step;
            g->have = 0;
        }
    } else if (x->src->map) {
        g->pos += used; /* the next window starts there */
    } else {
        memmove(x->buf->data, x->buf->data + used, g->have - used);
        g->pos += used;
        g->have -= used;
    }
    g->done = g->done || g->pos >= g->end;
    if (g->done && x->src->map)
        jfr_win_unmap(x->win);
    return rc;
}

/* The rest of g's range on one walk. */
static jp_err range_rest(ranger *g)
{
    jp_err rc = JP_OK;
    while (!g->done && !(rc = range_fill(g)))
        rc = range_next(g, jfr_events_run(g->x->t, g->x->acc, &g->r));
    return rc;
}

jp_err jfr_events_range(const jfr_walk *x, uint64_t pos, uint64_t end)
{
    ranger g;
    range_init(&g, x, pos, end);
    return range_rest(&g);
}

/* Two ranges on two walks at once (jfr_events_run2), into the same
 * accumulator (x[0].acc): each walk's end goes to done(arg, i, rc) as soon
 * as it comes, then the other finishes alone. */
static void ranges_two(const jfr_walk x[2], const uint64_t pos[2], const uint64_t end[2],
                       void (*done)(void *, int, jp_err), void *arg)
{
    ranger g[2];
    bool on[2];
    jp_err rc;
    for (int i = 0; i < 2; i++) {
        range_init(&g[i], &x[i], pos[i], end[i]);
        rc = g[i].done ? JP_OK : range_fill(&g[i]);
        on[i] = !g[i].done;
        if (!on[i])
            done(arg, i, rc);
    }
    while (on[0] && on[1]) {
        int i;
        rc = jfr_events_run2(x[0].t, x[0].acc, &g[0].r, &g[1].r, &i);
        g[1 - i].r.p = g[1 - i].r.stop;
        rc = range_next(&g[i], rc);
        if (!g[i].done && !(rc = range_fill(&g[i])))
            continue;
        on[i] = false;
        done(arg, i, rc);
        if (rc) {
            /* damage: the read is walked again serially, no need to finish */
            on[1 - i] = false;
            done(arg, 1 - i, rc);
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!on[i])
            continue;
        /* the rest alone, from where its run got */
        rc = range_next(&g[i], jfr_events_run(x[i].t, x[i].acc, &g[i].r));
        if (!rc)
            rc = range_rest(&g[i]);
        done(arg, i, rc);
    }
}

/* ---- where a span starts ---- */

/* Room for an event's size and type (two varints) */
#define HEAD_BYTES 24u
/* fate[] values besides a chain's exit (an input offset, never this small) */
enum { FATE_UNKNOWN = 0, FATE_DEAD = 1 };

/* Whether the bytes [ev, ev + size) at window byte i read as an event of
 * this chunk: a type id the metadata knows as an event's (any class when it
 * flags none as one) whose fields, read by the metadata, end exactly at the
 * event's end (only when the event ends inside the window: *checked says
 * whether it did), or metadata and checkpoints (ids 0 and 1, not read).
 * Text (the metadata's strings, pools of names) holds many bytes that are
 * type ids; it seldom holds fields that end where a size says. */
static bool event_reads(const jfr_scan *sc, const uint8_t *buf, size_t n, size_t i, uint64_t size,
                        const uint8_t *p, bool *checked)
{
    const uint8_t *ev = buf + i, *next = size < n - i ? ev + size : buf + n;
    uint64_t type;
    *checked = false;
    if (!jfr_varint(&p, next, &type))
        return false;
    if (type <= 1)
        return true;
    uint32_t c = jfr_meta_class_by_id(sc->meta, type);
    if (c == JFR_NONE || !(sc->any_class || sc->meta->classes[c].event))
        return false;
    if (size >= n - i)
        return true;
    static const jfr_where quiet = {0};
    *checked = true;
    return jfr_skip_class(sc->meta, c, &p, next, 0, &quiet) == JP_OK && p == next;
}

void jfr_scan_init(jfr_scan *sc, const jfr_meta *m)
{
    if (!sc->fate) {
        sc->fate = jp_xcalloc(JFR_SCAN_BYTES, sizeof *sc->fate);
        sc->steps = jp_xcalloc(JFR_SCAN_BYTES, sizeof *sc->steps);
        sc->path = jp_xcalloc(JFR_SCAN_BYTES, sizeof *sc->path);
    }
    sc->meta = m;
    sc->any_class = true;
    for (size_t i = 0; i < m->nclasses; i++)
        sc->any_class = sc->any_class && !m->classes[i].event;
}

void jfr_scan_cleanup(jfr_scan *sc)
{
    jfr_bytes_cleanup(&sc->bytes);
    free(sc->fate);
    free(sc->steps);
    free(sc->path);
    memset(sc, 0, sizeof *sc);
}

/* Follows the chain of sizes from window byte c to the first offset at or
 * past `exit_at`: that offset (and in *steps the events on the way whose
 * fields were read), or FATE_DEAD when an event does not read as one. What
 * each byte on the way leads to is remembered, so every byte of the window
 * is followed once. */
static uint64_t chain_exit(jfr_scan *sc, const uint8_t *buf, size_t n, uint64_t lo,
                           uint64_t exit_at, uint64_t end, size_t c, uint32_t *steps)
{
    size_t depth = 0;
    uint64_t pos = lo + c, res;
    uint32_t after = 0;
    for (;;) {
        if (pos >= exit_at) {
            res = pos;
            break;
        }
        size_t i = (size_t)(pos - lo);
        if (sc->fate[i] != FATE_UNKNOWN) {
            res = sc->fate[i];
            after = sc->steps[i];
            break;
        }
        const uint8_t *p = buf + i;
        uint64_t size;
        bool checked;
        if (!jfr_varint(&p, buf + n, &size) || size < 2 || size > end - pos ||
            !event_reads(sc, buf, n, i, size, p, &checked)) {
            res = FATE_DEAD;
            break;
        }
        sc->path[depth++] = (uint32_t)i << 1 | checked;
        pos += size;
    }
    while (depth) {
        uint32_t e = sc->path[--depth];
        after += e & 1;
        sc->fate[e >> 1] = res;
        sc->steps[e >> 1] = after;
    }
    *steps = after;
    return res;
}

/* Events a chain must read as such inside the window before it counts
 * (unless it ends exactly at the end of the range): a false start that
 * reads a timestamp as its size leaves the window in one jump. */
#define SCAN_MIN_STEPS 32u

/* Every byte in the first quarter is taken as a possible start and its
 * chain of sizes followed to the end of the window; those that do not read
 * as events for SCAN_MIN_STEPS events fall out, and the offset where all
 * the others leave the window is taken when they agree (the chain of the
 * true first event is among them, and chains that agree on one offset agree
 * from there on). None is taken when they do not, or none is left. */
uint64_t jfr_scan_event(jfr_scan *sc, const jfr_src *src, uint64_t lo, uint64_t end)
{
    size_t n = end - lo < JFR_SCAN_BYTES ? (size_t)(end - lo) : JFR_SCAN_BYTES;
    const uint8_t *buf;
    if (n < 2 * HEAD_BYTES || jfr_src_get(src, lo, n, &sc->bytes, 0, &buf, NULL))
        return 0;
    uint64_t exit_at = lo + n == end ? end : lo + n - HEAD_BYTES;
    memset(sc->fate, 0, n * sizeof *sc->fate);
    uint64_t agreed = 0;
    for (size_t c = 0; c < n / 4; c++) {
        uint32_t steps;
        uint64_t e = chain_exit(sc, buf, n, lo, exit_at, end, c, &steps);
        if (e == FATE_DEAD || (steps < SCAN_MIN_STEPS && e != end))
            continue;
        if (agreed && e != agreed)
            return 0;
        agreed = e;
    }
    return agreed < end ? agreed : 0;
}

/* ---- spans on several threads ---- */

/* A rare event queued by a span, as offsets into the span's copies. */
typedef struct rare_ev {
    size_t ev, p, next;
    unsigned idx;
} rare_ev;

typedef struct span {
    uint64_t start, end;
    jfr_bytes copies; /* the queued rare events' bytes, back to back */
    size_t used;
    rare_ev *q;
    size_t nq, cap;
    bool direct; /* its rare events go to the callback at once (its worker sets it, under mu) */
    bool done;   /* walked (ok says how) */
    bool ok;     /* its walk ended on its mark */
} span;

typedef struct worker {
    struct jfr_team *tm;
    jfr_acc acc;
    jfr_bytes buf[2]; /* a step of each of the two spans it walks at once */
    jfr_win win[2];   /* ... or their windows (src->map) */
    pthread_t tid;
} worker;

/* The threads of one read, kept from chunk to chunk with their buffers
 * and accumulators: starting threads and touching fresh memory cost more
 * than a chunk of a few MB takes to decode. `gen` counts the runs; a
 * worker runs each once and reports it in `ran`. */
struct jfr_team {
    int jobs, started;
    worker *wk;
    /* the run */
    jfr_walk x;
    span *spans;
    uint32_t nspans, spans_cap;
    pthread_mutex_t mu; /* next, the spans' states, calls of the callback from queues */
    pthread_cond_t moved;
    uint32_t next;             /* the next span to take */
    _Atomic uint32_t frontier; /* the first span not finished in order */
    atomic_bool bad;
    jfr_scan sc;
    /* the threads */
    pthread_mutex_t tmu;
    pthread_cond_t go, idle;
    uint64_t gen;
    int ran;
    bool quit;
};

/* Hands a finished (or frontier) span's queued rare events to the
 * callback, in order. Called with mu held. */
static jp_err flush_span(jfr_team *tm, span *s)
{
    jp_err rc = JP_OK;
    for (size_t i = 0; !rc && i < s->nq; i++) {
        const rare_ev *e = &s->q[i];
        const uint8_t *base = s->copies.data;
        rc = tm->x.rare(tm->x.rare_arg, e->idx, base + e->ev, base + e->p, base + e->next);
    }
    s->nq = 0;
    s->used = 0;
    return rc;
}

typedef struct span_arg {
    jfr_team *tm;
    span *s;
    uint32_t i;
} span_arg;

/* The rare callback of a span's walk: straight through once every span
 * before it has finished, else a copy queued. */
static jp_err span_rare(void *arg, unsigned idx, const uint8_t *ev, const uint8_t *p,
                        const uint8_t *next)
{
    span_arg *a = arg;
    jfr_team *tm = a->tm;
    span *s = a->s;
    if (!s->direct && atomic_load_explicit(&tm->frontier, memory_order_acquire) == a->i) {
        pthread_mutex_lock(&tm->mu);
        jp_err rc = flush_span(tm, s);
        s->direct = true;
        pthread_mutex_unlock(&tm->mu);
        if (rc)
            return rc;
    }
    if (s->direct)
        return tm->x.rare(tm->x.rare_arg, idx, ev, p, next);
    size_t len = (size_t)(next - ev);
    jfr_bytes_reserve(&s->copies, s->used + len);
    memcpy(s->copies.data + s->used, ev, len);
    s->q = jp_xgrow(s->q, &s->cap, s->nq + 1, sizeof *s->q);
    s->q[s->nq++] = (rare_ev){
        .ev = s->used, .p = s->used + (size_t)(p - ev), .next = s->used + len, .idx = idx};
    s->used += len;
    return JP_OK;
}

/* Marks span i walked and finishes every span walked in order so far. */
static void span_done(jfr_team *tm, uint32_t i, bool ok)
{
    pthread_mutex_lock(&tm->mu);
    tm->spans[i].done = true;
    tm->spans[i].ok = ok;
    bool bad = atomic_load(&tm->bad) || !ok;
    uint32_t f = atomic_load(&tm->frontier);
    while (!bad && f < tm->nspans && tm->spans[f].done) {
        span *s = &tm->spans[f];
        bad = !s->direct && flush_span(tm, s) != JP_OK;
        if (!bad)
            atomic_store_explicit(&tm->frontier, ++f, memory_order_release);
    }
    if (bad)
        atomic_store(&tm->bad, true);
    pthread_cond_broadcast(&tm->moved);
    pthread_mutex_unlock(&tm->mu);
}

/* The next span to walk in *i, and the one after it in *j when there is
 * one (else UINT32_MAX): a worker walks two at once. False when none is
 * left (or on damage). A worker takes spans only when it has finished
 * those it took before, so waiting here for the frontier cannot wait on
 * itself. */
static bool take(jfr_team *tm, uint32_t *i, uint32_t *j)
{
    uint32_t ahead = (uint32_t)tm->jobs * JFR_SPLIT_AHEAD;
    bool got = false;
    pthread_mutex_lock(&tm->mu);
    for (;;) {
        if (atomic_load(&tm->bad) || tm->next >= tm->nspans)
            break;
        uint32_t want = tm->nspans - tm->next >= 2 ? 2 : 1;
        if (tm->next + want <= atomic_load(&tm->frontier) + ahead) {
            *i = tm->next++;
            *j = want == 2 ? tm->next++ : UINT32_MAX;
            got = true;
            break;
        }
        pthread_cond_wait(&tm->moved, &tm->mu);
    }
    pthread_mutex_unlock(&tm->mu);
    return got;
}

/* A span's walk: its rare events go through span_rare. */
static void span_walk(worker *wk, int k, uint32_t i, span_arg *a, jfr_where *quiet, jfr_walk *x)
{
    jfr_team *tm = wk->tm;
    *a = (span_arg){.tm = tm, .s = &tm->spans[i], .i = i};
    /* Workers' errors are not reported: damage is walked again serially. */
    *quiet = (jfr_where){0};
    *x = tm->x;
    x->acc = &wk->acc;
    x->buf = &wk->buf[k];
    x->win = &wk->win[k];
    x->rare = span_rare;
    x->rare_arg = a;
    x->w = quiet;
}

/* What a worker took: one span, or two walked at once. */
typedef struct taken {
    worker *wk;
    uint32_t span[2]; /* the second UINT32_MAX when there is none */
    bool told[2];     /* span_done called */
} taken;

static void taken_done(void *arg, int k, jp_err rc)
{
    taken *tk = arg;
    tk->told[k] = true;
    span_done(tk->wk->tm, tk->span[k], rc == JP_OK);
}

static void taken_walk(void *arg)
{
    taken *tk = arg;
    worker *wk = tk->wk;
    jfr_team *tm = wk->tm;
    span_arg a[2];
    jfr_where quiet[2];
    jfr_walk x[2];
    uint32_t i = tk->span[0], j = tk->span[1];
    span_walk(wk, 0, i, &a[0], &quiet[0], &x[0]);
    if (j == UINT32_MAX) {
        taken_done(tk, 0, jfr_events_range(&x[0], tm->spans[i].start, tm->spans[i].end));
        return;
    }
    span_walk(wk, 1, j, &a[1], &quiet[1], &x[1]);
    const uint64_t pos[2] = {tm->spans[i].start, tm->spans[j].start};
    const uint64_t end[2] = {tm->spans[i].end, tm->spans[j].end};
    ranges_two(x, pos, end, taken_done, tk);
}

static void work(worker *wk)
{
    jfr_team *tm = wk->tm;
    taken tk = {.wk = wk};
    while (take(tm, &tk.span[0], &tk.span[1])) {
        tk.told[0] = tk.told[1] = false;
        if (!tm->x.src->map) {
            taken_walk(&tk);
            continue;
        }
        bool whole = jfr_guarded(taken_walk, &tk);
        for (int k = 0; k < 2; k++) {
            jfr_win_unmap(&wk->win[k]);
            /* A window faulted (the file was cut): the serial walk says so. */
            if (!whole && !tk.told[k] && tk.span[k] != UINT32_MAX)
                span_done(tm, tk.span[k], false);
        }
    }
}

static void *team_main(void *arg)
{
    worker *wk = arg;
    jfr_team *tm = wk->tm;
    uint64_t seen = 0;
    pthread_mutex_lock(&tm->tmu);
    for (;;) {
        while (!tm->quit && tm->gen == seen)
            pthread_cond_wait(&tm->go, &tm->tmu);
        if (tm->quit)
            break;
        seen = tm->gen;
        pthread_mutex_unlock(&tm->tmu);
        work(wk);
        pthread_mutex_lock(&tm->tmu);
        tm->ran++;
        pthread_cond_broadcast(&tm->idle);
    }
    pthread_mutex_unlock(&tm->tmu);
    return NULL;
}

jfr_team *jfr_team_new(int jobs)
{
    jfr_team *tm = jp_xcalloc(1, sizeof *tm);
    tm->jobs = jobs < 1 ? 1 : jobs;
    tm->wk = jp_xcalloc((size_t)tm->jobs, sizeof *tm->wk);
    pthread_mutex_init(&tm->mu, NULL);
    pthread_cond_init(&tm->moved, NULL);
    pthread_mutex_init(&tm->tmu, NULL);
    pthread_cond_init(&tm->go, NULL);
    pthread_cond_init(&tm->idle, NULL);
    atomic_init(&tm->frontier, 0);
    atomic_init(&tm->bad, false);
    for (int i = 0; i < tm->jobs; i++) {
        tm->wk[i].tm = tm;
        jfr_acc_init(&tm->wk[i].acc);
    }
    /* The calling thread is worker 0; the others start with the first run. */
    tm->started = 1;
    return tm;
}

void jfr_team_free(jfr_team *tm)
{
    if (!tm)
        return;
    pthread_mutex_lock(&tm->tmu);
    tm->quit = true;
    pthread_cond_broadcast(&tm->go);
    pthread_mutex_unlock(&tm->tmu);
    for (int i = 1; i < tm->started; i++)
        pthread_join(tm->wk[i].tid, NULL);
    for (int i = 0; i < tm->jobs; i++) {
        jfr_acc_cleanup(&tm->wk[i].acc);
        jfr_bytes_cleanup(&tm->wk[i].buf[0]);
        jfr_bytes_cleanup(&tm->wk[i].buf[1]);
        jfr_win_unmap(&tm->wk[i].win[0]);
        jfr_win_unmap(&tm->wk[i].win[1]);
    }
    for (uint32_t i = 0; i < tm->spans_cap; i++) {
        free(tm->spans[i].q);
        jfr_bytes_cleanup(&tm->spans[i].copies);
    }
    free(tm->spans);
    jfr_scan_cleanup(&tm->sc);
    free(tm->wk);
    pthread_cond_destroy(&tm->moved);
    pthread_mutex_destroy(&tm->mu);
    pthread_cond_destroy(&tm->idle);
    pthread_cond_destroy(&tm->go);
    pthread_mutex_destroy(&tm->tmu);
    free(tm);
}

static void add_span(jfr_team *tm, uint64_t start)
{
    if (tm->nspans == tm->spans_cap) {
        uint32_t cap = tm->spans_cap ? 2 * tm->spans_cap : 16;
        tm->spans = jp_xrealloc(tm->spans, cap * sizeof *tm->spans);
        memset(tm->spans + tm->spans_cap, 0, (cap - tm->spans_cap) * sizeof *tm->spans);
        tm->spans_cap = cap;
    }
    span *s = &tm->spans[tm->nspans++];
    s->start = start;
    s->nq = s->used = 0;
    s->direct = s->ok = s->done = false;
}

/* Cuts [start, end) into spans of about the same size: four per thread,
 * of at least `block` and at most JFR_SPAN_MAX bytes, each starting where
 * jfr_scan_event finds an event (a nominal start where it finds none is
 * dropped: the span before grows over it). */
static void plan_spans(jfr_team *tm, uint64_t start, uint64_t end, size_t block)
{
    uint64_t len = end - start, size = len / (4 * (uint64_t)tm->jobs);
    size = size > JFR_SPAN_MAX ? JFR_SPAN_MAX : size;
    size = size < block ? block : size;
    uint64_t n = (len + size - 1) / size;
    tm->nspans = 0;
    add_span(tm, start);
    jfr_scan_init(&tm->sc, tm->x.t->meta);
    for (uint64_t k = 1; k < n; k++) {
        uint64_t s = jfr_scan_event(&tm->sc, tm->x.src, start + len / n * k, end);
        if (s > tm->spans[tm->nspans - 1].start && s < end)
            add_span(tm, s);
    }
    for (uint32_t i = 0; i + 1 < tm->nspans; i++)
        tm->spans[i].end = tm->spans[i + 1].start;
    tm->spans[tm->nspans - 1].end = end;
}

bool jfr_split_run(jfr_team *tm, const jfr_walk *x, uint64_t start, uint64_t end, size_t block)
{
    tm->x = *x;
    plan_spans(tm, start, end, block ? block : 1);
    tm->next = 0;
    atomic_store(&tm->frontier, 0);
    atomic_store(&tm->bad, false);
    const jfr_evtab *t = x->t;
    /* Every worker counts this chunk's range of stack keys, also one that
     * will get no span: a worker left on the last chunk's range would make
     * the merge below switch the chunk's lanes to that range, emptying what
     * the workers merged before it. */
    for (int i = 0; i < tm->jobs; i++)
        if (tm->wk[i].acc.dense_n != t->dense_n || tm->wk[i].acc.dense_base != t->dense_base)
            jfr_acc_dense(&tm->wk[i].acc, t->dense_base, t->dense_n);
    pthread_mutex_lock(&tm->tmu);
    while (tm->started < tm->jobs &&
           pthread_create(&tm->wk[tm->started].tid, NULL, team_main, &tm->wk[tm->started]) == 0)
        tm->started++;
    tm->ran = 0;
    tm->gen++;
    pthread_cond_broadcast(&tm->go);
    pthread_mutex_unlock(&tm->tmu);
    work(&tm->wk[0]);
    pthread_mutex_lock(&tm->tmu);
    while (tm->ran < tm->started - 1)
        pthread_cond_wait(&tm->idle, &tm->tmu);
    pthread_mutex_unlock(&tm->tmu);
    bool ok = !atomic_load(&tm->bad) && atomic_load(&tm->frontier) == tm->nspans;
    if (ok) {
        /* Everything into worker 0's accumulator, which then trades places
         * with the caller's: the caller's lanes are not made and filled
         * only to hold a copy (a MB of fresh pages each, dear on some
         * VMs). The caller's own events (rare rows) are merged in too. */
        for (int i = 1; i < tm->jobs; i++)
            jfr_acc_merge(&tm->wk[0].acc, &tm->wk[i].acc);
        jfr_acc_merge(&tm->wk[0].acc, x->acc);
        jfr_acc swap = *x->acc;
        *x->acc = tm->wk[0].acc;
        tm->wk[0].acc = swap;
    }
    for (int i = 0; i < tm->jobs; i++)
        jfr_acc_clear(&tm->wk[i].acc);
    return ok;
}
