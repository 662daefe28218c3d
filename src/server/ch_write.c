/* ch_write.c - the ClickHouse store's write path: batches in, large
 * RowBinary blocks out.
 *
 * Each write_batch caller encodes its own rows (every table's RowBinary
 * block, its roll-up share and its commit markers, and stages the stacks no
 * write stored yet: ch_stage.c) on its own thread, lets its caller free the
 * decoded batch (only the encoded rows wait), then queues them and waits. A writer thread takes
 * everything queued (a group) and writes it with one INSERT per table, so ClickHouse gets a few
 * large blocks instead of many small parts however many agents upload at once: the group grows with
 * the load (a group-commit, as the embedded store's). Two writers overlap under load, but the
 * second starts a group beside a busy one only when the queue is worth a group (ch_group_ready):
 * every group costs ClickHouse a part per table, dozens of files to create and later merge, which
 * was most of its CPU. Each block goes in its table's sort order, so ClickHouse need not sort (and
 * copy) it. A caller returns only once its group's commit markers are written ("acknowledged means
 * stored"), or with the group's error.
 *
 * Atomic batches and deduplication without transactions and with no state
 * in this process (so replicas can share one ClickHouse):
 *   1. At once, each on its own connection (ch_before_commit): SELECT the
 *      group's batch ids' commit markers (jprof_ingest, outcome 0, ordered
 *      by batch id: point lookups), INSERT the staged stacks, and
 *      INSERT samples, windows, statuses, snapshots, deadlocks, heaps and GC
 *      summaries, every row tagged with its write's attempt id: milliseconds
 *      since the epoch << 22 | 22 random bits, so attempts made later
 *      compare larger. Readers ignore these rows until step 2: they see only
 *      rows whose attempt is the smallest committed attempt of its batch id
 *      (ch_visible in ch_int.h).
 *   2. INSERT the markers of every write (ch_commit). A write whose id had
 *      a complete attempt already (all its parts' markers, below) is
 *      answered "duplicate" and logged so, but commits its own attempt as
 *      well, which stays invisible behind the earlier one (ch_marker_rows
 *      says why). From here on each batch is visible at once.
 *   3. Add the batches answered "accepted" to the in-memory roll-up
 *      (ch_rollup.c; a minute whose roll-up does not add up is read raw).
 * A group that fails anywhere before 2 leaves nothing visible and records no
 * batch id, so the agents' retries write it again cleanly. Within one
 * process, writes of the same batch id are serialised (the second waits for
 * the first, then finds its marker), so exactly one is accepted. Across
 * replicas the acknowledgement alone can race: two replicas writing the same
 * batch id at the same moment both answer "accepted" when both look for
 * markers before either commits (the data still counts once).
 *
 * Parts. A batch's rows are split by target (namespace, pod): each part has
 * its own marker row, naming the part and how many the batch has. In a
 * cluster a part's rows and its marker go to the same shard (both tables are
 * sharded by namespace and pod), so each shard decides visibility from its
 * own markers. An attempt is complete when all its parts' markers are
 * there; one that landed on some shards only (a shard failed mid-insert) is
 * not a duplicate, and the retry writes every part again: where both landed
 * the shard shows one of the two (same rows), elsewhere the retry's.
 *
 * A status/snapshot/deadlock/GC summary whose day is not retained, or is
 * after tomorrow, is refused (docs_refused), as in the embedded store. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/ch_int.h"
#include "server/winblob.h"
#include "wire/gc_json.h"

#define CH_REJECTS_MAX 4096
#define CH_IN_BYTES (96u << 10)     /* of one IN list (max_query_size is 256 KiB) */
#define CH_QUEUE_MAX 4096           /* writes waiting for the writer: more -> 429 */
#define CH_GROUP_MAX 2048           /* writes in one group */
#define CH_GROUP_BYTES (192u << 20) /* RowBinary bytes in one group */
#define CH_ROLLUP_CHECK_S 2         /* an idle writer looks at the roll-up this often */
/* A writer starts a group beside a busy one only when the queue is worth a
 * group of its own (every group costs ClickHouse a part per table: files to
 * create, then merges), or its oldest write has waited this long. */
#define CH_GROUP_EAGER 32
#define CH_GROUP_EAGER_BYTES (16u << 20)
#define CH_GROUP_WAIT_NS (100 * JP_NS_PER_MS)

/* The tables a write fills, in the order the writer inserts them. */
enum {
    CT_WINDOWS,
    CT_STATUSES,
    CT_SNAPSHOTS,
    CT_DEADLOCKS,
    CT_HEAPS,
    CT_GC,
    CT_DATA, /* the tables above are written before the markers */
    CT_MARKERS = CT_DATA,
    CT_N
};

#define CH_IDENT_COLS "cluster, workload, container, node, pid, jvm_start_ns, jvm"
#define CH_DOC_COLS "day, ns, service, pod, time_ns, json, " CH_IDENT_COLS ", attempt"

static const struct {
    const char *table, *cols;
} ch_tabs[CT_N] = {
    {"jprof_windows",
     "day, ns, service, pod, kind, start_ns, end_ns, period_ns, events, dropped, "
     "truncated, nrows, samples, value, " CH_IDENT_COLS ", attempt, threads, blob"},
    {"jprof_statuses",
     "day, ns, service, pod, time_ns, state, reason, message, engine, " CH_IDENT_COLS
     ", attempt, mode, until_ns"},
    {"jprof_snapshots", CH_DOC_COLS},
    {"jprof_deadlocks", CH_DOC_COLS},
    {"jprof_heaps", CH_DOC_COLS},
    {"jprof_gc", CH_DOC_COLS ", end_ns, collections, pauses, pause_total_ns, pause_max_ns"},
    {"jprof_ingest",
     "day, received_ns, batch_id, attempt, outcome, collector, version, reason, "
     "windows, rows, bytes, heartbeat, q_batches, q_bytes, q_now, q_oldest, ns, pod, "
     "part, parts"},
};

