/* ch_stage.c - the ClickHouse store's new stacks: staged by the writes that
 * find them, stored by the writer of the next group.
 *
 * A write asks the cache of stored stacks (st->known_stacks) about the
 * stacks its windows use, on the request's thread. One that is neither
 * stored nor staged is encoded there (its jprof_stacks row) into the stage,
 * once however many writes use it, and its frames go into the frames cache
 * (a stack id names its frames, so they are right before the row is
 * stored). The write then needs nothing more of its batch's stacks and can
 * let the batch go while it waits (ch_write.c).
 *
 * A group with a write that found a stack not stored flushes the stage
 * before its commit markers (ch_stage_flush): one writer at a time takes
 * everything staged and INSERTs it in one block, in the table's order. On
 * success the stacks are stored; on failure the rows go back into the stage
 * for the next flush, and the group fails. So once a flush returns JP_OK,
 * every stack staged before it began is stored: taken by this flush, or by
 * an earlier one that held stacks_write_mu (stored, or put back before it
 * let go). A write's commit therefore never makes a window visible whose
 * stack is not in jprof_stacks.
 *
 * ClickHouse is not asked which stacks it has (an IN list of thousands of
 * ids costs it more than the rows): a stack written again (after a restart,
 * by another replica, after the cache was cleared) merges away in
 * jprof_stacks (ReplacingMergeTree), and readers take any one row per stack
 * meanwhile. */
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "server/ch_int.h"

#define CH_KNOWN_STACKS_MAX (4u << 20) /* cache entries before it is cleared */
#define CH_STACK_COLS "day, stack_id, truncated, depth, frames, kinds"

/* A staged stack's row: where it is in the stage's RowBinary. */
typedef struct ch_staged {
    uint64_t key, id;
    size_t chunk, off, len;
} ch_staged;

/* The RowBinary of the staged stacks is kept in the pieces the writes
 * encoded (one per write that staged any) and sent from there, in the
 * table's order, without a copy: a day's first stacks are megabytes, and on
 * this kind of VM every page of fresh memory costs a page fault of 14-60 us
 * (a shared buffer grown by doubling, then the INSERT's body, were ~3 times
 * the rows in new pages on the path every first write waited on). */
struct ch_stage {
    pthread_mutex_t mu; /* everything below */
    jp_strbuf *chunks;  /* RowBinary of the staged stacks */
    size_t nchunks, chunks_cap;
    ch_staged *s;
    size_t n, cap;
    /* key -> 1: staged, or being written by a flush; 0: no longer */
    jp_u64map staged;
};

static uint64_t ch_stack_key(int64_t day, uint64_t id)
{
    return jp_hash_combine(jp_hash_u64((uint64_t)day), id);
}

/* A stack's row for the stacks table (CH_STACK_COLS). */
static void ch_encode_stack(jp_strbuf *o, const jp_batch *b, int64_t day, uint32_t si)
{
    const jp_batch_stack *s = &b->stacks[si];
    ch_rb_day(o, day);
    ch_rb_u64(o, s->id);
    ch_rb_u8(o, s->truncated);
    ch_rb_u32(o, s->depth);
    jp_strbuf_put_varint(o, s->depth);
    for (uint32_t f = 0; f < s->depth; f++)
        ch_rb_cstr(o, b->frames[s->frames[f]]);
    /* the frame kinds, root first (none when the agent sent none) */
    jp_strbuf_put_varint(o, b->nframe_kinds ? s->depth : 0);
    for (uint32_t f = 0; b->nframe_kinds && f < s->depth; f++)
        ch_rb_u8(o, (uint64_t)jp_batch_frame_kind(b, s->frames[f]));
}

void ch_stage_init(ch_store *st)
{
    ch_stage *g = jp_xcalloc(1, sizeof *g);
    pthread_mutex_init(&g->mu, NULL);
    jp_u64map_init(&g->staged);
    st->stage = g;
}

