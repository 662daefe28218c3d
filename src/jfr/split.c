/* split.c - a chunk's events on several threads (see split.h). */
#include "jfr/split.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

/* A rare event found by a worker, handed over later in file order. */
typedef struct rare_ev {
    const uint8_t *ev, *p, *next;
    unsigned idx;
} rare_ev;

enum { B_EMPTY = 0, B_READY, B_TAKEN, B_DONE };

typedef struct piece {
    const uint8_t *p, *end, *lim; /* the events, and the end of the readable bytes */
    jfr_bytes buf;                /* a file's piece: its bytes */
    rare_ev *rare;
    size_t nrare, cap;
    int state;
    bool bad; /* an event did not decode */
} piece;

/* Two locks: `cut` for the walk through the input (one thread cuts at a
 * time, whichever needs a piece: no thread waits for a dedicated
 * producer); `mu` for the ring and the in-order finish. A thread waiting
 * for a free slot holds `cut` (and waits on `mu`). */
typedef struct split {
    const jfr_evtab *t;
    const jfr_src *src;
    size_t block;
    jfr_rare_fn rare;
    void *rare_arg;
    pthread_mutex_t cut;
    uint64_t pos, end; /* input offsets: the next piece's first byte, the events' end */
    jfr_bytes carry;   /* a file: bytes read past the last piece's last whole event */
    size_t ncarry;
    uint64_t skipped; /* events passed over unread by the walk */
    bool eof;         /* nothing left to cut */
    pthread_mutex_t mu;
    pthread_cond_t freed;
    piece *ring;
    uint32_t nring;
    uint64_t produced, taken, finished; /* piece sequence numbers */
    bool bad;
} split;

typedef struct worker {
    split *sp;
    uint32_t want_ready; /* pieces to keep cut ahead: one per other thread */
    jfr_acc acc;
    pthread_t tid;
} worker;

/* The threads of one read, kept from chunk to chunk with their buffers
 * and accumulators: starting threads and touching fresh memory cost more
 * than a chunk of a few MB takes to decode. `gen` counts the runs; a
 * worker runs each once and reports it in `ran`. */
struct jfr_team {
    int jobs, started;
    worker *wk;
    split sp;
    pthread_mutex_t tmu;
    pthread_cond_t go, idle;
    uint64_t gen;
    int ran;
    bool quit;
};

static jp_err queue_rare(void *arg, unsigned idx, const uint8_t *ev, const uint8_t *p,
                         const uint8_t *next)
{
    piece *b = arg;
    b->rare = jp_xgrow(b->rare, &b->cap, b->nrare + 1, sizeof *b->rare);
    b->rare[b->nrare++] = (rare_ev){.ev = ev, .p = p, .next = next, .idx = idx};
    return JP_OK;
}

/* Walks sizes from p until at least `want` bytes are covered or an event
 * would run past `have` (the bytes at hand). `left` is what the events may
 * still take (to the end of the chunk). NULL when a size does not check
 * out. */
static const uint8_t *walk(const uint8_t *p, const uint8_t *have, uint64_t left, size_t want)
{
    const uint8_t *start = p, *lim = (size_t)(have - p) > want ? p + want : have;
    while (p < lim) {
        uint64_t size;
        const uint8_t *q = p;
        if (!jfr_varint(&q, have, &size))
            return (uint64_t)(have - start) < left ? p : NULL;
        if (size == 0 || size > left - (uint64_t)(p - start))
            return NULL;
        if (size > (uint64_t)(have - p))
            break;
        p += size;
    }
    return p;
}

/* The next piece of an input in memory: a slice of it. */
static bool cut_memory(split *sp, piece *b)
{
    const uint8_t *a = sp->src->mem + sp->pos, *end = sp->src->mem + sp->end;
    const uint8_t *e = walk(a, end, sp->end - sp->pos, sp->block);
    if (!e)
        return false;
    b->p = a;
    b->end = e;
    b->lim = end;
    sp->pos += (uint64_t)(e - a);
    return true;
}

/* The next piece of a file: the bytes carried over from the last piece and
 * what follows, up to the last whole event. An event longer than a piece
 * is passed over unread when it is not wanted (checkpoints), else read
 * whole. */