/* One part of a batch: the rows of one (namespace, pod). */
typedef struct ch_part {
    const char *ns, *pod;
    uint64_t windows, rows;
} ch_part;

/* A window's row in its write's RowBinary, with its table's sort key
 * (jprof_windows: ORDER BY ns, service, kind, start_ns); ns and service are
 * read from the row itself (the batch is gone by then). */
typedef struct ch_wrow {
    int64_t start_ns;
    size_t off, len;
    size_t ns_end, ns_len, svc_end, svc_len; /* where the strings end in the row */
    uint8_t kind;
} ch_wrow;

/* A write as it waits for its group: what it encoded, and copies of what
 * the writer needs of its batch (the caller frees the batch's bulk once it
 * is encoded: store_write_opts.release). */
struct ch_wreq {
    const jp_batch *b; /* NULL once encoded */
    char *id;          /* the batch's */
    const store_write_opts *opt;
    store_write_result *res;
    int64_t now;
    uint64_t attempt;
    ch_part *parts;
    size_t nparts, parts_cap;
    jp_u64map part_idx;   /* hash(ns, pod) -> index + 1 (probing on collisions) */
    jp_strbuf rows[CT_N]; /* RowBinary of each table */
    ch_wrow *wrows;       /* where each window's row is in rows[CT_WINDOWS] */
    size_t nwrows, wrows_cap;
    jp_strbuf dup_row; /* its ingestion-log row if it turns out a duplicate */
    ch_rshare *share;  /* its share of the roll-up */
    bool stage_wait;   /* a stack it needs is staged, not stored yet (ch_stage.c) */
    size_t bytes;      /* of all the above, for the group's size */
    int64_t queued_ns; /* when it joined the queue (monotonic) */
    /* the writer's answer */
    uint64_t best; /* the smallest complete attempt ClickHouse has of the id, 0 none */
    bool duplicate, committed, done;
    jp_err rc;
    jp_error err;
    ch_wreq *next;
};

/* ---- encoding (the caller's thread) ---- */

static uint64_t ch_attempt_new(ch_store *st)
{
    pthread_mutex_lock(&st->mu);
    uint64_t seq = ++st->attempt_seq;
    pthread_mutex_unlock(&st->mu);
    uint64_t r = jp_hash_combine(jp_hash_u64((uint64_t)jp_time_mono_ns()),
                                 jp_hash_combine((uint64_t)getpid(), seq));
    uint64_t ms = (uint64_t)(jp_time_now_ns() / 1000000);
    return (ms << 22) | (r & ((1u << 22) - 1));
}

static bool ch_window_skipped(const ch_wreq *r, size_t i)
{
    return r->opt && r->opt->skip_windows && r->opt->skip_windows[i];
}

/* A document goes into its own day if that day is retained and not beyond
 * tomorrow (a skewed clock must not create partitions retention ignores). */
static bool ch_doc_day_ok(const ch_store *st, int64_t now, int64_t t_ns)
{
    int64_t day = store_day_of(t_ns);
    return store_day_retained(day, now, st->retention_days) && day <= store_day_of(now) + 1;
}

/* The part of a target, added when new. */
static ch_part *ch_part_of(ch_wreq *r, const jp_batch_target *t)
{
    const char *ns = t->ns ? t->ns : "", *pod = t->pod ? t->pod : "";
    uint64_t key = jp_hash_combine(jp_hash_bytes(ns, strlen(ns)), jp_hash_bytes(pod, strlen(pod)));
    uint64_t v;
    while (jp_u64map_get(&r->part_idx, key, &v)) {
        ch_part *p = &r->parts[v - 1];
        if (!strcmp(p->ns, ns) && !strcmp(p->pod, pod))
            return p;
        key++;
    }
    r->parts = jp_xgrow(r->parts, &r->parts_cap, r->nparts + 1, sizeof *r->parts);
    ch_part *p = &r->parts[r->nparts++];
    *p = (ch_part){.ns = ns, .pod = pod};
    jp_u64map_put(&r->part_idx, key, r->nparts);
    return p;
}

/* day, ns, service, pod */
static void ch_rb_target_key(jp_strbuf *o, int64_t day, const jp_batch_target *t)
{
    ch_rb_day(o, day);
    ch_rb_cstr(o, t->ns);
    ch_rb_cstr(o, t->service);
    ch_rb_cstr(o, t->pod);
}

/* the identity columns (CH_IDENT_COLS) */
static void ch_rb_ident(jp_strbuf *o, const jp_batch_target *t)
{
    ch_rb_cstr(o, t->cluster);
    ch_rb_cstr(o, t->workload);
    ch_rb_cstr(o, t->container);
    ch_rb_cstr(o, t->node);
    ch_rb_i64(o, t->pid);
    ch_rb_i64(o, t->jvm_start_ns);
    ch_rb_cstr(o, t->jvm);
}

