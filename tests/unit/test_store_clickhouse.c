/* The ClickHouse store (src/server/store_clickhouse.c) against a real
 * clickhouse-server, through the store.h contract:
 *   - the same batches written to it and to the embedded store give the same
 *     answers from every read op (flame rows and totals, targets, snapshots,
 *     deadlocks, statuses, ingestion, days);
 *   - budgets become partial answers with a reason (rows, distinct stacks),
 *     and a callback that stops is honoured;
 *   - concurrent writes of one batch id: exactly one is accepted, data once;
 *   - an unreachable ClickHouse is JP_ERR_IO/JP_ERR_TIMEOUT, quickly;
 *   - the per-minute roll-up: read when its markers match the windows (a row
 *     planted in it shows in the answer), ignored when they do not (doubled,
 *     missing, a database made before the roll-up existed), and dropped by
 *     retention with the other tables.
 * Needs JPROF_TEST_CLICKHOUSE_URL (tests/integration/test_server_clickhouse.sh
 * starts a server and sets it); without it the program skips (77). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/gc.h"
#include "server/ch_int.h"
#include "server/store_clickhouse.h"
#include "server/store_sqlite.h"
#include "wire/gc_json.h"

static const char *ch_url;
static char dir[256];
static char dbname[64];
static store *sq, *ch;
static int64_t now;

static store *open_ch(const char *db)
{
    store_clickhouse_options o = {.url = ch_url, .database = db};
    store_config cfg = {.retention_days = 7};
    store *s = NULL;
    jp_error e;
    jp_error_init(&e);
    jp_err rc = store_clickhouse_open(&o, &cfg, &s, &e);
    if (rc)
        fail_msg("clickhouse open: %s", e.msg);
    return s;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/jprof-store-ch-test.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(dbname, sizeof dbname, "jt_store_%ld", (long)getpid());
    store_config cfg = {.retention_days = 7};
    jp_error e;
    jp_error_init(&e);
    if (store_sqlite_open(dir, &cfg, &sq, &e) != JP_OK)
        return -1;
    ch = open_ch(dbname);
    now = store_now_ns();
    return ch ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    store_close(sq);
    store_close(ch);
    if (getenv("KEEPDB"))
        return 0;
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s'; curl -sS --max-time 10 '%s' --data-binary 'DROP DATABASE IF EXISTS "
             "%s' >/dev/null",
             dir, ch_url, dbname);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- batches ---- */

static jp_batch_target tgt(const char *pod, const char *service)
{
    jp_batch_target t = {0};
    t.ns = jp_xstrdup("shop");
    t.service = jp_xstrdup(service);
    t.pod = jp_xstrdup(pod);
    t.node = jp_xstrdup("node-1");
    t.pid = 4242;
    return t;
}

/* windows of `kind` at start for pod, rows (stack k, thread k % 3) */
static void add_window(jp_batch *b, jp_kind kind, int64_t start, const char *pod, int nstacks,
                       uint64_t mult)
{
    uint32_t root = jp_batch_add_frame_kind(b, "java.lang.Thread.run", 20, JP_FRAME_INTERPRETED);
    jp_batch_window *w = jp_batch_add_window(b);
    w->target = tgt(pod, "checkout");
    w->kind = kind;
    w->start_ns = start;
    w->end_ns = start + 60 * JP_NS_PER_SEC;
    w->period_ns = 10000000;
    w->events = 100 * mult;
    size_t wi = b->nwindows - 1;
    for (int k = 0; k < nstacks; k++) {
        char name[64];
        int len = snprintf(name, sizeof name, "com.shop.M%d.it's\\%s", k % 50, k % 2 ? "a" : "b");
        uint32_t f[3] = {root, jp_batch_add_frame_kind(b, name, (size_t)len, JP_FRAME_JIT),
                         jp_batch_add_frame_kind(b, "leaf\tx", 6, JP_FRAME_NATIVE)};
        uint32_t st = jp_batch_add_stack(b, f, (uint32_t)(1 + k % 3), k == 1);
        char th[32];
        int tl = snprintf(th, sizeof th, "worker-%d", k % 3);
        uint32_t thread = k % 4 == 3 ? JP_BATCH_NO_THREAD : jp_batch_add_thread(b, th, (size_t)tl);
        jp_batch_window_add_row(&b->windows[wi], st, thread, (uint64_t)(k + 1) * mult,
                                (uint64_t)(k + 1) * mult * 1000);
    }
}

