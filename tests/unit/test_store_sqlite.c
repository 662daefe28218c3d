/* Unit tests of the embedded store (src/server/store_sqlite.c) through the
 * store.h contract: durable dedupe across reopen, flame rows, budgets,
 * retention by day files, concurrent duplicates. */
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
#include <sqlite3.h>

#include "base/strbuf.h"
#include "base/failinj.h"
#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/store_sqlite.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/jprof-store-test.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A batch with one cpu window of two stacks (3 + 4 samples) at `start`. */
static void make(jp_batch *b, const char *id, int64_t start, const char *pod)
{
    jp_batch_init(b);
    b->id = jp_xstrdup(id);
    b->collector = jp_xstrdup("test@node");
    uint32_t f0 = jp_batch_add_frame(b, "main", 4), f1 = jp_batch_add_frame(b, "a.B.work", 8);
    uint32_t s1[1] = {f0}, s2[2] = {f0, f1};
    uint32_t st1 = jp_batch_add_stack(b, s1, 1, false), st2 = jp_batch_add_stack(b, s2, 2, false);
    uint32_t th = jp_batch_add_thread(b, "worker", 6);
    jp_batch_window *w = jp_batch_add_window(b);
    w->target.ns = jp_xstrdup("shop");
    w->target.service = jp_xstrdup("checkout");
    w->target.pod = jp_xstrdup(pod);
    w->kind = JP_KIND_CPU;
    w->start_ns = start;
    w->end_ns = start + 60 * JP_NS_PER_SEC;
    w->events = 7;
    jp_batch_window_add_row(w, st1, JP_BATCH_NO_THREAD, 3, 30);
    jp_batch_window_add_row(w, st2, th, 4, 40);
}

typedef struct sums {
    uint64_t samples, value, rows, depth2;
    bool saw_thread;
} sums;

static bool sum_cb(const store_stack_row *r, void *ctx)
{
    sums *s = ctx;
    s->samples += r->samples;
    s->value += r->value;
    s->rows++;
    if (r->depth == 2) {
        s->depth2++;
        assert_int_equal(r->frame_lens[1], 8);
        assert_memory_equal(r->frames[1], "a.B.work", 8);
    }
    if (r->thread && !strcmp(r->thread, "worker"))
        s->saw_thread = true;
    return true;
}

static sums flame(store *s, int64_t from, int64_t to, const store_budget *b, store_query_info *qi)
{
    store_filter f = {
        .ns = "shop", .service = "checkout", .kind = JP_KIND_CPU, .from_ns = from, .to_ns = to};
    sums out = {0};
    store_query_info local;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(store_flame(s, &f, b, sum_cb, &out, NULL, qi ? qi : &local, &e), JP_OK);
    return out;
}

static void test_write_dedupe_reopen(void **state)
{
    (void)state;
    store_config cfg = {.retention_days = 7};
    store *s;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    int64_t now = store_now_ns();
    jp_batch b;
    make(&b, "batch-1", now - 600 * JP_NS_PER_SEC, "p1");
    store_write_result r;
    assert_int_equal(s->ops->write_batch(s, &b, NULL, &r, &e), JP_OK);
    assert_false(r.duplicate);
    assert_int_equal(r.windows, 1);
    assert_int_equal(r.stack_rows, 2);
    assert_int_equal(s->ops->write_batch(s, &b, NULL, &r, &e), JP_OK);
    assert_true(r.duplicate);
    assert_int_equal(r.windows, 0);
    sums x = flame(s, now - 3600 * JP_NS_PER_SEC, now, NULL, NULL);
    assert_int_equal(x.samples, 7);
    assert_int_equal(x.value, 70);
    assert_int_equal(x.depth2, 1);
    assert_true(x.saw_thread);
    /* a flame query without a service or with a kind out of range is
     * refused before the store reads anything, totals zeroed */
    store_filter bad = {.ns = "shop", .kind = JP_KIND_CPU, .to_ns = now};
    store_flame_totals tot = {.windows = 99};
    store_query_info qi0;
    sums none = {0};
    assert_int_equal(store_flame(s, &bad, NULL, sum_cb, &none, &tot, &qi0, &e), JP_ERR_USAGE);
    assert_non_null(strstr(e.msg, "flame needs namespace, service, kind"));
    assert_int_equal(tot.windows, 0);
    bad.service = "checkout";
    bad.kind = JP_KIND_COUNT;
    assert_int_equal(store_flame(s, &bad, NULL, sum_cb, &none, NULL, &qi0, &e), JP_ERR_USAGE);
    assert_int_equal(none.samples, 0);
    store_close(s);
    /* after a restart the id is still known */
    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    assert_int_equal(s->ops->write_batch(s, &b, NULL, &r, &e), JP_OK);
    assert_true(r.duplicate);
    x = flame(s, now - 3600 * JP_NS_PER_SEC, now, NULL, NULL);
    assert_int_equal(x.samples, 7);
    /* a budget of one row stops early and says so */
    store_budget bud = {.max_rows = 1};
    store_query_info qi;
    jp_batch b2;
    make(&b2, "batch-2", now - 300 * JP_NS_PER_SEC, "p2");
    assert_int_equal(s->ops->write_batch(s, &b2, NULL, &r, &e), JP_OK);
    x = flame(s, now - 3600 * JP_NS_PER_SEC, now, &bud, &qi);
    assert_true(qi.partial);
    assert_non_null(strstr(qi.partial_reason, "row budget"));
    assert_true(x.samples < 14);
    jp_batch_cleanup(&b2);
    jp_batch_cleanup(&b);
    store_close(s);
}

