/* split.c - a chunk's events on several threads (see split.h). */
#include "jfr/split.h"

#include <pthread.h>
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
    const uint8_t *p, *end;
    rare_ev *rare;
    size_t nrare, cap;
    int state;
    bool bad; /* an event did not decode */
} piece;

typedef struct split {
    const jfr_evtab *t;
    const uint8_t *lim; /* end of the readable bytes */
    size_t block;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    piece *ring;
    uint32_t nring;
    uint64_t produced, taken, completed; /* block sequence numbers */
    bool eof;                            /* no more blocks will be cut */
    bool stop;                           /* damage: workers take nothing more */
    bool bad;
} split;

typedef struct worker {
    split *sp;
    jfr_acc acc;
    pthread_t tid;
} worker;

static jp_err queue_rare(void *arg, unsigned idx, const uint8_t *ev, const uint8_t *p,
                         const uint8_t *next)
{
    piece *b = arg;
    b->rare = jp_xgrow(b->rare, &b->cap, b->nrare + 1, sizeof *b->rare);
    b->rare[b->nrare++] = (rare_ev){.ev = ev, .p = p, .next = next, .idx = idx};
    return JP_OK;
}

static void *worker_main(void *arg)
{
    worker *wk = arg;
    split *sp = wk->sp;
    /* Workers' errors are not reported: damage is decoded again serially. */
    const jfr_where quiet = {0};
    pthread_mutex_lock(&sp->mu);
    for (;;) {
        while (!sp->stop && sp->taken == sp->produced && !sp->eof)
            pthread_cond_wait(&sp->work, &sp->mu);
        if (sp->stop || sp->taken == sp->produced)
            break;
        piece *b = &sp->ring[sp->taken++ % sp->nring];
        b->state = B_TAKEN;
        pthread_mutex_unlock(&sp->mu);
        jfr_run r = {.p = b->p,
                     .end = b->end,
                     .lim = sp->lim,
                     .rare = queue_rare,
                     .rare_arg = b,
                     .w = &quiet};
        bool bad = jfr_events_run(sp->t, &wk->acc, &r) != JP_OK;
        pthread_mutex_lock(&sp->mu);
        b->bad = bad;
        b->state = B_DONE;
        pthread_cond_broadcast(&sp->done);
    }
    pthread_mutex_unlock(&sp->mu);
    return NULL;
}

/* Walks sizes from p until at least `want` bytes are covered (or end).
 * NULL when a size does not check out. */
static const uint8_t *cut(const uint8_t *p, const uint8_t *end, size_t want)
{
    const uint8_t *lim = (size_t)(end - p) > want ? p + want : end;
    while (p < lim) {
        uint64_t size;
        const uint8_t *q = p;
        if (!jfr_varint(&q, end, &size) || size == 0 || size > (uint64_t)(end - p))
            return NULL;
        p += size;
    }
    return p;
}

/* Hands the rare events of a finished block to the callback, in order. */
static bool finish_block(split *sp, piece *b, jfr_rare_fn rare, void *rare_arg)
{
    bool ok = !b->bad;
    for (size_t i = 0; ok && i < b->nrare; i++) {
        const rare_ev *e = &b->rare[i];
        ok = rare(rare_arg, e->idx, e->ev, e->p, e->next) == JP_OK;
    }
    const jfr_ctx *c = sp->t->c;
    jfr_release(c, (size_t)(b->p - c->base), (size_t)(b->end - c->base));
    b->nrare = 0;
    return ok;
}

/* Cuts and publishes blocks while there is room; called unlocked. */
static void produce(split *sp, const uint8_t **pos, const uint8_t *end)
{
    for (;;) {
        pthread_mutex_lock(&sp->mu);
        bool room = !sp->bad && !sp->eof && sp->produced - sp->completed < sp->nring;
        pthread_mutex_unlock(&sp->mu);
        if (!room)
            return;
        const uint8_t *a = *pos, *b = cut(a, end, sp->block);
        pthread_mutex_lock(&sp->mu);
        if (!b) {
            sp->bad = sp->eof = true;
        } else {
            piece *bl = &sp->ring[sp->produced++ % sp->nring];
            bl->p = a;
            bl->end = b;
            bl->bad = false;
            bl->state = B_READY;
            *pos = b;
            sp->eof = b >= end;
        }
        pthread_cond_broadcast(&sp->work);
        pthread_mutex_unlock(&sp->mu);
    }
}

/* The calling thread: cuts blocks ahead of the workers and finishes them
 * in order. Returns when every block is finished or on damage. */
static void drive(split *sp, const uint8_t *p, const uint8_t *end, jfr_rare_fn rare, void *rare_arg)
{
    const uint8_t *pos = p;
    for (;;) {
        produce(sp, &pos, end);
        pthread_mutex_lock(&sp->mu);
        piece *b = &sp->ring[sp->completed % sp->nring];
        while (!sp->bad && sp->completed < sp->produced && b->state != B_DONE)
            pthread_cond_wait(&sp->done, &sp->mu);
        if (sp->bad || (sp->eof && sp->completed == sp->produced)) {
            pthread_mutex_unlock(&sp->mu);
            return;
        }
        pthread_mutex_unlock(&sp->mu);
        bool ok = finish_block(sp, b, rare, rare_arg);
        pthread_mutex_lock(&sp->mu);
        b->state = B_EMPTY;
        sp->completed++;
        if (!ok)
            sp->bad = true;
        pthread_mutex_unlock(&sp->mu);
    }
}

bool jfr_split_run(const jfr_evtab *t, jfr_acc *acc, const uint8_t *p, const uint8_t *end, int jobs,
                   size_t block, jfr_rare_fn rare, void *rare_arg)
{
    split sp = {.t = t, .lim = end, .block = block};
    sp.nring = (uint32_t)jobs * JFR_SPLIT_AHEAD;
    sp.ring = jp_xcalloc(sp.nring, sizeof *sp.ring);
    pthread_mutex_init(&sp.mu, NULL);
    pthread_cond_init(&sp.work, NULL);
    pthread_cond_init(&sp.done, NULL);
    worker *wk = jp_xcalloc((size_t)jobs, sizeof *wk);
    int started = 0;
    for (int i = 0; i < jobs; i++) {
        wk[started].sp = &sp;
        jfr_acc_init(&wk[started].acc);
        if (pthread_create(&wk[started].tid, NULL, worker_main, &wk[started]) == 0)
            started++;
    }
    if (started)
        drive(&sp, p, end, rare, rare_arg);
    else
        sp.bad = true;
    pthread_mutex_lock(&sp.mu);
    sp.stop = true;
    pthread_cond_broadcast(&sp.work);
    pthread_mutex_unlock(&sp.mu);
    for (int i = 0; i < started; i++)
        pthread_join(wk[i].tid, NULL);
    for (int i = 0; i < started; i++) {
        if (!sp.bad)
            jfr_acc_merge(acc, &wk[i].acc);
        jfr_acc_cleanup(&wk[i].acc);
    }
    for (uint32_t i = 0; i < sp.nring; i++)
        free(sp.ring[i].rare);
    free(sp.ring);
    free(wk);
    pthread_cond_destroy(&sp.done);
    pthread_cond_destroy(&sp.work);
    pthread_mutex_destroy(&sp.mu);
    return !sp.bad;
}
