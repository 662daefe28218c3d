/* The embedded store's batch writer: one batch's windows, stacks, threads,
 * statuses and documents into one day file, inside the writer thread's
 * transaction (store_sqlite.c runs the group commit around it). */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <zstd.h>

#include "base/failinj.h"
#include "base/xalloc.h"
#include "server/sqlite_int.h"
#include "wire/gc_json.h"

/* ---- writing one batch's share of one day ---- */

static int64_t sq_batch_key(const char *id)
{
    return (int64_t)jp_hash_bytes(id, strlen(id));
}

void sq_bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_text(s, i, "", 0, SQLITE_STATIC);
}

jp_err sq_step_done(sq_day *d, sqlite3_stmt *s, const char *what, jp_error *err)
{
    if (jp_fail_inject("sqlite step")) {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        return jp_error_set(err, JP_ERR_IO, "sqlite: %s: injected failure (JPROF_FAIL_AT)", what);
    }
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return sq_db_fail(d->db, what, err);
    return JP_OK;
}

static uint64_t sq_ident_hash(const jp_batch_target *t)
{
    const char *f[] = {t->cluster, t->workload, t->container, t->node, t->jvm};
    uint64_t h = jp_hash_u64((uint64_t)t->pid) ^ (uint64_t)t->jvm_start_ns;
    for (size_t i = 0; i < 5; i++)
        h = jp_hash_combine(h, f[i] ? jp_hash_bytes(f[i], strlen(f[i])) : 7);
    return h ? h : 1;
}

/* Row id of a target in this day, inserting it or refreshing its identity. */
static jp_err sq_target_id(sq_day *d, const jp_batch_target *t, int64_t *id, jp_error *err)
{
    uint64_t key = sq_target_key(t->ns, t->service, t->pod);
    uint64_t ident = sq_ident_hash(t), v;
    /* targets holds key -> id, and key ^ salt -> identity hash of the last upsert */
    uint64_t ikey = key ^ 0x1d3e7a11ULL, seen;
    *id = 0; /* set on every path: the callers' analysis cannot see into sq_db_fail() */
    if (jp_u64map_get(&d->targets, key, &v) && jp_u64map_get(&d->targets, ikey, &seen) &&
        seen == ident) {
        *id = (int64_t)v;
        return JP_OK;
    }
    sqlite3_stmt *s = d->st[ST_TARGET];
    sq_bind_text(s, 1, t->ns);
    sq_bind_text(s, 2, t->service);
    sq_bind_text(s, 3, t->pod);
    sq_bind_text(s, 4, t->cluster);
    sq_bind_text(s, 5, t->workload);
    sq_bind_text(s, 6, t->container);
    sq_bind_text(s, 7, t->node);
    sqlite3_bind_int64(s, 8, t->pid);
    sqlite3_bind_int64(s, 9, t->jvm_start_ns);
    sq_bind_text(s, 10, t->jvm);
    if (jp_fail_inject("sqlite step")) {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
        return jp_error_set(err, JP_ERR_IO,
                            "sqlite: target upsert: injected failure (JPROF_FAIL_AT)");
    }
    int rc = sqlite3_step(s);
    bool got = rc == SQLITE_ROW;
    if (got)
        *id = sqlite3_column_int64(s, 0);
    while (rc == SQLITE_ROW)
        rc = sqlite3_step(s);
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    if (rc != SQLITE_DONE)
        return sq_db_fail(d->db, "target upsert", err);
    if (!got) /* never stored under an id we do not have */
        return jp_error_set(err, JP_ERR_INTERNAL, "target upsert returned no row id");
    jp_u64map_put(&d->targets, key, (uint64_t)*id);
    jp_u64map_put(&d->targets, ikey, ident);
    return JP_OK;
}

static jp_err sq_put_stack(sq_day *d, const jp_batch *b, uint32_t si, jp_strbuf *tmp,
                           uint64_t *new_stacks, jp_error *err)
{
    const jp_batch_stack *s = &b->stacks[si];
    uint64_t one;
    if (jp_u64map_get(&d->stacks, s->id, &one))
        return JP_OK;
    /* frames as names joined by '\n' (the decoder turned control characters into '?') */
    jp_strbuf_reset(tmp);
    for (uint32_t k = 0; k < s->depth; k++) {
        if (k)
            jp_strbuf_putc(tmp, '\n');
        jp_strbuf_puts(tmp, b->frames[s->frames[k]]);
    }
    sqlite3_stmt *st = d->st[ST_STACK];
    sqlite3_bind_int64(st, 1, (int64_t)s->id);
    sqlite3_bind_int(st, 2, s->truncated);
    sqlite3_bind_int(st, 3, (int)s->depth);
    sqlite3_bind_blob(st, 4, tmp->data ? tmp->data : "", (int)tmp->len, SQLITE_STATIC);
    /* one byte per frame, root first: the frame kinds for colouring */
    uint8_t kinds[JP_BATCH_DEPTH_MAX];
    if (b->nframe_kinds && s->depth <= JP_BATCH_DEPTH_MAX) {
        for (uint32_t k = 0; k < s->depth; k++)
            kinds[k] = (uint8_t)jp_batch_frame_kind(b, s->frames[k]);
        sqlite3_bind_blob(st, 5, kinds, (int)s->depth, SQLITE_TRANSIENT);
    }
    jp_err rc = sq_step_done(d, st, "stack insert", err);
    if (!rc) {
        jp_u64map_put(&d->stacks, s->id, 1);
        (*new_stacks) += (uint64_t)sqlite3_changes(d->db);
    }
    return rc;
}