/* One row per window: its figures, and its stack rows as the blob both
 * stores keep (winblob.h) with the names of its threads beside it. The
 * blob is made here, on the request's thread; ClickHouse stores one string
 * per window instead of a row per stack. */
static jp_err ch_encode_windows(ch_wreq *r, ch_store *st, jp_error *err)
{
    const jp_batch *b = r->b;
    uint64_t fresh;
    r->stage_wait = ch_stage_stacks(st, b, r->opt ? r->opt->skip_windows : NULL, &fresh);
    r->res->new_stacks = fresh;
    uint64_t *tids = wb_thread_ids(b);
    jp_err rc = JP_OK;
    for (size_t i = 0; i < b->nwindows && !rc; i++) {
        if (ch_window_skipped(r, i))
            continue;
        const jp_batch_window *win = &b->windows[i];
        int64_t day = store_day_of(win->start_ns);
        wb_window wb;
        if ((rc = wb_window_encode(b, i, tids, &wb, err)))
            break;
        jp_strbuf *o = &r->rows[CT_WINDOWS];
        r->wrows = jp_xgrow(r->wrows, &r->wrows_cap, r->nwrows + 1, sizeof *r->wrows);
        ch_wrow *wr = &r->wrows[r->nwrows++];
        *wr = (ch_wrow){.start_ns = win->start_ns, .off = o->len, .kind = (uint8_t)win->kind};
        /* ch_rb_target_key, noting where ns and service are */
        ch_rb_day(o, day);
        ch_rb_cstr(o, win->target.ns);
        wr->ns_end = o->len;
        wr->ns_len = win->target.ns ? strlen(win->target.ns) : 0;
        ch_rb_cstr(o, win->target.service);
        wr->svc_end = o->len;
        wr->svc_len = win->target.service ? strlen(win->target.service) : 0;
        ch_rb_cstr(o, win->target.pod);
        ch_rb_u8(o, (uint64_t)win->kind);
        ch_rb_i64(o, win->start_ns);
        ch_rb_i64(o, win->end_ns);
        ch_rb_i64(o, win->period_ns);
        ch_rb_u64(o, win->events);
        ch_rb_u8(o, win->dropped);
        ch_rb_u8(o, win->truncated);
        ch_rb_u64(o, win->nrows);
        ch_rb_u64(o, wb.samples);
        ch_rb_u64(o, wb.value);
        ch_rb_ident(o, &win->target);
        ch_rb_u64(o, r->attempt);
        jp_strbuf_put_varint(o, wb.nthreads);
        for (size_t t = 0; t < wb.nthreads; t++)
            ch_rb_cstr(o, b->threads[wb.threads[t]]);
        ch_rb_str(o, wb.z, wb.zlen);
        wr->len = o->len - wr->off;
        ch_rshare_window(r->share, b, i, tids, &wb); /* takes the blob */
        wb_window_cleanup(&wb);
        ch_part *p = ch_part_of(r, &win->target);
        p->windows++;
        p->rows += win->nrows;
        r->res->windows++;
        r->res->stack_rows += win->nrows;
    }
    free(tids);
    return rc;
}

static void ch_encode_statuses(ch_wreq *r, ch_store *st)
{
    const jp_batch *b = r->b;
    jp_strbuf *o = &r->rows[CT_STATUSES];
    for (size_t i = 0; i < b->nstatuses; i++) {
        const jp_batch_status *s = &b->statuses[i];
        if (!ch_doc_day_ok(st, r->now, s->time_ns)) {
            r->res->docs_refused++;
            continue;
        }
        ch_rb_target_key(o, store_day_of(s->time_ns), &s->target);
        ch_rb_i64(o, s->time_ns);
        ch_rb_cstr(o, s->state);
        ch_rb_cstr(o, s->reason);
        ch_rb_cstr(o, s->message);
        ch_rb_cstr(o, s->engine);
        ch_rb_ident(o, &s->target);
        ch_rb_u64(o, r->attempt);
        ch_rb_cstr(o, s->mode);
        ch_rb_i64(o, s->until_ns);
        ch_part_of(r, &s->target);
        r->res->docs++;
    }
}

/* The common head of a document row (CH_DOC_COLS). */
static void ch_rb_doc(jp_strbuf *o, const ch_wreq *r, const jp_batch_target *t, int64_t time_ns,
                      const char *json, size_t len)
{
    ch_rb_target_key(o, store_day_of(time_ns), t);
    ch_rb_i64(o, time_ns);
    ch_rb_str(o, json, len);
    ch_rb_ident(o, t);
    ch_rb_u64(o, r->attempt);
}