static void add_docs(jp_batch *b, int64_t t, const char *pod)
{
    b->statuses = jp_xreallocarray(b->statuses, b->nstatuses + 2, sizeof *b->statuses);
    jp_batch_status *s = &b->statuses[b->nstatuses++];
    memset(s, 0, sizeof *s);
    s->target = tgt(pod, "checkout");
    s->time_ns = t;
    s->state = jp_xstrdup("active");
    s->engine = jp_xstrdup("jfr");
    s->mode = jp_xstrdup("temporary");
    s->until_ns = t + 3600 * JP_NS_PER_SEC;
    s = &b->statuses[b->nstatuses++];
    memset(s, 0, sizeof *s);
    s->target = tgt("cart-1", "cart");
    s->time_ns = t + 1;
    s->state = jp_xstrdup("skipped");
    s->reason = jp_xstrdup("conflict");
    s->message = jp_xstrdup("someone else's profiler");
    jp_batch_doc *lists[2];
    b->snapshots = jp_xreallocarray(b->snapshots, b->nsnapshots + 1, sizeof *b->snapshots);
    b->deadlocks = jp_xreallocarray(b->deadlocks, b->ndeadlocks + 1, sizeof *b->deadlocks);
    lists[0] = &b->snapshots[b->nsnapshots++];
    lists[1] = &b->deadlocks[b->ndeadlocks++];
    for (int i = 0; i < 2; i++) {
        char json[200];
        snprintf(json, sizeof json, "{\"threads\":[{\"name\":\"t\\t%d\",\"at\":%lld}],\"q\":\"'\"}",
                 i, (long long)t);
        memset(lists[i], 0, sizeof *lists[i]);
        lists[i]->target = tgt(pod, "checkout");
        lists[i]->time_ns = t;
        lists[i]->json = jp_xstrdup(json);
        lists[i]->len = strlen(json);
    }
}

/* A GC summary of the 60 s window at t: 3 pauses (1, 2 and 5 ms, the last
 * the longest, of G1Old for System.gc()), heap 300 -> 100 MB. */
static void add_gc(jp_batch *b, int64_t t, const char *pod)
{
    jp_gc_log l;
    jp_gc_log_init(&l);
    static const int64_t ms[3] = {1, 5, 2};
    for (int i = 0; i < 3; i++) {
        jp_gc_pause p = {.start_ns = t + i * JP_NS_PER_SEC,
                         .duration_ns = ms[i] * 1000000,
                         .gc_id = (uint64_t)i + 1};
        snprintf(p.name, sizeof p.name, "GC Pause");
        jp_gc_log_pause(&l, &p);
        jp_gc_collection c = {.start_ns = p.start_ns, .gc_id = p.gc_id};
        snprintf(c.name, sizeof c.name, "%s", i == 1 ? "G1Old" : "G1New");
        snprintf(c.cause, sizeof c.cause, "%s", i == 1 ? "System.gc()" : "G1 Evacuation Pause");
        jp_gc_log_collection(&l, &c);
        jp_gc_heap h = {
            .time_ns = p.start_ns, .gc_id = p.gc_id, .used = 300000000, .when = JP_GC_BEFORE};
        jp_gc_log_heap(&l, &h);
        h.when = JP_GC_AFTER;
        h.used = 100000000;
        jp_gc_log_heap(&l, &h);
    }
    jp_batch_gc *g = jp_batch_add_gc(b);
    g->target = tgt(pod, "checkout");
    jp_gc_window_compute(&l, 0, 0, 0, 0, &g->w);
    g->w.s.from_ns = t;
    g->w.s.to_ns = t + 60 * JP_NS_PER_SEC;
    jp_gc_log_cleanup(&l);
}

static void new_batch(jp_batch *b, const char *id)
{
    jp_batch_init(b);
    b->id = jp_xstrdup(id);
    b->collector = jp_xstrdup("agent@node-1");
    b->collector_version = jp_xstrdup("1.0");
    b->heartbeat = true;
    b->queue_dropped_batches = 3;
}

static void write_both(const jp_batch *b, bool dup)
{
    store *ss[2] = {sq, ch};
    for (int i = 0; i < 2; i++) {
        store_write_result r;
        store_write_opts o = {.body_bytes = 1000};
        jp_error e;
        jp_error_init(&e);
        jp_err rc = ss[i]->ops->write_batch(ss[i], b, &o, &r, &e);
        if (rc)
            fail_msg("%s write: %s", ss[i]->ops->name, e.msg);
        assert_int_equal(r.duplicate, dup);
    }
}

/* ---- canonical dumps: sorted lines ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts the lines of d (for answers whose order the contract leaves open). */
static void sort_lines(jp_strbuf *d)
{
    char **lines = NULL;
    size_t n = 0, cap = 0;
    for (char *p = d->data, *nl; p && *p; p = nl + 1) {
        nl = strchr(p, '\n');
        lines = jp_xgrow(lines, &cap, n + 1, sizeof *lines);
        lines[n++] = jp_xstrndup(p, (size_t)(nl - p));
    }
    qsort(lines, n, sizeof *lines, cmp_str);
    jp_strbuf_reset(d);
    for (size_t i = 0; i < n; i++) {
        jp_strbuf_printf(d, "%s\n", lines[i]);
        free(lines[i]);
    }
    free(lines);
}

typedef struct fagg {
    char **keys;
    uint64_t *samples, *values;
    size_t n, cap, cap2, cap3;
    int stop_after; /* 0 = never */
    int rows;
} fagg;