static jp_err sq_put_thread(sq_day *d, const char *name, uint64_t tid, jp_error *err)
{
    uint64_t one;
    if (jp_u64map_get(&d->threads, tid, &one))
        return JP_OK;
    sqlite3_stmt *st = d->st[ST_THREAD];
    sqlite3_bind_int64(st, 1, (int64_t)tid);
    sq_bind_text(st, 2, name);
    jp_err rc = sq_step_done(d, st, "thread insert", err);
    if (!rc)
        jp_u64map_put(&d->threads, tid, 1);
    return rc;
}

/* Stores one prepared window (its stacks and thread names first). */
static jp_err sq_put_window(sq_day *d, const sq_req *rq, size_t wi, int64_t bkey, jp_strbuf *tmp,
                            store_write_result *res, jp_error *err)
{
    const jp_batch *b = rq->b;
    const jp_batch_window *w = &b->windows[wi];
    const wb_window *wb = &rq->blobs[wi];
    int64_t target;
    jp_err rc = sq_target_id(d, &w->target, &target, err);
    for (size_t r = 0; r < w->nrows && !rc; r++)
        rc = sq_put_stack(d, b, w->rows[r].stack, tmp, &res->new_stacks, err);
    for (size_t i = 0; i < wb->nthreads && !rc; i++)
        rc = sq_put_thread(d, b->threads[wb->threads[i]], rq->tids[wb->threads[i]], err);
    if (rc)
        return rc;
    sqlite3_stmt *st = d->st[ST_WINDOW];
    sqlite3_bind_int64(st, 1, bkey);
    sqlite3_bind_int64(st, 2, (int64_t)wi);
    sqlite3_bind_int64(st, 3, target);
    sqlite3_bind_int(st, 4, (int)w->kind);
    sqlite3_bind_int64(st, 5, w->start_ns);
    sqlite3_bind_int64(st, 6, w->end_ns);
    sqlite3_bind_int64(st, 7, w->period_ns);
    sqlite3_bind_int64(st, 8, (int64_t)w->events);
    sqlite3_bind_int(st, 9, (w->dropped ? 1 : 0) | (w->truncated ? 2 : 0));
    sqlite3_bind_int64(st, 10, (int64_t)w->nrows);
    sqlite3_bind_int64(st, 11, (int64_t)wb->samples);
    sqlite3_bind_int64(st, 12, (int64_t)wb->value);
    sqlite3_bind_blob(st, 13, wb->z, (int)wb->zlen, SQLITE_STATIC);
    rc = sq_step_done(d, st, "window insert", err);
    if (!rc && sqlite3_changes(d->db) == 1) {
        /* a late window makes its bucket's rollup stale: drop it, it is rebuilt */
        sqlite3_stmt *del = d->st[ST_ROLLUP_DEL];
        sq_bind_text(del, 1, w->target.ns);
        sq_bind_text(del, 2, w->target.service);
        sqlite3_bind_int(del, 3, (int)w->kind);
        sqlite3_bind_int64(del, 4, w->start_ns / SQ_ROLLUP_NS);
        rc = sq_step_done(d, del, "rollup delete", err);
    }
    if (!rc) {
        res->windows++;
        res->stack_rows += w->nrows;
    }
    return rc;
}

static jp_err sq_put_doc(sq_day *d, int which, const jp_batch_doc *doc, int64_t bkey, size_t idx,
                         jp_error *err)
{
    int64_t target;
    jp_err rc = sq_target_id(d, &doc->target, &target, err);
    if (rc)
        return rc;
    sqlite3_stmt *st = d->st[which];
    sqlite3_bind_int64(st, 1, bkey);
    sqlite3_bind_int64(st, 2, (int64_t)idx);
    sqlite3_bind_int64(st, 3, target);
    sqlite3_bind_int64(st, 4, doc->time_ns);
    sqlite3_bind_text(st, 5, doc->json, (int)doc->len, SQLITE_STATIC);
    return sq_step_done(d, st, "document insert", err);
}