static jp_err ch_encode_docs(ch_wreq *r, ch_store *st, jp_error *err)
{
    const jp_batch *b = r->b;
    const jp_batch_doc *lists[3] = {b->snapshots, b->deadlocks, b->heaps};
    size_t counts[3] = {b->nsnapshots, b->ndeadlocks, b->nheaps};
    const int tables[3] = {CT_SNAPSHOTS, CT_DEADLOCKS, CT_HEAPS};
    for (int l = 0; l < 3; l++)
        for (size_t i = 0; i < counts[l]; i++) {
            const jp_batch_doc *d = &lists[l][i];
            if (!ch_doc_day_ok(st, r->now, d->time_ns)) {
                r->res->docs_refused++;
                continue;
            }
            ch_rb_doc(&r->rows[tables[l]], r, &d->target, d->time_ns, d->json, d->len);
            ch_part_of(r, &d->target);
            r->res->docs++;
        }
    for (size_t i = 0; i < b->ngcs; i++) {
        const jp_batch_gc *g = &b->gcs[i];
        const jp_gc_summary *gs = &g->w.s;
        if (!ch_doc_day_ok(st, r->now, gs->from_ns)) {
            r->res->docs_refused++;
            continue;
        }
        json_t *j = jp_gc_window_json(&g->w);
        char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        if (!text)
            return jp_error_set(err, JP_ERR_NOMEM, "GC summary: cannot encode");
        jp_strbuf *o = &r->rows[CT_GC];
        ch_rb_doc(o, r, &g->target, gs->from_ns, text, strlen(text));
        free(text);
        ch_rb_i64(o, gs->to_ns);
        ch_rb_u64(o, gs->collections);
        ch_rb_u64(o, gs->pauses);
        ch_rb_i64(o, gs->pause_total_ns);
        ch_rb_i64(o, gs->pause_max_ns);
        ch_part_of(r, &g->target);
        r->res->docs++;
    }
    return JP_OK;
}

static int ch_part_cmp(const void *a, const void *b)
{
    const ch_part *x = a, *y = b;
    int c = strcmp(x->ns, y->ns);
    return c ? c : strcmp(x->pod, y->pod);
}

/* One ingestion-log row (outcome 0 accepted = a commit marker, 1 duplicate,
 * 2 rejected). The batch-wide figures (bytes, heartbeat, the agent's queue)
 * travel on part 0 only; q_oldest -1 says "not reported" (queries skip the
 * row, as the embedded store's NULL). */
static void ch_rb_ingest(jp_strbuf *o, int64_t received, const jp_batch *b, uint64_t attempt,
                         int outcome, const char *reason, const ch_part *p, uint32_t part,
                         uint32_t parts, uint64_t bytes)
{
    bool head = part == 0;
    ch_rb_day(o, store_day_of(received));
    ch_rb_i64(o, received);
    ch_rb_cstr(o, b ? b->id : NULL);
    ch_rb_u64(o, attempt);
    ch_rb_u8(o, (uint64_t)outcome);
    ch_rb_cstr(o, b ? b->collector : NULL);
    ch_rb_cstr(o, b ? b->collector_version : NULL);
    ch_rb_cstr(o, reason);
    ch_rb_u64(o, p ? p->windows : 0);
    ch_rb_u64(o, p ? p->rows : 0);
    ch_rb_u64(o, head ? bytes : 0);
    ch_rb_u8(o, head && b ? b->heartbeat : 0);
    ch_rb_u64(o, head && b ? b->queue_dropped_batches : 0);
    ch_rb_u64(o, head && b ? b->queue_dropped_bytes : 0);
    ch_rb_u64(o, head && b ? b->queue_bytes : 0);
    ch_rb_i64(o, head && b && b->has_queue ? b->queue_oldest_dropped_ns : -1);
    ch_rb_cstr(o, p ? p->ns : NULL);
    ch_rb_cstr(o, p ? p->pod : NULL);
    ch_rb_u32(o, part);
    ch_rb_u32(o, parts);
}

/* Everything a write sends, encoded on the caller's thread. */
static jp_err ch_encode(ch_wreq *r, ch_store *st, jp_error *err)
{
    r->attempt = ch_attempt_new(st);
    r->share = ch_rshare_new();
    jp_err rc = ch_encode_windows(r, st, err);
    if (rc)
        return rc;
    ch_encode_statuses(r, st);
    rc = ch_encode_docs(r, st, err);
    if (rc)
        return rc;
    /* parts in a stable order: a retry of the batch numbers them alike */
    if (r->nparts > 1)
        qsort(r->parts, r->nparts, sizeof *r->parts, ch_part_cmp);
    ch_part none = {.ns = "", .pod = ""};
    size_t n = r->nparts ? r->nparts : 1;
    for (size_t i = 0; i < n; i++)
        ch_rb_ingest(&r->rows[CT_MARKERS], r->now, r->b, r->attempt, 0, NULL,
                     r->nparts ? &r->parts[i] : &none, (uint32_t)i, (uint32_t)n,
                     r->opt ? r->opt->body_bytes : 0);
    /* what the writer needs of the batch, copied: the batch may go now */
    r->id = jp_xstrdup(r->b->id);
    ch_rb_ingest(&r->dup_row, r->now, r->b, 0, 1, NULL, NULL, 0, 1,
                 r->opt ? r->opt->body_bytes : 0);
    for (int t = 0; t < CT_N; t++)
        r->bytes += r->rows[t].len;
    return JP_OK;
}

static void ch_wreq_init(ch_wreq *r, const jp_batch *b, const store_write_opts *opt,
                         store_write_result *res)
{
    memset(r, 0, sizeof *r);
    r->b = b;
    r->opt = opt;
    r->res = res;
    r->now = store_now_ns();
    jp_u64map_init(&r->part_idx);
    for (int t = 0; t < CT_N; t++)
        jp_strbuf_init(&r->rows[t], 0);
    jp_strbuf_init(&r->dup_row, 0);
    jp_error_init(&r->err);
}

static void ch_wreq_cleanup(ch_wreq *r)
{
    free(r->parts);
    jp_u64map_cleanup(&r->part_idx);
    for (int t = 0; t < CT_N; t++)
        jp_strbuf_cleanup(&r->rows[t]);
    free(r->wrows);
    free(r->id);
    jp_strbuf_cleanup(&r->dup_row);
    ch_rshare_free(r->share);
}