static bool flame_cb(const store_stack_row *r, void *ctx)
{
    fagg *a = ctx;
    jp_strbuf k;
    jp_strbuf_init(&k, 0);
    jp_strbuf_printf(&k, "%llx|%s|%d|", (unsigned long long)r->stack_id,
                     r->thread ? r->thread : "(none)", r->truncated);
    for (uint32_t i = 0; i < r->depth; i++)
        jp_strbuf_printf(&k, "%.*s@%d;", (int)r->frame_lens[i], r->frames[i],
                         r->frame_kinds ? r->frame_kinds[i] : -1);
    size_t i = 0;
    while (i < a->n && strcmp(a->keys[i], k.data))
        i++;
    if (i == a->n) {
        a->keys = jp_xgrow(a->keys, &a->cap, a->n + 1, sizeof *a->keys);
        a->samples = jp_xgrow(a->samples, &a->cap2, a->n + 1, sizeof *a->samples);
        a->values = jp_xgrow(a->values, &a->cap3, a->n + 1, sizeof *a->values);
        a->keys[i] = jp_strbuf_take(&k);
        a->samples[i] = a->values[i] = 0;
        a->n++;
    }
    a->samples[i] += r->samples;
    a->values[i] += r->value;
    jp_strbuf_cleanup(&k);
    a->rows++;
    return !(a->stop_after && a->rows >= a->stop_after);
}

static void dump_flame(store *s, const store_filter *f, jp_strbuf *d)
{
    fagg a = {0};
    store_flame_totals t;
    store_query_info qi;
    jp_error e;
    jp_error_init(&e);
    if (store_flame(s, f, NULL, flame_cb, &a, &t, &qi, &e))
        fail_msg("%s flame: %s", s->ops->name, e.msg);
    assert_false(qi.partial);
    for (size_t i = 0; i < a.n; i++) {
        jp_strbuf_printf(d, "%s %llu %llu\n", a.keys[i], (unsigned long long)a.samples[i],
                         (unsigned long long)a.values[i]);
        free(a.keys[i]);
    }
    sort_lines(d);
    jp_strbuf_printf(d, "totals w=%llu ev=%llu drop=%d trunc=%d period=%lld first=%lld last=%lld\n",
                     (unsigned long long)t.windows, (unsigned long long)t.events, t.any_dropped,
                     t.any_truncated, (long long)t.period_ns, (long long)t.first_ns,
                     (long long)t.last_ns);
    free(a.keys);
    free(a.samples);
    free(a.values);
}

static const char *z(const char *s)
{
    return s ? s : "(null)";
}

static bool target_cb(const store_target_row *r, void *ctx)
{
    jp_strbuf_printf(ctx, "%s|%s|%s|node=%s|pid=%lld|kinds=%u|w=%llu|%lld..%lld|%s|%s|%s|%lld\n",
                     z(r->target->ns), z(r->target->service), z(r->target->pod), z(r->target->node),
                     (long long)r->target->pid, r->kinds, (unsigned long long)r->windows,
                     (long long)r->first_ns, (long long)r->last_ns, z(r->state), z(r->reason),
                     z(r->mode), (long long)r->until_ns);
    return true;
}

static bool doc_cb(const store_doc_row *r, void *ctx)
{
    jp_strbuf_printf(ctx, "%s|%s|%lld|", z(r->target->service), z(r->target->pod),
                     (long long)r->time_ns);
    if (r->json)
        jp_strbuf_printf(ctx, "%.*s\n", (int)r->json_len, r->json);
    else
        jp_strbuf_printf(ctx, "%s|%s|%s|%s|%s|%lld\n", z(r->state), z(r->reason), z(r->message),
                         z(r->engine), z(r->mode), (long long)r->until_ns);
    return true;
}

static bool ingest_cb(const store_ingest_row *r, void *ctx)
{
    jp_strbuf_printf(ctx,
                     "%s v=%s a=%llu d=%llu r=%llu w=%llu rows=%llu bytes=%llu rej=%s q=%llu\n",
                     r->collector, z(r->version), (unsigned long long)r->accepted,
                     (unsigned long long)r->duplicate, (unsigned long long)r->rejected,
                     (unsigned long long)r->windows, (unsigned long long)r->stack_rows,
                     (unsigned long long)r->bytes, z(r->last_reject_reason),
                     (unsigned long long)r->queue_dropped_batches);
    return true;
}

static bool day_cb(const store_day_row *r, void *ctx)
{
    jp_strbuf_printf(ctx, "day %lld w=%llu rows=%llu stacks=%llu docs=%llu batches=%llu exp=%lld\n",
                     (long long)r->day, (unsigned long long)r->windows,
                     (unsigned long long)r->stack_rows, (unsigned long long)r->stacks,
                     (unsigned long long)r->docs, (unsigned long long)r->batches,
                     (long long)r->expires_ns);
    return true;
}