static bool cut_file(split *sp, piece *b)
{
    size_t want = sp->block;
    for (;;) {
        uint64_t left = sp->end - sp->pos;
        size_t n = left < want ? (size_t)left : want;
        if (n < sp->ncarry)
            n = sp->ncarry;
        jfr_bytes_reserve(&b->buf, n);
        if (sp->ncarry)
            memcpy(b->buf.data, sp->carry.data, sp->ncarry);
        const uint8_t *data = b->buf.data;
        if (n > sp->ncarry && jfr_src_get(sp->src, sp->pos + sp->ncarry, n - sp->ncarry, &b->buf,
                                          sp->ncarry, &data, NULL))
            return false;
        data = b->buf.data;
        const uint8_t *e = walk(data, data + n, left, n);
        if (!e)
            return false;
        if (e > data) {
            b->p = data;
            b->end = e;
            b->lim = data + n + JFR_SRC_PAD;
            sp->ncarry = (size_t)(data + n - e);
            jfr_bytes_reserve(&sp->carry, sp->ncarry);
            if (sp->ncarry)
                memcpy(sp->carry.data, e, sp->ncarry);
            sp->pos += (uint64_t)(e - data);
            return true;
        }
        const uint8_t *p = data;
        uint64_t size = 0, type = UINT64_MAX;
        if (!jfr_varint(&p, data + n, &size)) {
            want = n + 16; /* even its size is cut */
            continue;
        }
        if (!jfr_varint(&p, data + n, &type))
            type = UINT64_MAX;
        if (type != UINT64_MAX && !jfr_evtab_wanted(sp->t, type)) {
            sp->skipped += type > 1;
            sp->pos += size;
            sp->ncarry = 0;
            if (sp->pos >= sp->end)
                return false; /* nothing left to make a piece of: done below */
            want = sp->block;
            continue;
        }
        if (size > JFR_SPLIT_MAX_EVENT)
            return false;
        want = type == UINT64_MAX ? n + 16 : (size_t)size;
    }
}

/* Hands the rare events of a decoded piece to the callback, in order. */
static bool finish_piece(split *sp, piece *b)
{
    bool ok = !b->bad;
    for (size_t i = 0; ok && i < b->nrare; i++) {
        const rare_ev *e = &b->rare[i];
        ok = sp->rare(sp->rare_arg, e->idx, e->ev, e->p, e->next) == JP_OK;
    }
    b->nrare = 0;
    return ok;
}

/* Cuts one more piece into the ring, waiting for a free slot when `wait`.
 * Called with `cut` held. */
static void cut_one(split *sp, bool wait)
{
    pthread_mutex_lock(&sp->mu);
    while (wait && !sp->bad && !sp->eof && sp->produced - sp->finished >= sp->nring)
        pthread_cond_wait(&sp->freed, &sp->mu);
    bool go = !sp->bad && !sp->eof && sp->produced - sp->finished < sp->nring;
    piece *b = &sp->ring[sp->produced % sp->nring];
    pthread_mutex_unlock(&sp->mu);
    if (!go)
        return;
    bool ok = sp->src->mem ? cut_memory(sp, b) : cut_file(sp, b);
    /* A file whose last event was passed over ends without a piece. */
    bool last = !ok && !sp->src->mem && sp->pos >= sp->end;
    pthread_mutex_lock(&sp->mu);
    if (ok) {
        b->bad = false;
        b->state = B_READY;
        sp->produced++;
    } else {
        sp->bad = sp->bad || !last;
    }
    sp->eof = !ok || sp->pos >= sp->end;
    pthread_cond_broadcast(&sp->freed);
    pthread_mutex_unlock(&sp->mu);
}

/* Takes the next piece to decode; NULL when there is none (the end, or
 * damage). The cutting is done by whoever needs a piece; a thread that has
 * one cuts another for the others only when nobody else is cutting, so
 * threads seldom wait for each other. */
static piece *take(split *sp, uint32_t want_ready)
{
    for (;;) {
        piece *b = NULL;
        pthread_mutex_lock(&sp->mu);
        if (!sp->bad && sp->taken < sp->produced) {
            b = &sp->ring[sp->taken++ % sp->nring];
            b->state = B_TAKEN;
        }
        bool over = sp->bad || (sp->eof && sp->taken == sp->produced);
        bool more = !sp->eof && sp->produced - sp->taken < want_ready;
        pthread_mutex_unlock(&sp->mu);
        if (b) {
            if (more && pthread_mutex_trylock(&sp->cut) == 0) {
                cut_one(sp, false);
                pthread_mutex_unlock(&sp->cut);
            }
            return b;
        }
        if (over)
            return NULL;
        pthread_mutex_lock(&sp->cut);
        pthread_mutex_lock(&sp->mu);
        bool none = sp->taken == sp->produced;
        pthread_mutex_unlock(&sp->mu);
        if (none)
            cut_one(sp, true);
        pthread_mutex_unlock(&sp->cut);
    }
}