/* Adds a status of pod with the policy mode (NULL: an older agent). */
static void add_status(jp_batch *b, const char *pod, int64_t t, const char *mode, int64_t until)
{
    b->statuses = jp_xreallocarray(b->statuses, b->nstatuses + 1, sizeof *b->statuses);
    jp_batch_status *st = &b->statuses[b->nstatuses++];
    memset(st, 0, sizeof *st);
    st->target.ns = jp_xstrdup("shop");
    st->target.service = jp_xstrdup("checkout");
    st->target.pod = jp_xstrdup(pod);
    st->time_ns = t;
    st->state = jp_xstrdup("active");
    st->mode = mode ? jp_xstrdup(mode) : NULL;
    st->until_ns = until;
}

static bool mode_row(const store_doc_row *r, void *ctx)
{
    jp_strbuf_printf(ctx, "%s:%s:%lld;", r->target->pod, r->mode ? r->mode : "-",
                     (long long)r->until_ns);
    return true;
}

static bool mode_target(const store_target_row *r, void *ctx)
{
    jp_strbuf_printf(ctx, "%s:%s:%lld;", r->target->pod, r->mode ? r->mode : "-",
                     (long long)r->until_ns);
    return true;
}

static void modes(store *s, int64_t now, jp_strbuf *docs, jp_strbuf *targets)
{
    store_filter f = {.ns = "shop", .from_ns = now - 3600 * JP_NS_PER_SEC, .to_ns = now + 1};
    store_query_info qi;
    jp_strbuf_reset(docs);
    jp_strbuf_reset(targets);
    assert_int_equal(s->ops->statuses(s, &f, NULL, mode_row, docs, &qi, NULL), JP_OK);
    assert_int_equal(s->ops->targets(s, &f, NULL, mode_target, targets, &qi, NULL), JP_OK);
}

/* A day file written before statuses had a mode (schema 1) is migrated when
 * the server opens it: its old rows read as "unknown", new rows keep theirs. */
static bool gc_row(const store_doc_row *r, void *ctx)
{
    jp_strbuf_printf(ctx, "%s:%.*s;", r->target->pod, (int)r->json_len, r->json);
    return true;
}