/* Every read op on both stores; the dumps must be equal. */
static void compare(const char *what, void (*dump)(store *, jp_strbuf *))
{
    jp_strbuf a, b;
    jp_strbuf_init(&a, 0);
    jp_strbuf_init(&b, 0);
    dump(sq, &a);
    dump(ch, &b);
    if (strcmp(jp_strbuf_str(&a), jp_strbuf_str(&b)) != 0)
        fail_msg("%s differs:\n-- sqlite:\n%s-- clickhouse:\n%s", what, jp_strbuf_str(&a),
                 jp_strbuf_str(&b));
    assert_true(a.len > 0);
    if (getenv("JPROF_TEST_VERBOSE"))
        printf("-- %s (both stores):\n%s", what, jp_strbuf_str(&b));
    jp_strbuf_cleanup(&a);
    jp_strbuf_cleanup(&b);
}

static store_filter wide(void)
{
    store_filter f = {.ns = "shop",
                      .service = "checkout",
                      .kind = JP_KIND_CPU,
                      .from_ns = now - 4 * STORE_DAY_NS,
                      .to_ns = now + 3600 * JP_NS_PER_SEC};
    return f;
}

static void d_flame(store *s, jp_strbuf *d)
{
    store_filter f = wide();
    dump_flame(s, &f, d);
    f.kind = JP_KIND_ALLOC;
    dump_flame(s, &f, d);
    f.kind = JP_KIND_CPU;
    f.pod = "p2";
    dump_flame(s, &f, d);
    f.pod = NULL;
    f.thread = "worker-1";
    dump_flame(s, &f, d);
    f.thread = NULL;
    f.from_ns = now - 3600 * JP_NS_PER_SEC; /* today only */
    dump_flame(s, &f, d);
}

static void d_targets(store *s, jp_strbuf *d)
{
    store_filter f = wide();
    f.service = NULL;
    store_query_info qi;
    assert_int_equal(s->ops->targets(s, &f, NULL, target_cb, d, &qi, NULL), JP_OK);
}

static void d_docs(store *s, jp_strbuf *d)
{
    store_filter f = wide();
    store_query_info qi;
    assert_int_equal(s->ops->snapshots_latest(s, &f, NULL, doc_cb, d, &qi, NULL), JP_OK);
    jp_strbuf_puts(d, "-- deadlocks\n");
    assert_int_equal(s->ops->deadlocks(s, &f, NULL, doc_cb, d, &qi, NULL), JP_OK);
    jp_strbuf_puts(d, "-- gc\n");
    assert_int_equal(s->ops->gc(s, &f, NULL, doc_cb, d, &qi, NULL), JP_OK);
    jp_strbuf_puts(d, "-- statuses\n");
    f.service = NULL;
    assert_int_equal(s->ops->statuses(s, &f, NULL, doc_cb, d, &qi, NULL), JP_OK);
}

static void d_ingestion(store *s, jp_strbuf *d)
{
    store_filter f = wide();
    store_query_info qi;
    assert_int_equal(s->ops->ingestion(s, &f, NULL, ingest_cb, d, &qi, NULL), JP_OK);
}

static void d_days(store *s, jp_strbuf *d)
{
    assert_int_equal(s->ops->days(s, day_cb, d, NULL), JP_OK);
}

static bool gc_collect(const store_doc_row *r, void *ctx)
{
    jp_gc_window **ws = ctx;
    size_t n = 0;
    while ((*ws)[n].s.to_ns)
        n++;
    json_t *j = json_loadb(r->json, r->json_len, 0, NULL);
    char why[200] = "";
    if (!jp_gc_window_from_json(j, &(*ws)[n], why, sizeof why))
        fail_msg("stored GC summary unreadable: %s: %.*s", why, (int)r->json_len, r->json);
    json_decref(j);
    assert_int_equal((*ws)[n].s.from_ns, r->time_ns);
    return true;
}

/* Each store's GC summaries of the checkout pods merge to the sum of the
 * three windows written (newest first), the same in both. */
static void check_gc_merge(void)
{
    store *ss[2] = {sq, ch};
    for (int i = 0; i < 2; i++) {
        jp_gc_window *ws = calloc(8, sizeof *ws);
        store_filter f = wide();
        store_query_info qi;
        assert_int_equal(ss[i]->ops->gc(ss[i], &f, NULL, gc_collect, &ws, &qi, NULL), JP_OK);
        size_t n = 0;
        while (ws[n].s.to_ns)
            n++;
        assert_int_equal(n, 3);
        assert_true(ws[0].s.from_ns > ws[1].s.from_ns && ws[1].s.from_ns > ws[2].s.from_ns);
        jp_gc_summary m;
        bool exact;
        int64_t covered;
        jp_gc_merge(ws, n, f.from_ns, f.to_ns, &m, &exact, &covered);
        assert_true(exact);
        assert_int_equal(covered, 3 * 60 * JP_NS_PER_SEC);
        assert_int_equal(m.pauses, 9);
        assert_int_equal(m.collections, 9);
        assert_int_equal(m.pause_total_ns, 3 * 8 * 1000000);
        assert_int_equal(m.pause_max_ns, 5 * 1000000);
        assert_int_equal(m.pause_p50_ns, 2 * 1000000);
        assert_string_equal(m.longest_collector, "G1Old");
        assert_string_equal(m.longest_cause, "System.gc()");
        assert_int_equal(m.heap_gcs, 9);
        assert_int_equal(m.heap_after, 100000000);
        free(ws);
    }
}