/* ---- the writers: one group each at a time ---- */

typedef struct ch_group {
    ch_store *st;
    ch_wreq **r;
    size_t n;
    jp_u64map ids;        /* hash(batch id) -> index + 1 (probing on collisions) */
    const char *settings; /* of every INSERT */
} ch_group;

static bool ch_live(const ch_wreq *r)
{
    return !r->duplicate && r->rc == JP_OK;
}

static ch_wreq *ch_group_find(ch_group *g, const char *id, size_t len)
{
    uint64_t key = jp_hash_bytes(id, len), v;
    while (jp_u64map_get(&g->ids, key, &v)) {
        ch_wreq *r = g->r[v - 1];
        if (strlen(r->id) == len && !memcmp(r->id, id, len))
            return r;
        key++;
    }
    return NULL;
}

/* batch_id, attempt, count(), max(parts): a complete attempt is a candidate */
static bool ch_marker_row(json_t *row, void *ctx)
{
    size_t len;
    const char *id = ch_str(row, 0, &len);
    ch_wreq *r = id ? ch_group_find(ctx, id, len) : NULL;
    uint64_t attempt = ch_u64(row, 1);
    if (r && ch_u64(row, 2) >= ch_u64(row, 3) && (!r->best || attempt < r->best))
        r->best = attempt;
    return true;
}

/* Sets best of every write from ClickHouse's commit markers, asking for the
 * ids in IN lists of bounded size. */
static jp_err ch_markers(ch_group *g, jp_strbuf *q, jp_error *err)
{
    jp_err rc = JP_OK;
    size_t i = 0;
    while (i < g->n && !rc) {
        jp_strbuf_reset(q);
        jp_strbuf_puts(q, "SELECT batch_id, attempt, count(), max(parts) FROM jprof_ingest "
                          "WHERE outcome = 0 AND batch_id IN (");
        size_t k = 0;
        for (; i < g->n && q->len < CH_IN_BYTES; i++) {
            g->r[i]->best = 0;
            jp_strbuf_puts(q, k++ ? ", " : "");
            ch_sql_str(q, g->r[i]->id);
        }
        jp_strbuf_puts(q, ") GROUP BY batch_id, attempt");
        ch_result res;
        ch_select_opts o = {.use_db = true, .settings = g->st->marker_settings};
        rc = ch_select_with(g->st, q->data, &o, ch_marker_row, g, &res, err);
    }
    return rc;
}

/* A write whose id ClickHouse has (another attempt is committed): answered
 * as a duplicate; its own rows are never visible. */
static void ch_mark_duplicate(ch_wreq *r)
{
    memset(r->res, 0, sizeof *r->res);
    r->res->duplicate = true;
    r->duplicate = true;
}

/* A window's row and the write it is in. */
typedef struct ch_wref {
    const ch_wrow *w;
    const char *data;
} ch_wref;

/* Byte order, then the shorter first: strcmp's order, and ClickHouse's. */
static int ch_bytes_cmp(const char *x, size_t xlen, const char *y, size_t ylen)
{
    int c = memcmp(x, y, xlen < ylen ? xlen : ylen);
    return c ? c : (xlen > ylen) - (xlen < ylen);
}

static int ch_wref_cmp(const void *a, const void *b)
{
    const ch_wref *p = a, *q = b;
    const ch_wrow *x = p->w, *y = q->w;
    int c = ch_bytes_cmp(p->data + x->ns_end - x->ns_len, x->ns_len,
                         q->data + y->ns_end - y->ns_len, y->ns_len);
    if (!c)
        c = ch_bytes_cmp(p->data + x->svc_end - x->svc_len, x->svc_len,
                         q->data + y->svc_end - y->svc_len, y->svc_len);
    if (!c)
        c = (x->kind > y->kind) - (x->kind < y->kind);
    if (!c)
        c = (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
    return c;
}

/* The windows of every live write in their table's order: ClickHouse sorts
 * each block it inserts by the table's key unless the block is sorted
 * already, and that sort copies every column, the blobs too. */
static void ch_group_windows(ch_group *g, jp_strbuf *rows)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++)
        n += ch_live(g->r[i]) ? g->r[i]->nwrows : 0;
    ch_wref *refs = jp_xcalloc(n ? n : 1, sizeof *refs);
    size_t k = 0;
    for (size_t i = 0; i < g->n; i++) {
        const ch_wreq *r = g->r[i];
        for (size_t j = 0; ch_live(r) && j < r->nwrows; j++)
            refs[k++] = (ch_wref){.w = &r->wrows[j], .data = r->rows[CT_WINDOWS].data};
    }
    qsort(refs, n, sizeof *refs, ch_wref_cmp);
    for (size_t i = 0; i < n; i++)
        jp_strbuf_append(rows, refs[i].data + refs[i].w->off, refs[i].w->len);
    free(refs);
}

/* One table's rows of every live write, as one block. */
static void ch_group_rows(ch_group *g, int t, jp_strbuf *rows)
{
    if (t == CT_WINDOWS) {
        ch_group_windows(g, rows);
        return;
    }
    for (size_t i = 0; i < g->n; i++)
        if (ch_live(g->r[i]) && g->r[i]->rows[t].len)
            jp_strbuf_append(rows, g->r[i]->rows[t].data, g->r[i]->rows[t].len);
}

/* What runs before the commit, each on its own connection at once: the
 * data tables' INSERTs, the new stacks, and the look for markers of the
 * same batch ids (committed by an earlier write, or by another replica). */