static void test_status_mode_and_migration(void **state)
{
    (void)state;
    store_config cfg = {.retention_days = 7};
    store *s;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    int64_t now = store_now_ns(), until = now + 1800 * JP_NS_PER_SEC;
    jp_batch b;
    make(&b, "batch-m1", now - 600 * JP_NS_PER_SEC, "p1");
    add_status(&b, "p1", now - 500 * JP_NS_PER_SEC, "temporary", until);
    store_write_result r;
    assert_int_equal(s->ops->write_batch(s, &b, NULL, &r, &e), JP_OK);
    jp_strbuf docs, targets;
    jp_strbuf_init(&docs, 0);
    jp_strbuf_init(&targets, 0);
    char want[96];
    snprintf(want, sizeof want, "p1:temporary:%lld;", (long long)until);
    modes(s, now, &docs, &targets);
    assert_string_equal(docs.data, want);
    assert_string_equal(targets.data, want);
    store_close(s);
    jp_batch_cleanup(&b);

    /* make the day file what a schema-1 server left: no mode columns */
    char path[400], day[16];
    store_day_format(store_day_of(now - 500 * JP_NS_PER_SEC), day, sizeof day);
    snprintf(path, sizeof path, "%s/jprof-%s.db", dir, day);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "ALTER TABLE statuses DROP COLUMN mode;"
                                  "ALTER TABLE statuses DROP COLUMN until_time;"
                                  "ALTER TABLE stacks DROP COLUMN kinds;"
                                  "DROP TABLE gc;"
                                  "DROP TABLE heaps;"
                                  "UPDATE meta SET value='1' WHERE key='schema_version'",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);

    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    modes(s, now, &docs, &targets);
    assert_string_equal(docs.data, "p1:-:0;");
    jp_batch b2;
    make(&b2, "batch-m2", now - 300 * JP_NS_PER_SEC, "p2");
    add_status(&b2, "p2", now - 200 * JP_NS_PER_SEC, "continuous", 0);
    /* schema 3: GC summaries, in a table the old file did not have */
    jp_batch_gc *g = jp_batch_add_gc(&b2);
    g->target.ns = jp_xstrdup("shop");
    g->target.service = jp_xstrdup("checkout");
    g->target.pod = jp_xstrdup("p2");
    g->w.s.from_ns = now - 500 * JP_NS_PER_SEC; /* the migrated day */
    g->w.s.to_ns = g->w.s.from_ns + 60 * JP_NS_PER_SEC;
    g->w.s.pauses = g->w.npause = 2;
    g->w.pause_ns[0] = 1000;
    g->w.pause_ns[1] = g->w.s.pause_max_ns = g->w.s.pause_p99_ns = 3000;
    g->w.s.pause_total_ns = 4000;
    /* schema 4: class histograms, likewise */
    b2.heaps = jp_xcalloc(1, sizeof *b2.heaps);
    b2.heaps_cap = b2.nheaps = 1;
    b2.heaps[0].target.ns = jp_xstrdup("shop");
    b2.heaps[0].target.service = jp_xstrdup("checkout");
    b2.heaps[0].target.pod = jp_xstrdup("p2");
    b2.heaps[0].time_ns = now - 450 * JP_NS_PER_SEC;
    b2.heaps[0].json = jp_xstrdup("{\"histogram\":{}}");
    b2.heaps[0].len = strlen(b2.heaps[0].json);
    assert_int_equal(s->ops->write_batch(s, &b2, NULL, &r, &e), JP_OK);
    assert_int_equal(r.docs, 3);
    jp_strbuf gcs;
    jp_strbuf_init(&gcs, 0);
    store_filter gf = {.ns = "shop", .from_ns = now - 3600 * JP_NS_PER_SEC, .to_ns = now};
    store_query_info gi;
    assert_int_equal(s->ops->gc(s, &gf, NULL, gc_row, &gcs, &gi, &e), JP_OK);
    assert_non_null(strstr(gcs.data, "p2:{\"start\":"));
    assert_non_null(strstr(gcs.data, "\"pause_ns\":[1000,3000]"));
    jp_strbuf_reset(&gcs);
    assert_int_equal(s->ops->heaps(s, &gf, NULL, gc_row, &gcs, &gi, &e), JP_OK);
    assert_string_equal(gcs.data, "p2:{\"histogram\":{}};");
    jp_strbuf_cleanup(&gcs);
    modes(s, now, &docs, &targets);
    assert_string_equal(docs.data, "p2:continuous:0;p1:-:0;");
    assert_string_equal(targets.data, "p1:-:0;p2:continuous:0;");
    store_close(s);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_stmt *q;
    assert_int_equal(
        sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='schema_version'", -1, &q, NULL),
        SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "4");
    sqlite3_finalize(q);
    sqlite3_close(db);
    jp_batch_cleanup(&b2);
    jp_strbuf_cleanup(&docs);
    jp_strbuf_cleanup(&targets);
}

/* Torture (curl style): the Nth SQLite step or exec of the write path fails,
 * for every N until none fires. Each time the write must end in a clear
 * retryable error (JP_ERR_IO naming the step), the store must stay usable,
 * the same batch must then be written once, and every acknowledged batch
 * must be there exactly once (the in-memory caches must not outlive a
 * rollback). */