static void test_same_answers(void **state)
{
    (void)state;
    int64_t t = now - 600 * JP_NS_PER_SEC;
    jp_batch b1, b2;
    new_batch(&b1, "cmp-1");
    add_window(&b1, JP_KIND_CPU, t - (t % (60 * JP_NS_PER_SEC)), "p1", 12, 1);
    add_window(&b1, JP_KIND_ALLOC, t - (t % (60 * JP_NS_PER_SEC)), "p1", 5, 7);
    add_docs(&b1, t, "p1");
    new_batch(&b2, "cmp-2");
    add_window(&b2, JP_KIND_CPU, t - 2 * STORE_DAY_NS, "p2", 7, 3);
    add_window(&b2, JP_KIND_CPU, t - 60 * JP_NS_PER_SEC, "p1", 9, 2);
    add_docs(&b2, t - 2 * STORE_DAY_NS, "p2");
    add_docs(&b2, t + JP_NS_PER_SEC, "p1");
    add_gc(&b1, t - (t % (60 * JP_NS_PER_SEC)), "p1");
    add_gc(&b2, t - 2 * STORE_DAY_NS, "p2");
    add_gc(&b2, t - (t % (60 * JP_NS_PER_SEC)) - 60 * JP_NS_PER_SEC, "p1");
    write_both(&b1, false);
    write_both(&b2, false);
    write_both(&b1, true);
    sq->ops->note_rejected(sq, "agent@node-2", "malformed: bad json", now - JP_NS_PER_SEC);
    ch->ops->note_rejected(ch, "agent@node-2", "malformed: bad json", now - JP_NS_PER_SEC);
    compare("flame", d_flame);
    compare("targets", d_targets);
    compare("documents", d_docs);
    check_gc_merge();
    usleep(300000); /* the embedded store logs rejections on its writer thread */
    compare("ingestion", d_ingestion);
    compare("days", d_days);
    jp_batch_cleanup(&b1);
    jp_batch_cleanup(&b2);
}

static void test_budgets(void **state)
{
    (void)state;
    jp_batch b;
    new_batch(&b, "big-1");
    for (int i = 0; i < 10; i++)
        add_window(&b, JP_KIND_WALL, now - (100 - i) * 60 * JP_NS_PER_SEC, "p1", 3000, 1);
    store_write_result r;
    jp_error e;
    jp_error_init(&e);
    if (ch->ops->write_batch(ch, &b, NULL, &r, &e))
        fail_msg("write: %s", e.msg);
    assert_int_equal(r.stack_rows, 30000);
    store_filter f = wide();
    f.kind = JP_KIND_WALL;
    store_query_info qi;
    /* rows */
    store_budget bud = {.max_rows = 5000};
    f.pod = "p1"; /* raw rows, whether or not the roll-up is written yet */
    fagg a = {0};
    assert_int_equal(store_flame(ch, &f, &bud, flame_cb, &a, NULL, &qi, &e), JP_OK);
    assert_true(qi.partial);
    assert_non_null(strstr(qi.partial_reason, "row budget"));
    /* distinct stacks: the heaviest come first */
    store_budget bud2 = {.max_stacks = 10};
    fagg c = {0};
    assert_int_equal(store_flame(ch, &f, &bud2, flame_cb, &c, NULL, &qi, &e), JP_OK);
    assert_true(qi.partial);
    assert_non_null(strstr(qi.partial_reason, "distinct stacks"));
    assert_true(c.rows <= 10 && c.rows > 0);
    /* no budget: complete; a callback that stops */
    fagg d = {.stop_after = 3};
    assert_int_equal(store_flame(ch, &f, NULL, flame_cb, &d, NULL, &qi, &e), JP_OK);
    assert_true(qi.stopped);
    assert_false(qi.partial);
    assert_int_equal(d.rows, 3);
    for (fagg *x = &a; x; x = x == &a ? &c : x == &c ? &d : NULL) {
        for (size_t i = 0; i < x->n; i++)
            free(x->keys[i]);
        free(x->keys);
        free(x->samples);
        free(x->values);
    }
    jp_batch_cleanup(&b);
}

typedef struct racer {
    const jp_batch *b;
    store_write_result r;
    jp_err rc;
} racer;

static void *race_main(void *arg)
{
    racer *x = arg;
    jp_error e;
    jp_error_init(&e);
    x->rc = ch->ops->write_batch(ch, x->b, NULL, &x->r, &e);
    return NULL;
}