void ch_stage_cleanup(ch_store *st)
{
    ch_stage *g = st->stage;
    if (!g)
        return;
    for (size_t i = 0; i < g->nchunks; i++)
        jp_strbuf_cleanup(&g->chunks[i]);
    free(g->chunks);
    free(g->s);
    jp_u64map_cleanup(&g->staged);
    pthread_mutex_destroy(&g->mu);
    free(g);
    st->stage = NULL;
}

/* A stack the cache did not know when asked. */
typedef struct ch_miss {
    uint64_t key;
    int64_t day;
    uint32_t si;
} ch_miss;

/* The (day, stack) pairs of b's windows the cache does not know, each once;
 * the cache is asked under one read lock per batch. */
static size_t ch_stage_misses(ch_store *st, const jp_batch *b, const bool *skip, ch_miss **out)
{
    jp_u64map seen;
    jp_u64map_init(&seen);
    ch_miss *m = NULL;
    size_t n = 0, cap = 0;
    pthread_rwlock_rdlock(&st->stacks_lock);
    for (size_t i = 0; i < b->nwindows; i++) {
        if (skip && skip[i])
            continue;
        const jp_batch_window *win = &b->windows[i];
        int64_t day = store_day_of(win->start_ns);
        for (size_t k = 0; k < win->nrows; k++) {
            uint32_t si = win->rows[k].stack;
            uint64_t key = ch_stack_key(day, b->stacks[si].id), v;
            bool fresh;
            jp_u64map_upsert(&seen, key, 1, &fresh);
            if (!fresh || jp_u64map_get(&st->known_stacks, key, &v))
                continue;
            m = jp_xgrow(m, &cap, n + 1, sizeof *m);
            m[n++] = (ch_miss){.key = key, .day = day, .si = si};
        }
    }
    pthread_rwlock_unlock(&st->stacks_lock);
    jp_u64map_cleanup(&seen);
    *out = m;
    return n;
}

bool ch_stage_stacks(ch_store *st, const jp_batch *b, const bool *skip, uint64_t *fresh)
{
    ch_stage *g = st->stage;
    ch_miss *m;
    size_t n = ch_stage_misses(st, b, skip, &m);
    *fresh = 0;
    if (!n)
        return false;
    size_t mine = 0; /* m[0..mine) staged here */
    jp_strbuf rows;
    jp_strbuf_init(&rows, 0);
    pthread_mutex_lock(&g->mu);
    pthread_rwlock_rdlock(&st->stacks_lock); /* stored meanwhile? */
    for (size_t k = 0; k < n; k++) {
        uint64_t v;
        if ((jp_u64map_get(&g->staged, m[k].key, &v) && v) ||
            jp_u64map_get(&st->known_stacks, m[k].key, &v))
            continue;
        jp_u64map_put(&g->staged, m[k].key, 1);
        g->s = jp_xgrow(g->s, &g->cap, g->n + 1, sizeof *g->s);
        ch_staged *s = &g->s[g->n++];
        *s = (ch_staged){
            .key = m[k].key, .id = b->stacks[m[k].si].id, .chunk = g->nchunks, .off = rows.len};
        ch_encode_stack(&rows, b, m[k].day, m[k].si);
        s->len = rows.len - s->off;
        m[mine++] = m[k];
    }
    pthread_rwlock_unlock(&st->stacks_lock);
    if (mine) { /* the chunk the rows above point into */
        g->chunks = jp_xgrow(g->chunks, &g->chunks_cap, g->nchunks + 1, sizeof *g->chunks);
        g->chunks[g->nchunks++] = rows;
    } else {
        jp_strbuf_cleanup(&rows);
    }
    pthread_mutex_unlock(&g->mu);
    for (size_t k = 0; k < mine; k++)
        ch_frames_remember(st, b, m[k].si);
    free(m);
    *fresh = mine;
    return true;
}