enum { CK_STACKS = CT_N, CK_MARKERS, CK_N };

typedef struct ch_task {
    ch_group *g;
    pthread_t th;
    jp_strbuf rows, q;
    int what; /* a data table, CK_STACKS or CK_MARKERS */
    jp_err rc;
    jp_error err;
    bool thread;
} ch_task;

static void *ch_task_run(void *arg)
{
    ch_task *k = arg;
    ch_group *g = k->g;
    if (k->what == CK_MARKERS) {
        k->rc = ch_markers(g, &k->q, &k->err);
    } else if (k->what == CK_STACKS) {
        k->rc = ch_stage_flush(g->st, g->settings, &k->err);
    } else {
        ch_group_rows(g, k->what, &k->rows);
        if (k->rows.len)
            k->rc = ch_insert_fmt(g->st, ch_tabs[k->what].table, ch_tabs[k->what].cols, "RowBinary",
                                  &k->rows, g->settings, &k->err);
    }
    return NULL;
}

static jp_err ch_before_commit(ch_group *g, jp_error *err)
{
    ch_task k[CK_N];
    int n = 0;
    for (int w = 0; w < CK_N; w++) {
        if (w >= CT_DATA && w < CK_STACKS)
            continue; /* the markers and the roll-up come later */
        bool any = w == CK_MARKERS;
        for (size_t i = 0; !any && i < g->n; i++)
            any = w == CK_STACKS ? g->r[i]->stage_wait : g->r[i]->rows[w].len > 0;
        if (!any)
            continue;
        k[n] = (ch_task){.g = g, .what = w};
        jp_strbuf_init(&k[n].rows, 0);
        jp_strbuf_init(&k[n].q, 0);
        jp_error_init(&k[n].err);
        n++;
    }
    /* the last task runs on this thread; a task whose thread cannot start too */
    for (int i = 0; i < n - 1; i++)
        k[i].thread = pthread_create(&k[i].th, NULL, ch_task_run, &k[i]) == 0;
    for (int i = 0; i < n; i++)
        if (!k[i].thread)
            ch_task_run(&k[i]);
    jp_err rc = JP_OK;
    for (int i = 0; i < n; i++) {
        if (k[i].thread)
            pthread_join(k[i].th, NULL);
        if (k[i].rc && !rc) {
            rc = k[i].rc;
            if (err)
                *err = k[i].err;
        }
        jp_strbuf_cleanup(&k[i].rows);
        jp_strbuf_cleanup(&k[i].q);
    }
    return rc;
}

/* Writes in the order of their batch ids. */
static int ch_wreq_id_cmp(const void *a, const void *b)
{
    return strcmp((*(ch_wreq *const *)a)->id, (*(ch_wreq *const *)b)->id);
}

/* The commit markers of every write, and a log row of each duplicate.
 *
 * A duplicate commits its own attempt too (its rows are written already,
 * step 1), which readers ignore while the earlier attempt's markers are
 * there. They may not stay: an INSERT of markers that ClickHouse answered
 * with "unknown status" (code 319, ZooKeeper lost mid-insert) leaves its
 * part on one replica, where the next look for markers finds it, and
 * ClickHouse removes that part later when ZooKeeper never heard of it.
 * Answering "duplicate" on such markers alone lost acknowledged batches
 * (test_clickhouse_cluster, about 1 run in 5 with ZooKeeper killed); with
 * the retry's own markers written and confirmed first, the batch stays
 * visible whichever attempt survives. */
static void ch_marker_rows(ch_group *g, jp_strbuf *rows)
{
    /* in the table's order (ORDER BY batch_id, attempt: a duplicate's log
     * row, attempt 0, before its markers), so ClickHouse need not sort */
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    ch_wreq **by_id = jp_xcalloc(g->n, sizeof *by_id);
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    memcpy(by_id, g->r, g->n * sizeof *by_id);
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    qsort(by_id, g->n, sizeof *by_id, ch_wreq_id_cmp);
    for (size_t i = 0; i < g->n; i++) {
        ch_wreq *r = by_id[i];
        if (r->rc != JP_OK)
            continue;
        if (r->duplicate)
            jp_strbuf_append(rows, r->dup_row.data, r->dup_row.len);
        jp_strbuf_append(rows, r->rows[CT_MARKERS].data, r->rows[CT_MARKERS].len);
    }
    free(by_id);
}

/* The commit: the markers of every write, a log row of each duplicate. */
static jp_err ch_commit(ch_group *g, jp_error *err)
{
    jp_strbuf rows;
    jp_strbuf_init(&rows, 0);
    ch_marker_rows(g, &rows);
    jp_err rc = ch_insert_fmt(g->st, "jprof_ingest", ch_tabs[CT_MARKERS].cols, "RowBinary", &rows,
                              g->settings, err);
    jp_strbuf_cleanup(&rows);
    return rc;
}

/* The steps of the file's header for one group; each write's rc says how
 * it ended. */
static void ch_group_write(ch_group *g)
{
    jp_error e;
    jp_error_init(&e);
    jp_err rc = ch_before_commit(g, &e);
    for (size_t i = 0; !rc && i < g->n; i++)
        if (g->r[i]->best)
            ch_mark_duplicate(g->r[i]);
    if (!rc)
        rc = ch_commit(g, &e);
    if (rc) {
        for (size_t i = 0; i < g->n; i++) {
            g->r[i]->rc = rc;
            g->r[i]->err = e;
        }
        return;
    }
    size_t live = 0;
    for (size_t i = 0; i < g->n; i++) {
        ch_wreq *r = g->r[i];
        r->committed = ch_live(r);
        live += r->committed;
        if (r->committed)
            ch_rollup_add(g->st, r->share);
    }
    pthread_mutex_lock(&g->st->mu);
    g->st->stats.commits += live > 0;
    g->st->flushes++;
    pthread_mutex_unlock(&g->st->mu);
}