static void test_concurrent_duplicates(void **state)
{
    (void)state;
    jp_batch b;
    new_batch(&b, "race-1");
    add_window(&b, JP_KIND_LOCK, now - 300 * JP_NS_PER_SEC, "p9", 4, 1);
    racer x[6];
    pthread_t th[6];
    for (int i = 0; i < 6; i++) {
        x[i] = (racer){.b = &b};
        pthread_create(&th[i], NULL, race_main, &x[i]);
    }
    int accepted = 0;
    for (int i = 0; i < 6; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(x[i].rc, JP_OK);
        accepted += !x[i].r.duplicate;
    }
    assert_int_equal(accepted, 1);
    store_filter f = wide();
    f.kind = JP_KIND_LOCK;
    fagg a = {0};
    store_query_info qi;
    assert_int_equal(store_flame(ch, &f, NULL, flame_cb, &a, NULL, &qi, NULL), JP_OK);
    uint64_t samples = 0;
    for (size_t i = 0; i < a.n; i++) {
        samples += a.samples[i];
        free(a.keys[i]);
    }
    assert_int_equal(samples, 1 + 2 + 3 + 4);
    free(a.keys);
    free(a.samples);
    free(a.values);
    jp_batch_cleanup(&b);
}

/* A database made by a schema-1 server (statuses without mode/until_ns) gets
 * the columns when a newer server opens it, and then answers as the
 * embedded store does. */
static void test_old_schema_gains_columns(void **state)
{
    (void)state;
    char cmd[600];
    const char *drop[] = {"jprof_statuses DROP COLUMN mode", "jprof_statuses DROP COLUMN until_ns",
                          "jprof_stacks DROP COLUMN kinds"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd,
                 "curl -sSf --max-time 10 '%s' --data-binary 'ALTER TABLE %s.%s' >/dev/null",
                 ch_url, dbname, drop[i]);
        assert_int_equal(system(cmd), 0);
    }
    store_close(ch);
    ch = open_ch(dbname);
    assert_non_null(ch);
    jp_batch b;
    int64_t t = now - 120 * JP_NS_PER_SEC;
    new_batch(&b, "mig-1");
    add_docs(&b, t, "p1");
    {
        /* stacks no earlier test wrote (a stored stack keeps what it had) */
        uint32_t fr[2] = {jp_batch_add_frame_kind(&b, "mig.Root", 8, JP_FRAME_INTERPRETED),
                          jp_batch_add_frame_kind(&b, "mig.Hot", 7, JP_FRAME_JIT)};
        uint32_t st = jp_batch_add_stack(&b, fr, 2, false);
        jp_batch_window *w = jp_batch_add_window(&b);
        w->target = tgt("p9", "checkout");
        w->kind = JP_KIND_CPU;
        w->start_ns = t - (t % (60 * JP_NS_PER_SEC));
        w->end_ns = w->start_ns + 60 * JP_NS_PER_SEC;
        w->period_ns = 10000000;
        w->events = 4;
        jp_batch_window_add_row(w, st, JP_BATCH_NO_THREAD, 4, 40000000);
    }
    write_both(&b, false);
    /* the stacks written after the migration keep their frame kinds */
    jp_strbuf fa, fc;
    jp_strbuf_init(&fa, 0);
    jp_strbuf_init(&fc, 0);
    store_filter ff = wide();
    ff.pod = "p9";
    dump_flame(sq, &ff, &fa);
    dump_flame(ch, &ff, &fc);
    if (!strstr(fc.data, "@1;")) /* a jit frame */
        fail_msg("no frame kinds after the migration:\n%s\n-- sqlite:\n%s", fc.data, fa.data);
    assert_string_equal(fa.data, fc.data);
    jp_strbuf_cleanup(&fa);
    jp_strbuf_cleanup(&fc);
    /* the rows written before the columns were dropped lost their mode in
     * ClickHouse only: compare what was written after */
    store_filter f = wide();
    f.service = NULL;
    f.from_ns = t;
    f.to_ns = t + JP_NS_PER_SEC;
    jp_strbuf a, c;
    jp_strbuf_init(&a, 0);
    jp_strbuf_init(&c, 0);
    store_query_info qi;
    assert_int_equal(sq->ops->statuses(sq, &f, NULL, doc_cb, &a, &qi, NULL), JP_OK);
    assert_int_equal(ch->ops->statuses(ch, &f, NULL, doc_cb, &c, &qi, NULL), JP_OK);
    assert_non_null(strstr(c.data, "|temporary|"));
    assert_string_equal(a.data, c.data);
    jp_strbuf_reset(&a);
    jp_strbuf_reset(&c);
    assert_int_equal(sq->ops->targets(sq, &f, NULL, target_cb, &a, &qi, NULL), JP_OK);
    assert_int_equal(ch->ops->targets(ch, &f, NULL, target_cb, &c, &qi, NULL), JP_OK);
    assert_non_null(strstr(c.data, "|temporary|"));
    assert_string_equal(a.data, c.data);
    jp_strbuf_cleanup(&a);
    jp_strbuf_cleanup(&c);
    jp_batch_cleanup(&b);
}