static void test_torture_write_path(void **state)
{
    (void)state;
    store_config cfg = {.retention_days = 7};
    store *s;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    int64_t now = store_now_ns(), t0 = now - 1800 * JP_NS_PER_SEC;
    long n, fired = 0;
    int acked = 0;
    for (n = 1; n < 500; n++) {
        char id[32], pod[32];
        snprintf(id, sizeof id, "torture-%ld", n);
        snprintf(pod, sizeof pod, "t%ld", n); /* a new target: every step runs */
        jp_batch b;
        make(&b, id, t0 + n * JP_NS_PER_SEC, pod);
        store_write_result r;
        jp_fail_set(n, "sqlite");
        jp_err rc = s->ops->write_batch(s, &b, NULL, &r, &e);
        bool hit = jp_fail_fired();
        jp_fail_set(0, NULL);
        if (hit) {
            fired++;
            assert_int_equal(rc, JP_ERR_IO);
            if (!strstr(e.msg, "injected failure"))
                fail_msg("write %ld: unexpected error: %s", n, e.msg);
            rc = s->ops->write_batch(s, &b, NULL, &r, &e); /* the agent's retry */
        }
        assert_int_equal(rc, JP_OK);
        assert_false(r.duplicate);
        acked++;
        jp_batch_cleanup(&b);
        if (!hit)
            break; /* N beyond every step of one write: done */
    }
    assert_true(fired >= 5);
    sums x = flame(s, t0 - JP_NS_PER_SEC, now, NULL, NULL);
    assert_int_equal(x.samples, 7 * (uint64_t)acked);
    assert_int_equal(x.value, 70 * (uint64_t)acked);
    store_close(s);
    /* durable: reopened, the same totals, and every id is a duplicate */
    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    x = flame(s, t0 - JP_NS_PER_SEC, now, NULL, NULL);
    assert_int_equal(x.samples, 7 * (uint64_t)acked);
    jp_batch b;
    make(&b, "torture-1", t0 + JP_NS_PER_SEC, "t1");
    store_write_result r;
    assert_int_equal(s->ops->write_batch(s, &b, NULL, &r, &e), JP_OK);
    assert_true(r.duplicate);
    jp_batch_cleanup(&b);
    store_close(s);
    print_message("torture: %ld injected failures of %d writes, all recovered\n", fired, acked);
}

static bool count_day(const store_day_row *d, void *ctx)
{
    (void)d;
    (*(int *)ctx)++;
    return true;
}

static void test_retention_removes_old_days(void **state)
{
    (void)state;
    store_config cfg = {.retention_days = 7};
    store *s;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    int64_t now = store_now_ns();
    jp_batch old, mid;
    make(&old, "old", now - 8 * STORE_DAY_NS, "p1");
    make(&mid, "mid", now - 5 * STORE_DAY_NS, "p1");
    store_write_result r;
    assert_int_equal(s->ops->write_batch(s, &old, NULL, &r, &e), JP_OK);
    assert_int_equal(s->ops->write_batch(s, &mid, NULL, &r, &e), JP_OK);
    int days = 0;
    assert_int_equal(s->ops->days(s, count_day, &days, &e), JP_OK);
    assert_int_equal(days, 3); /* 8 and 5 days ago, and today's ledger */
    uint32_t removed = 0;
    assert_int_equal(s->ops->enforce_retention(s, 7, &removed, &e), JP_OK);
    assert_int_equal(removed, 1);
    days = 0;
    s->ops->days(s, count_day, &days, &e);
    assert_int_equal(days, 2);
    sums x = flame(s, now - 9 * STORE_DAY_NS, now, NULL, NULL);
    assert_int_equal(x.samples, 7); /* only the 5-day-old window is left */
    store_stats st;
    s->ops->stats(s, &st);
    assert_true(st.retention_days_removed >= 1);
    jp_batch_cleanup(&old);
    jp_batch_cleanup(&mid);
    store_close(s);
}

typedef struct race {
    store *s;
    const jp_batch *b;
    bool dup;
} race;

static void *race_main(void *arg)
{
    race *r = arg;
    store_write_result res;
    jp_error e;
    jp_error_init(&e);
    if (r->s->ops->write_batch(r->s, r->b, NULL, &res, &e) == JP_OK)
        r->dup = res.duplicate;
    return NULL;
}