/* Whether a writer should take the queue now (under st->mu). An idle store
 * writes at once; beside a busy writer a second group starts only when it
 * is large enough or its first write has waited CH_GROUP_WAIT_NS, so two
 * writers overlap under load without cutting the queue into small groups.
 * *wait_ns: how long until the oldest write's wait is up. */
static bool ch_group_ready(const ch_store *st, int64_t *wait_ns)
{
    *wait_ns = 0;
    if (!st->wq_head)
        return false;
    if (st->stopping || !st->writers_busy || st->wq_len >= CH_GROUP_EAGER ||
        st->wq_bytes >= CH_GROUP_EAGER_BYTES)
        return true;
    int64_t left = st->wq_head->queued_ns + CH_GROUP_WAIT_NS - jp_time_mono_ns();
    *wait_ns = left;
    return left <= 0;
}

/* Waits (under st->mu) until a group is ready or the store stops; an idle
 * writer flushes the roll-up of minutes that are over now and then. */
static void ch_writer_wait(ch_store *st)
{
    int64_t wait_ns;
    while (!ch_group_ready(st, &wait_ns) && !st->stopping) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = wait_ns > 0 ? wait_ns : CH_ROLLUP_CHECK_S * JP_NS_PER_SEC;
        ts.tv_sec += (time_t)(ns / JP_NS_PER_SEC);
        ts.tv_nsec += (long)(ns % JP_NS_PER_SEC);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&st->wq_work, &st->mu, &ts) != 0 && !st->wq_head) {
            pthread_mutex_unlock(&st->mu);
            ch_rollup_flush(st, false);
            pthread_mutex_lock(&st->mu);
        }
    }
}

static void *ch_writer_main(void *arg)
{
    ch_store *st = arg;
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    ch_wreq **group = jp_xcalloc(CH_GROUP_MAX, sizeof *group);
    ch_group g = {.st = st, .r = group, .settings = st->insert_settings};
    jp_u64map_init(&g.ids);
    pthread_mutex_lock(&st->mu);
    for (;;) {
        ch_writer_wait(st);
        if (!st->wq_head)
            break; /* stopping, and nothing left */
        size_t n = 0, bytes = 0;
        while (st->wq_head && n < CH_GROUP_MAX &&
               (!n || bytes + st->wq_head->bytes <= CH_GROUP_BYTES)) {
            bytes += st->wq_head->bytes;
            group[n++] = st->wq_head;
            st->wq_head = st->wq_head->next;
            st->wq_len--;
        }
        st->wq_bytes -= bytes;
        if (!st->wq_head)
            st->wq_tail = NULL;
        st->writers_busy++;
        pthread_mutex_unlock(&st->mu);
        g.n = n;
        jp_u64map_clear(&g.ids);
        for (size_t i = 0; i < n; i++) {
            uint64_t key = jp_hash_bytes(group[i]->id, strlen(group[i]->id)), v;
            while (jp_u64map_get(&g.ids, key, &v))
                key++;
            jp_u64map_put(&g.ids, key, i + 1);
        }
        ch_group_write(&g);
        bool ok = group[0]->rc == JP_OK;
        pthread_mutex_lock(&st->mu);
        for (size_t i = 0; i < n; i++)
            group[i]->done = true;
        st->writers_busy--;
        pthread_cond_broadcast(&st->wq_done);
        pthread_cond_broadcast(&st->wq_work); /* a waiting writer may go now */
        pthread_mutex_unlock(&st->mu);
        if (ok)
            ch_flush_rejects(st);
        ch_rollup_flush(st, false);
        pthread_mutex_lock(&st->mu);
    }
    pthread_mutex_unlock(&st->mu);
    jp_u64map_cleanup(&g.ids);
    free(group);
    return NULL;
}

void ch_writer_start(ch_store *st)
{
    for (st->nwriters = 0; st->nwriters < CH_WRITERS; st->nwriters++)
        if (pthread_create(&st->writers[st->nwriters], NULL, ch_writer_main, st) != 0)
            break;
    st->writer_started = st->nwriters > 0;
}

void ch_writer_stop(ch_store *st)
{
    if (!st->writer_started)
        return;
    pthread_mutex_lock(&st->mu);
    st->stopping = true;
    pthread_cond_broadcast(&st->wq_work);
    pthread_mutex_unlock(&st->mu);
    for (size_t i = 0; i < st->nwriters; i++)
        pthread_join(st->writers[i], NULL);
    st->nwriters = 0;
    st->writer_started = false;
}