static void test_unreachable(void **state)
{
    (void)state;
    /* a loopback port nobody listens on (the discard port) */
    store_clickhouse_options o = {.url = "http://127.0.0.1:9/", .connect_timeout_ns = 500000000};
    store_config cfg = {.retention_days = 7};
    store *s = NULL;
    jp_error e;
    jp_error_init(&e);
    int64_t t0 = jp_time_mono_ns();
    jp_err rc = store_clickhouse_open(&o, &cfg, &s, &e);
    assert_true(rc == JP_ERR_IO || rc == JP_ERR_TIMEOUT);
    assert_null(s);
    assert_non_null(strstr(e.msg, "clickhouse"));
    assert_true(jp_time_mono_ns() - t0 < 5 * JP_NS_PER_SEC);
    /* credentials never show in messages; a wrong password is refused */
    store_clickhouse_options o2 = {.url = ch_url, .user = "jprof", .password = "wrong-secret"};
    rc = store_clickhouse_open(&o2, &cfg, &s, &e);
    assert_int_not_equal(rc, JP_OK);
    assert_null(strstr(e.msg, "wrong-secret"));
    /* the right one works, from the URL too */
    char url[300];
    snprintf(url, sizeof url, "%s", ch_url);
    char *p = strstr(url, "://");
    assert_non_null(p);
    char with[400];
    snprintf(with, sizeof with, "http://jprof:jprof-test@%s?database=%s", p + 3, dbname);
    store_clickhouse_options o3 = {.url = with};
    rc = store_clickhouse_open(&o3, &cfg, &s, &e);
    if (rc)
        fail_msg("open with credentials in the URL: %s", e.msg);
    char desc[300];
    store_clickhouse_describe(s, desc, sizeof desc);
    assert_null(strstr(desc, "jprof-test"));
    assert_non_null(strstr(desc, dbname));
    store_close(s);
}

/* One number from a statement on the test's database (white box: the
 * roll-up table is the store's own business). */
static uint64_t ch_count(store *s, const char *sql)
{
    jp_strbuf out;
    jp_strbuf_init(&out, 0);
    jp_error e;
    jp_error_init(&e);
    if (ch_exec(s->impl, sql, true, &out, &e))
        fail_msg("%s: %s", sql, e.msg);
    uint64_t v = strtoull(jp_strbuf_str(&out), NULL, 10);
    jp_strbuf_cleanup(&out);
    return v;
}

static void ch_run(store *s, const char *sql)
{
    jp_error e;
    jp_error_init(&e);
    if (ch_exec(s->impl, sql, true, NULL, &e))
        fail_msg("%s: %s", sql, e.msg);
}

static void d_flame_park(store *s, jp_strbuf *d)
{
    store_filter f = wide();
    f.kind = JP_KIND_PARK;
    dump_flame(s, &f, d);
    f.thread = "worker-2";
    dump_flame(s, &f, d);
}

/* Polls a count until it is want (the roll-up is written by the store's
 * writer threads once a minute is over, after the batches are answered). */
static void wait_count(store *s, const char *sql, uint64_t want)
{
    uint64_t got = 0;
    for (int i = 0; i < 400 && (got = ch_count(s, sql)) != want; i++)
        usleep(50000);
    if (got != want)
        fail_msg("%s: %llu, not %llu", sql, (unsigned long long)got, (unsigned long long)want);
}