static void test_concurrent_duplicates_count_once(void **state)
{
    (void)state;
    store_config cfg = {.retention_days = 7};
    store *s;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    int64_t now = store_now_ns();
    jp_batch b;
    make(&b, "race-1", now - 60 * JP_NS_PER_SEC, "race");
    race rs[8];
    pthread_t th[8];
    for (int i = 0; i < 8; i++) {
        rs[i] = (race){.s = s, .b = &b, .dup = true};
        pthread_create(&th[i], NULL, race_main, &rs[i]);
    }
    int firsts = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        firsts += !rs[i].dup;
    }
    assert_int_equal(firsts, 1);
    store_filter f = {.ns = "shop",
                      .service = "checkout",
                      .pod = "race",
                      .kind = JP_KIND_CPU,
                      .from_ns = now - 3600 * JP_NS_PER_SEC,
                      .to_ns = now};
    sums x = {0};
    store_query_info qi;
    assert_int_equal(store_flame(s, &f, NULL, sum_cb, &x, NULL, &qi, &e), JP_OK);
    assert_int_equal(x.samples, 7);
    jp_batch_cleanup(&b);
    store_close(s);
}

static void test_rollups_equal_windows(void **state)
{
    (void)state;
    store_config cfg = {.retention_days = 7};
    store *s;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(store_sqlite_open(dir, &cfg, &s, &e), JP_OK);
    int64_t now = store_now_ns(), minute = 60 * JP_NS_PER_SEC;
    /* three pods in one finished one-minute bucket, one pod in the current one */
    int64_t bucket = (now / minute - 5) * minute;
    const char *pods[3] = {"p1", "p2", "p3"};
    store_write_result r;
    for (int i = 0; i < 3; i++) {
        char id[32];
        snprintf(id, sizeof id, "roll-%d", i);
        jp_batch b;
        make(&b, id, bucket + i * 10 * JP_NS_PER_SEC, pods[i]);
        assert_int_equal(s->ops->write_batch(s, &b, NULL, &r, &e), JP_OK);
        jp_batch_cleanup(&b);
    }
    jp_batch cur;
    make(&cur, "roll-now", now - JP_NS_PER_SEC, "p1");
    assert_int_equal(s->ops->write_batch(s, &cur, NULL, &r, &e), JP_OK);
    jp_batch_cleanup(&cur);
    int64_t from = bucket - minute, to = now + JP_NS_PER_SEC;
    store_query_info before, after;
    sums x0 = flame(s, from, to, NULL, &before);
    assert_int_equal(x0.samples, 28);
    uint32_t built = 0;
    assert_int_equal(store_sqlite_rollup(s, &built, &e), JP_OK);
    assert_int_equal(built, 1);
    sums x1 = flame(s, from, to, NULL, &after);
    assert_int_equal(x1.samples, 28);
    assert_int_equal(x1.value, x0.value);
    assert_true(x1.saw_thread);
    /* 3 windows of 2 rows became one rollup of 2 rows */
    assert_int_equal(before.rows_scanned, 8);
    assert_int_equal(after.rows_scanned, 4);
    /* a range that cuts the bucket reads the windows, not the rollup */
    sums part = flame(s, bucket + 5 * JP_NS_PER_SEC, to, NULL, NULL);
    assert_int_equal(part.samples, 21);
    /* a pod filter never uses the rollup */
    store_filter pf = {.ns = "shop",
                       .service = "checkout",
                       .pod = "p2",
                       .kind = JP_KIND_CPU,
                       .from_ns = from,
                       .to_ns = to};
    sums pod = {0};
    store_query_info qi;
    assert_int_equal(store_flame(s, &pf, NULL, sum_cb, &pod, NULL, &qi, &e), JP_OK);
    assert_int_equal(pod.samples, 7);
    /* a late window in the bucket: the rollup is dropped and the sum is right */
    jp_batch late;
    make(&late, "roll-late", bucket + 30 * JP_NS_PER_SEC, "p4");
    assert_int_equal(s->ops->write_batch(s, &late, NULL, &r, &e), JP_OK);
    jp_batch_cleanup(&late);
    sums x2 = flame(s, from, to, NULL, NULL);
    assert_int_equal(x2.samples, 35);
    assert_int_equal(store_sqlite_rollup(s, &built, &e), JP_OK);
    assert_int_equal(built, 1);
    sums x3 = flame(s, from, to, NULL, NULL);
    assert_int_equal(x3.samples, 35);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_dedupe_reopen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_mode_and_migration, setup, teardown),
        cmocka_unit_test_setup_teardown(test_torture_write_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retention_removes_old_days, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_duplicates_count_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rollups_equal_windows, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