static jp_err sq_put_status(sq_day *d, const jp_batch_status *s, int64_t bkey, size_t idx,
                            jp_error *err)
{
    int64_t target;
    jp_err rc = sq_target_id(d, &s->target, &target, err);
    if (rc)
        return rc;
    sqlite3_stmt *st = d->st[ST_STATUS];
    sqlite3_bind_int64(st, 1, bkey);
    sqlite3_bind_int64(st, 2, (int64_t)idx);
    sqlite3_bind_int64(st, 3, target);
    sqlite3_bind_int64(st, 4, s->time_ns);
    sq_bind_text(st, 5, s->state);
    if (s->reason)
        sq_bind_text(st, 6, s->reason);
    if (s->message)
        sq_bind_text(st, 7, s->message);
    if (s->engine)
        sq_bind_text(st, 8, s->engine);
    if (s->mode)
        sq_bind_text(st, 9, s->mode);
    if (s->until_ns)
        sqlite3_bind_int64(st, 10, s->until_ns);
    return sq_step_done(d, st, "status insert", err);
}

/* One GC summary: the record's JSON (wire/gc_json.h) with its window. */
static jp_err sq_put_gc(sq_day *d, const jp_batch_gc *g, int64_t bkey, size_t idx, jp_error *err)
{
    int64_t target;
    jp_err rc = sq_target_id(d, &g->target, &target, err);
    if (rc)
        return rc;
    json_t *j = jp_gc_window_json(&g->w);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!text)
        return jp_error_set(err, JP_ERR_NOMEM, "GC summary: cannot encode");
    sqlite3_stmt *st = d->st[ST_GC];
    sqlite3_bind_int64(st, 1, bkey);
    sqlite3_bind_int64(st, 2, (int64_t)idx);
    sqlite3_bind_int64(st, 3, target);
    sqlite3_bind_int64(st, 4, g->w.s.from_ns);
    sqlite3_bind_int64(st, 5, g->w.s.to_ns);
    sqlite3_bind_text(st, 6, text, -1, SQLITE_TRANSIENT);
    free(text);
    return sq_step_done(d, st, "GC summary insert", err);
}

/* A document goes into its own day if that day is retained and not beyond
 * tomorrow (a skewed clock must not create files retention never removes). */
bool sq_doc_day_ok(int64_t day, int64_t now, int retention)
{
    return store_day_retained(day, now, retention) && day <= store_day_of(now) + 1;
}

/* Everything of batch r that belongs to day d. */
jp_err sq_write_part(sq_store *st, sq_day *d, sq_req *r, int64_t now, jp_strbuf *tmp, jp_error *err)
{
    const jp_batch *b = r->b;
    int64_t bkey = sq_batch_key(b->id);
    jp_err rc = JP_OK;
    for (size_t i = 0; i < b->nwindows && !rc; i++) {
        if ((r->opt && r->opt->skip_windows && r->opt->skip_windows[i]) ||
            store_day_of(b->windows[i].start_ns) != d->day)
            continue;
        rc = sq_put_window(d, r, i, bkey, tmp, r->res, err);
    }
    for (size_t i = 0; i < b->nstatuses && !rc; i++)
        if (store_day_of(b->statuses[i].time_ns) == d->day &&
            sq_doc_day_ok(d->day, now, st->retention_days)) {
            rc = sq_put_status(d, &b->statuses[i], bkey, i, err);
            r->res->docs++;
        }
    for (size_t i = 0; i < b->nsnapshots && !rc; i++)
        if (store_day_of(b->snapshots[i].time_ns) == d->day &&
            sq_doc_day_ok(d->day, now, st->retention_days)) {
            rc = sq_put_doc(d, ST_SNAPSHOT, &b->snapshots[i], bkey, i, err);
            r->res->docs++;
        }
    for (size_t i = 0; i < b->ndeadlocks && !rc; i++)
        if (store_day_of(b->deadlocks[i].time_ns) == d->day &&
            sq_doc_day_ok(d->day, now, st->retention_days)) {
            rc = sq_put_doc(d, ST_DEADLOCK, &b->deadlocks[i], bkey, i, err);
            r->res->docs++;
        }
    for (size_t i = 0; i < b->nheaps && !rc; i++)
        if (store_day_of(b->heaps[i].time_ns) == d->day &&
            sq_doc_day_ok(d->day, now, st->retention_days)) {
            rc = sq_put_doc(d, ST_HEAP, &b->heaps[i], bkey, i, err);
            r->res->docs++;
        }
    for (size_t i = 0; i < b->ngcs && !rc; i++)
        if (store_day_of(b->gcs[i].w.s.from_ns) == d->day &&
            sq_doc_day_ok(d->day, now, st->retention_days)) {
            rc = sq_put_gc(d, &b->gcs[i], bkey, i, err);
            r->res->docs++;
        }
    return rc;
}