static void test_rollup(void **state)
{
    (void)state;
    int64_t minute = 60 * JP_NS_PER_SEC;
    int64_t m0 = (now / minute - 30) * minute;
    jp_batch b;
    /* three pods, three whole minutes, one row of zero samples and value */
    for (int p = 0; p < 3; p++) {
        char id[32], pod[16];
        snprintf(id, sizeof id, "roll-%d", p);
        snprintf(pod, sizeof pod, "r%d", p);
        new_batch(&b, id);
        for (int k = 0; k < 3; k++)
            add_window(&b, JP_KIND_PARK, m0 + k * minute + p * JP_NS_PER_SEC, pod, 6 + p, 1 + p);
        jp_batch_window_add_row(&b.windows[0], 0, JP_BATCH_NO_THREAD, 0, 0);
        write_both(&b, false);
        jp_batch_cleanup(&b);
    }
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT sum(windows) FROM jprof_rollup WHERE kind = %d",
             JP_KIND_PARK);
    wait_count(ch, sql, 9);
    compare("flame from the roll-up", d_flame_park);

    /* the roll-up is what was read: the pods' rows summed per minute are
     * fewer than the windows' own */
    store_filter f = wide();
    f.kind = JP_KIND_PARK;
    fagg pa = {0};
    store_query_info qi;
    assert_int_equal(store_flame(ch, &f, NULL, flame_cb, &pa, NULL, &qi, NULL), JP_OK);
    snprintf(sql, sizeof sql, "SELECT sum(nrows) FROM jprof_windows WHERE kind = %d", JP_KIND_PARK);
    uint64_t raw = ch_count(ch, sql);
    if (qi.rows_scanned >= raw)
        fail_msg("the roll-up is not read: %llu rows scanned, the windows hold %llu",
                 (unsigned long long)qi.rows_scanned, (unsigned long long)raw);
    for (size_t i = 0; i < pa.n; i++)
        free(pa.keys[i]);
    free(pa.keys);
    free(pa.samples);
    free(pa.values);

    /* that minute's roll-up doubled (a retried insert, two replicas
     * accepting one batch): its sums no longer match, raw rows are read */
    snprintf(sql, sizeof sql,
             "INSERT INTO jprof_rollup SELECT * FROM jprof_rollup WHERE kind = %d AND "
             "minute = %lld",
             JP_KIND_PARK, (long long)(m0 / minute));
    ch_run(ch, sql);
    compare("flame with a doubled roll-up minute", d_flame_park);

    /* no roll-up at all (lost with a crashed server): all raw */
    ch_run(ch, "TRUNCATE TABLE jprof_rollup");
    compare("flame without a roll-up", d_flame_park);

    /* retention drops the roll-up's day partitions with the others */
    new_batch(&b, "roll-old");
    add_window(&b, JP_KIND_PARK, now - 9 * STORE_DAY_NS, "r0", 3, 1);
    add_gc(&b, now - 9 * STORE_DAY_NS, "r0"); /* a GC summary of a day not kept: refused */
    store_write_result r;
    jp_error e;
    jp_error_init(&e);
    if (ch->ops->write_batch(ch, &b, NULL, &r, &e))
        fail_msg("write: %s", e.msg);
    assert_int_equal(r.docs_refused, 1);
    jp_batch_cleanup(&b);
    /* one that got there anyway (written by hand) goes with its day */
    ch_run(ch, "INSERT INTO jprof_gc (day, ns, service, pod, time_ns, json) VALUES "
               "(today() - 9, 'shop', 'checkout', 'r0', 1, '{}')");
    assert_int_equal(ch_count(ch, "SELECT count() FROM jprof_gc WHERE day < today() - 8"), 1);
    const char *old = "SELECT count() FROM jprof_rollup WHERE day < today() - 8";
    wait_count(ch, old, 1);
    uint32_t removed = 0;
    if (ch->ops->enforce_retention(ch, 7, &removed, &e))
        fail_msg("retention: %s", e.msg);
    assert_true(removed >= 1);
    assert_int_equal(ch_count(ch, old), 0);
    assert_int_equal(ch_count(ch, "SELECT count() FROM jprof_gc WHERE day < today() - 8"), 0);
}

/* A database of schema 2 kept a row per stack row in jprof_samples: its
 * rows are read beside the new ones while the table exists. */
static void test_legacy_samples(void **state)
{
    (void)state;
    int64_t t = (now / (60 * JP_NS_PER_SEC) - 50) * 60 * JP_NS_PER_SEC;
    jp_batch b;
    new_batch(&b, "legacy-1");
    add_window(&b, JP_KIND_IO, t, "p1", 4, 1);
    write_both(&b, false);
    jp_batch_cleanup(&b);
    ch_run(ch, "CREATE TABLE jprof_samples (day Date, ns String, service String, pod String, "
               "kind UInt8, start_ns Int64, stack_id UInt64, thread String, samples UInt64, "
               "value UInt64, attempt UInt64) ENGINE = MergeTree PARTITION BY day "
               "ORDER BY (ns, service, kind, start_ns, stack_id)");
    char sql[600];
    /* a flat row under the stored window's attempt, as schema 2 wrote them */
    snprintf(sql, sizeof sql,
             "INSERT INTO jprof_samples SELECT day, ns, service, pod, kind, start_ns, (SELECT "
             "any(stack_id) FROM jprof_stacks WHERE length(frames) = 1), '', toUInt64(4242), 0, "
             "attempt FROM jprof_windows WHERE kind = %d",
             JP_KIND_IO);
    ch_run(ch, sql);
    store_filter f = wide();
    f.kind = JP_KIND_IO;
    f.pod = "p1"; /* read raw, not from the roll-up */
    jp_strbuf d;
    jp_strbuf_init(&d, 0);
    store_close(ch);
    ch = open_ch(dbname);
    dump_flame(ch, &f, &d);
    if (!strstr(jp_strbuf_str(&d), " 4246 "))
        fail_msg("the legacy row does not show:\n%s", jp_strbuf_str(&d));
    jp_strbuf_cleanup(&d);
    ch_run(ch, "DROP TABLE jprof_samples");
    store_close(ch);
    ch = open_ch(dbname);
}

int main(void)
{
    ch_url = getenv("JPROF_TEST_CLICKHOUSE_URL");
    if (!ch_url || !*ch_url) {
        fprintf(stderr, "test_store_clickhouse: SKIP: JPROF_TEST_CLICKHOUSE_URL is not set "
                        "(tests/integration/test_server_clickhouse.sh runs this with a server)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_answers),
        cmocka_unit_test(test_budgets),
        cmocka_unit_test(test_concurrent_duplicates),
        cmocka_unit_test(test_unreachable),
        cmocka_unit_test(test_rollup),
        cmocka_unit_test(test_legacy_samples),
        /* last: it drops columns of the shared database, and the stacks
         * stored before lose their frame kinds in ClickHouse only */
        cmocka_unit_test(test_old_schema_gains_columns),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