/* Queues a write and waits for its group. */
static jp_err ch_submit(ch_store *st, ch_wreq *r, jp_error *err)
{
    pthread_mutex_lock(&st->mu);
    if (st->stopping || !st->writer_started) {
        pthread_mutex_unlock(&st->mu);
        return jp_error_set(err, JP_ERR_IO, "clickhouse store is closing");
    }
    if (st->wq_len >= CH_QUEUE_MAX) {
        pthread_mutex_unlock(&st->mu);
        return jp_error_set(err, JP_ERR_TIMEOUT,
                            "clickhouse store overloaded: %d batches waiting to be written",
                            CH_QUEUE_MAX);
    }
    if (st->wq_tail)
        st->wq_tail->next = r;
    else
        st->wq_head = r;
    st->wq_tail = r;
    st->wq_len++;
    st->wq_bytes += r->bytes;
    r->queued_ns = jp_time_mono_ns();
    pthread_cond_signal(&st->wq_work);
    while (!r->done)
        pthread_cond_wait(&st->wq_done, &st->mu);
    pthread_mutex_unlock(&st->mu);
    if (r->rc && err)
        *err = r->err;
    return r->rc;
}

/* ---- batch ids in flight in this process ---- */

static bool ch_inflight_has(ch_store *st, const char *id)
{
    for (size_t i = 0; i < st->ninflight; i++)
        if (!strcmp(st->inflight[i], id))
            return true;
    return false;
}

static void ch_inflight_enter(ch_store *st, const char *id)
{
    pthread_mutex_lock(&st->mu);
    while (ch_inflight_has(st, id))
        pthread_cond_wait(&st->inflight_cv, &st->mu);
    st->inflight =
        jp_xgrow(st->inflight, &st->inflight_cap, st->ninflight + 1, sizeof *st->inflight);
    st->inflight[st->ninflight++] = jp_xstrdup(id);
    pthread_mutex_unlock(&st->mu);
}

static void ch_inflight_leave(ch_store *st, const char *id)
{
    pthread_mutex_lock(&st->mu);
    for (size_t i = 0; i < st->ninflight; i++)
        if (!strcmp(st->inflight[i], id)) {
            free(st->inflight[i]);
            st->inflight[i] = st->inflight[--st->ninflight];
            break;
        }
    pthread_cond_broadcast(&st->inflight_cv);
    pthread_mutex_unlock(&st->mu);
}

/* ---- ops ---- */

jp_err ch_write_batch(store *s, const jp_batch *b, const store_write_opts *opt,
                      store_write_result *res, jp_error *err)
{
    ch_store *st = s->impl;
    int64_t t0 = jp_time_mono_ns();
    memset(res, 0, sizeof *res);
    ch_wreq r;
    ch_wreq_init(&r, b, opt, res);
    jp_err rc = ch_encode(&r, st, err);
    if (!rc) {
        /* everything the writer needs is encoded or copied: the caller may
         * free the batch's bulk while the write waits for its group */
        r.b = NULL;
        if (opt && opt->release)
            opt->release(opt->release_ctx);
        /* a second write of the same id waits for the first, then finds
         * its markers */
        ch_inflight_enter(st, r.id);
        rc = ch_submit(st, &r, err);
        ch_inflight_leave(st, r.id);
    }
    pthread_mutex_lock(&st->mu);
    st->stats.writes++;
    st->stats.write_errors += rc != JP_OK;
    st->stats.write_ns_total += (uint64_t)(jp_time_mono_ns() - t0);
    pthread_mutex_unlock(&st->mu);
    if (rc && !r.committed)
        memset(res, 0, sizeof *res);
    ch_wreq_cleanup(&r);
    return rc;
}

void ch_note_rejected(store *s, const char *collector, const char *reason, int64_t time_ns)
{
    ch_store *st = s->impl;
    pthread_mutex_lock(&st->mu);
    if (st->nrejects < CH_REJECTS_MAX) {
        st->rejects = jp_xreallocarray(st->rejects, st->nrejects + 1, sizeof *st->rejects);
        ch_reject *r = &st->rejects[st->nrejects++];
        r->collector = jp_xstrdup(collector ? collector : "");
        r->reason = jp_xstrdup(reason ? reason : "");
        r->time_ns = time_ns;
    }
    pthread_mutex_unlock(&st->mu);
}

/* Called after written groups, before ingestion queries, by retention and
 * at close. Rejections that cannot be written go back to the buffer. */
void ch_flush_rejects(ch_store *st)
{
    pthread_mutex_lock(&st->mu);
    ch_reject *rej = st->rejects;
    size_t n = st->nrejects;
    st->rejects = NULL;
    st->nrejects = 0;
    pthread_mutex_unlock(&st->mu);
    if (!n)
        return;
    jp_strbuf rows;
    jp_strbuf_init(&rows, 0);
    for (size_t i = 0; i < n; i++) {
        jp_batch fake;
        jp_batch_init(&fake);
        fake.collector = rej[i].collector;
        ch_rb_ingest(&rows, rej[i].time_ns, &fake, 0, 2, rej[i].reason, NULL, 0, 1, 0);
    }
    jp_error e;
    jp_error_init(&e);
    bool ok = ch_insert_fmt(st, "jprof_ingest", ch_tabs[CT_MARKERS].cols, "RowBinary", &rows,
                            st->insert_settings, &e) == JP_OK;
    jp_strbuf_cleanup(&rows);
    pthread_mutex_lock(&st->mu);
    if (!ok && st->nrejects + n <= CH_REJECTS_MAX) {
        st->rejects = jp_xreallocarray(st->rejects, st->nrejects + n, sizeof *st->rejects);
        memcpy(st->rejects + st->nrejects, rej, n * sizeof *rej);
        st->nrejects += n;
        n = 0;
    }
    pthread_mutex_unlock(&st->mu);
    for (size_t i = 0; i < n; i++) {
        free(rej[i].collector);
        free(rej[i].reason);
    }
    free(rej);
}