static int ch_staged_cmp(const void *a, const void *b)
{
    uint64_t x = ((const ch_staged *)a)->id, y = ((const ch_staged *)b)->id;
    return (x > y) - (x < y);
}

/* What a flush took from the stage. */
typedef struct ch_taken {
    jp_strbuf *chunks;
    size_t nchunks;
    ch_staged *s;
    size_t n;
} ch_taken;

/* The stored stacks into the cache, out of the stage's set. */
static void ch_stage_stored(ch_store *st, const ch_taken *t)
{
    ch_stage *g = st->stage;
    pthread_rwlock_wrlock(&st->stacks_lock);
    if (st->known_stacks.count + t->n > CH_KNOWN_STACKS_MAX)
        jp_u64map_clear(&st->known_stacks);
    for (size_t i = 0; i < t->n; i++)
        jp_u64map_put(&st->known_stacks, t->s[i].key, 1);
    pthread_rwlock_unlock(&st->stacks_lock);
    pthread_mutex_lock(&g->mu);
    if (!g->n) /* nothing staged meanwhile: every key here is stored */
        jp_u64map_clear(&g->staged);
    else
        for (size_t i = 0; i < t->n; i++)
            jp_u64map_put(&g->staged, t->s[i].key, 0);
    pthread_mutex_unlock(&g->mu);
}

/* A failed flush's rows, back into the stage for the next one. */
static void ch_stage_putback(ch_store *st, const ch_taken *t)
{
    ch_stage *g = st->stage;
    pthread_mutex_lock(&g->mu);
    size_t base = g->nchunks;
    g->chunks = jp_xgrow(g->chunks, &g->chunks_cap, g->nchunks + t->nchunks, sizeof *g->chunks);
    for (size_t i = 0; i < t->nchunks; i++)
        g->chunks[g->nchunks++] = t->chunks[i]; /* moved: t's are not freed */
    g->s = jp_xgrow(g->s, &g->cap, g->n + t->n, sizeof *g->s);
    for (size_t i = 0; i < t->n; i++) {
        g->s[g->n] = t->s[i];
        g->s[g->n++].chunk += base;
    }
    pthread_mutex_unlock(&g->mu);
}

jp_err ch_stage_flush(ch_store *st, const char *settings, jp_error *err)
{
    ch_stage *g = st->stage;
    pthread_mutex_lock(&st->stacks_write_mu);
    pthread_mutex_lock(&g->mu);
    ch_taken t = {.chunks = g->chunks, .nchunks = g->nchunks, .s = g->s, .n = g->n};
    g->chunks = NULL;
    g->nchunks = g->chunks_cap = 0;
    g->s = NULL;
    g->n = g->cap = 0;
    pthread_mutex_unlock(&g->mu);
    jp_err rc = JP_OK;
    if (t.n) {
        /* in the table's order (ORDER BY stack_id), which ClickHouse then
         * need not sort (ch_write.c says why) */
        qsort(t.s, t.n, sizeof *t.s, ch_staged_cmp);
        ch_seg *seg = jp_xcalloc(t.n, sizeof *seg);
        ch_segs body = {.seg = seg, .n = t.n};
        for (size_t i = 0; i < t.n; i++) {
            seg[i] = (ch_seg){t.chunks[t.s[i].chunk].data + t.s[i].off, t.s[i].len};
            body.total += t.s[i].len;
        }
        rc = ch_insert_segs(st, "jprof_stacks", CH_STACK_COLS, "RowBinary", &body, settings, err);
        free(seg);
        if (rc) {
            ch_stage_putback(st, &t);
            t.nchunks = 0; /* the stage has them again */
        } else {
            ch_stage_stored(st, &t);
        }
    }
    pthread_mutex_unlock(&st->stacks_write_mu);
    for (size_t i = 0; i < t.nchunks; i++)
        jp_strbuf_cleanup(&t.chunks[i]);
    free(t.chunks);
    free(t.s);
    return rc;
}