/* Marks b decoded and finishes every piece decoded in order so far. */
static void done(split *sp, piece *b, bool bad)
{
    pthread_mutex_lock(&sp->mu);
    b->bad = bad;
    b->state = B_DONE;
    while (!sp->bad && sp->finished < sp->produced) {
        piece *f = &sp->ring[sp->finished % sp->nring];
        if (f->state != B_DONE)
            break;
        if (!finish_piece(sp, f))
            sp->bad = true;
        f->state = B_EMPTY;
        sp->finished++;
    }
    pthread_cond_broadcast(&sp->freed);
    pthread_mutex_unlock(&sp->mu);
}

static void *work(void *arg)
{
    worker *wk = arg;
    split *sp = wk->sp;
    /* Workers' errors are not reported: damage is decoded again serially. */
    const jfr_where quiet = {0};
    piece *b;
    while ((b = take(sp, wk->want_ready))) {
        jfr_run r = {.p = b->p,
                     .end = b->end,
                     .lim = b->lim,
                     .rare = queue_rare,
                     .rare_arg = b,
                     .w = &quiet};
        done(sp, b, jfr_events_run(sp->t, &wk->acc, &r) != JP_OK);
    }
    return NULL;
}

static void *team_main(void *arg)
{
    worker *wk = arg;
    jfr_team *tm = (jfr_team *)((char *)wk->sp - offsetof(jfr_team, sp));
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
    tm->jobs = jobs < 2 ? 2 : jobs;
    tm->wk = jp_xcalloc((size_t)tm->jobs, sizeof *tm->wk);
    split *sp = &tm->sp;
    sp->nring = (uint32_t)tm->jobs * JFR_SPLIT_AHEAD;
    sp->ring = jp_xcalloc(sp->nring, sizeof *sp->ring);
    pthread_mutex_init(&sp->cut, NULL);
    pthread_mutex_init(&sp->mu, NULL);
    pthread_cond_init(&sp->freed, NULL);
    pthread_mutex_init(&tm->tmu, NULL);
    pthread_cond_init(&tm->go, NULL);
    pthread_cond_init(&tm->idle, NULL);
    for (int i = 0; i < tm->jobs; i++) {
        tm->wk[i].sp = sp;
        tm->wk[i].want_ready = (uint32_t)tm->jobs - 1;
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
    split *sp = &tm->sp;
    for (int i = 0; i < tm->jobs; i++)
        jfr_acc_cleanup(&tm->wk[i].acc);
    for (uint32_t i = 0; i < sp->nring; i++) {
        free(sp->ring[i].rare);
        jfr_bytes_cleanup(&sp->ring[i].buf);
    }
    jfr_bytes_cleanup(&sp->carry);
    free(sp->ring);
    free(tm->wk);
    pthread_cond_destroy(&sp->freed);
    pthread_mutex_destroy(&sp->mu);
    pthread_mutex_destroy(&sp->cut);
    pthread_cond_destroy(&tm->idle);
    pthread_cond_destroy(&tm->go);
    pthread_mutex_destroy(&tm->tmu);
    free(tm);
}

bool jfr_split_run(jfr_team *tm, const jfr_evtab *t, jfr_acc *acc, const jfr_src *src,
                   uint64_t start, uint64_t end, size_t block, jfr_rare_fn rare, void *rare_arg)
{
    split *sp = &tm->sp;
    sp->t = t;
    sp->src = src;
    sp->block = block;
    sp->rare = rare;
    sp->rare_arg = rare_arg;
    sp->pos = start;
    sp->end = end;
    sp->ncarry = 0;
    sp->skipped = 0;
    sp->eof = sp->bad = false;
    sp->produced = sp->taken = sp->finished = 0;
    for (uint32_t i = 0; i < sp->nring; i++) {
        sp->ring[i].state = B_EMPTY;
        sp->ring[i].nrare = 0;
    }
    /* Every worker counts this chunk's range of stack keys, also one that
     * will get no piece: a worker left on the last chunk's range would make
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
    bool ok = !sp->bad && sp->finished == sp->produced;
    for (int i = 0; i < tm->jobs; i++) {
        if (ok)
            jfr_acc_merge(acc, &tm->wk[i].acc);
        jfr_acc_clear(&tm->wk[i].acc);
    }
    acc->events_read += ok ? sp->skipped : 0;
    return ok;
}
