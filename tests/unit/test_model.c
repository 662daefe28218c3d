/* Unit tests of src/model: interning, aggregation, flame tree, top table, search. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/diff.h"
#include "model/flame.h"
#include "model/iodetail.h"
#include "model/profile.h"
#include "model/units.h"

static void test_profile_interns_and_aggregates(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    uint32_t a = jp_profile_frame(p, "A.main", 6, JP_FRAME_INTERPRETED);
    uint32_t b = jp_profile_frame(p, "B.work", 6, JP_FRAME_JIT);
    assert_int_equal(jp_profile_frame(p, "A.main", 6, JP_FRAME_JIT), a);
    uint32_t s1[] = {a, b};
    uint32_t st = jp_profile_stack(p, s1, 2, false);
    assert_int_equal(jp_profile_stack(p, s1, 2, false), st);
    jp_profile_add(p, JP_KIND_CPU, st, JP_NO_THREAD, 1, 1, 10);
    jp_profile_add(p, JP_KIND_CPU, st, JP_NO_THREAD, 1, 1, 10);
    assert_int_equal(p->kinds[JP_KIND_CPU].count, 1);
    assert_int_equal(p->kinds[JP_KIND_CPU].cells[0].samples, 2);
    assert_int_equal(p->kinds[JP_KIND_CPU].value, 20);
    assert_true(jp_profile_has_kind(p, JP_KIND_CPU));
    assert_false(jp_profile_has_kind(p, JP_KIND_ALLOC));
    jp_profile_free(p);
}

/* Builds: main;a;b x3, main;a x1, main;b;b;c x2 (recursive b), with thread T1/T2. */
static jp_profile *make_profile(void)
{
    jp_profile *p = jp_profile_new();
    uint32_t m = jp_profile_frame(p, "app.Main.main", 13, JP_FRAME_INTERPRETED);
    uint32_t a = jp_profile_frame(p, "app.A.run", 9, JP_FRAME_JIT);
    uint32_t b = jp_profile_frame(p, "app.B.loop", 10, JP_FRAME_JIT);
    uint32_t c = jp_profile_frame(p, "write", 5, JP_FRAME_NATIVE);
    uint32_t t1 = jp_profile_thread(p, "T1", 2), t2 = jp_profile_thread(p, "T2", 2);
    uint32_t s1[] = {m, a, b}, s2[] = {m, a}, s3[] = {m, b, b, c};
    uint32_t i1 = jp_profile_stack(p, s1, 3, false);
    uint32_t i2 = jp_profile_stack(p, s2, 2, false);
    uint32_t i3 = jp_profile_stack(p, s3, 4, true);
    jp_profile_add(p, JP_KIND_CPU, i1, t1, 3, 3, 30);
    jp_profile_add(p, JP_KIND_CPU, i2, t1, 1, 1, 10);
    jp_profile_add(p, JP_KIND_CPU, i3, t2, 2, 2, 20);
    return p;
}

static uint32_t find_child(const jp_flame *f, uint32_t node, const char *name)
{
    for (uint32_t c = f->nodes[node].first_child; c != JP_FLAME_NONE;
         c = f->nodes[c].next_sibling) {
        size_t len;
        const char *n = jp_flame_node_name(f, c, &len);
        if (len == strlen(name) && !memcmp(n, name, len))
            return c;
    }
    return JP_FLAME_NONE;
}

static void test_flame_tree_totals(void **state)
{
    (void)state;
    jp_profile *p = make_profile();
    jp_flame *f = jp_flame_build(p, JP_KIND_CPU, false);
    assert_int_equal(f->nodes[0].total_samples, 6);
    assert_int_equal(f->nodes[0].total_value, 60);
    uint32_t m = find_child(f, 0, "app.Main.main");
    assert_int_not_equal(m, JP_FLAME_NONE);
    uint32_t a = find_child(f, m, "app.A.run");
    uint32_t b = find_child(f, m, "app.B.loop");
    assert_int_equal(f->nodes[a].total_samples, 4);
    assert_int_equal(f->nodes[a].self_samples, 1);
    assert_int_equal(f->nodes[b].total_samples, 2);
    /* children sorted by total: A (40) before B (20) */
    assert_int_equal(f->nodes[m].first_child, a);
    assert_int_equal(f->max_depth, 4);
    jp_flame_free(f);

    jp_flame *ft = jp_flame_build(p, JP_KIND_CPU, true);
    uint32_t t1 = find_child(ft, 0, "T1");
    assert_int_not_equal(t1, JP_FLAME_NONE);
    assert_int_equal(ft->nodes[t1].total_samples, 4);
    jp_flame_free(ft);
    jp_profile_free(p);
}

static void test_top_counts_recursion_once(void **state)
{
    (void)state;
    jp_profile *p = make_profile();
    jp_flame *f = jp_flame_build(p, JP_KIND_CPU, false);
    jp_top_row *rows;
    size_t n = jp_flame_top(f, 0, true, &rows);
    assert_int_equal(n, 4);
    /* self by value: B.loop 30, write 20, A.run 10, main 0 */
    size_t len;
    const char *name = jp_profile_frame_name(p, rows[0].frame, &len);
    assert_memory_equal(name, "app.B.loop", len);
    assert_int_equal(rows[0].self_value, 30);
    /* B.loop appears twice on one stack: its total is 30 + 20, not 30 + 40 */
    assert_int_equal(rows[0].total_value, 50);
    assert_int_equal(rows[3].total_value, 60); /* main */
    free(rows);
    /* zoomed into A.run: only the A subtree counts */
    uint32_t a = find_child(f, find_child(f, 0, "app.Main.main"), "app.A.run");
    n = jp_flame_top(f, a, false, &rows);
    assert_int_equal(n, 2);
    assert_int_equal(rows[0].self_samples, 3);
    assert_int_equal(rows[1].total_samples, 4);
    free(rows);
    jp_flame_free(f);
    jp_profile_free(p);
}

static void test_search_share_counts_stacks_once(void **state)
{
    (void)state;
    jp_profile *p = make_profile();
    jp_flame *f = jp_flame_build(p, JP_KIND_CPU, false);
    uint8_t *m = calloc(f->count, 1);
    uint64_t share = 0;
    char err[128];
    long hits = jp_flame_search(f, 0, "B\\.loop$", false, m, &share, err, sizeof err);
    assert_int_equal(hits, 3); /* under A, and twice under main;B;B */
    assert_int_equal(share, 5);
    hits = jp_flame_search(f, 0, "^write|A\\.run", true, m, &share, err, sizeof err);
    assert_int_equal(hits, 2);
    assert_int_equal(share, 60);
    assert_int_equal(jp_flame_search(f, 0, "([", false, m, &share, err, sizeof err), -1);
    assert_true(strlen(err) > 0);
    free(m);
    jp_flame_free(f);
    jp_profile_free(p);
}

static void test_reverse_tree_shows_callers(void **state)
{
    (void)state;
    jp_profile *p = make_profile();
    size_t len;
    uint32_t b = JP_FLAME_NONE;
    for (uint32_t i = 0; i < p->nframes; i++) {
        const char *n = jp_profile_frame_name(p, i, &len);
        if (len == 10 && !memcmp(n, "app.B.loop", 10))
            b = i;
    }
    jp_flame *r = jp_flame_build_reverse(p, JP_KIND_CPU, b, false);
    assert_true(r->reversed);
    assert_int_equal(r->nodes[0].total_samples, 5);
    uint32_t focus = find_child(r, 0, "app.B.loop");
    assert_int_equal(r->nodes[focus].total_samples, 5);
    /* callers of B.loop: A.run (3) and B.loop itself (2, recursion) */
    uint32_t ca = find_child(r, focus, "app.A.run");
    uint32_t cb = find_child(r, focus, "app.B.loop");
    assert_int_equal(r->nodes[ca].total_samples, 3);
    assert_int_equal(r->nodes[cb].total_samples, 2);
    assert_int_equal(r->nodes[find_child(r, ca, "app.Main.main")].self_samples, 3);
    jp_flame_free(r);
    jp_profile_free(p);
}

static void test_merge_and_units(void **state)
{
    (void)state;
    jp_profile *a = make_profile(), *b = make_profile();
    jp_profile_merge(a, b);
    assert_int_equal(a->kinds[JP_KIND_CPU].samples, 12);
    assert_int_equal(a->kinds[JP_KIND_CPU].count, 3);
    assert_int_equal(a->nstacks, 3);
    char buf[32];
    jp_format_ns(1500000, buf, sizeof buf);
    assert_string_equal(buf, "1.5 ms");
    jp_format_bytes(3 * 1024 * 1024, buf, sizeof buf);
    assert_string_equal(buf, "3 MB");
    jp_format_value(JP_KIND_LOCK, 1, 2000000000ULL, buf, sizeof buf);
    assert_string_equal(buf, "2 s");
    jp_profile_free(a);
    jp_profile_free(b);
}

/* add STACK ("a;b;c") SAMPLES to kind cpu of p, value = samples x 10 ms */
static void add_collapsed(jp_profile *p, const char *stack, uint64_t n)
{
    uint32_t fr[16];
    size_t depth = 0;
    const char *s = stack;
    while (*s && depth < 16) {
        const char *e = strchr(s, ';');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        fr[depth++] = jp_profile_frame(p, s, len, JP_FRAME_JIT);
        s += len + (e != NULL);
    }
    jp_profile_add(p, JP_KIND_CPU, jp_profile_stack(p, fr, depth, false), JP_NO_THREAD, n, n,
                   n * 10000000);
}

static void test_diff_grow_shrink_vanish(void **state)
{
    (void)state;
    jp_profile *old = jp_profile_new(), *new_ = jp_profile_new();
    add_collapsed(old, "main;serve;parse", 50);
    add_collapsed(old, "main;serve;legacy", 50); /* gone in the new one */
    add_collapsed(new_, "main;serve;parse", 100);
    add_collapsed(new_, "main;serve;render", 100); /* new */
    old->start_ns = 1000000000;
    old->end_ns = 11000000000; /* 10 s */
    new_->start_ns = 1000000000;
    new_->end_ns = 21000000000; /* 20 s */
    jp_diff *d;
    jp_error e;
    jp_error_init(&e);
    /* a kind neither has: an empty comparison, both sides zero */
    assert_int_equal(jp_diff_new(old, new_, JP_KIND_ALLOC, false, false, JP_DIFF_NONE, &d, &e),
                     JP_OK);
    assert_int_equal(d->prof->kinds[JP_KIND_ALLOC].count, 0);
    assert_int_equal(d->old_total_samples, 0);
    jp_diff_tree(d);
    assert_int_equal(d->node_old_total[0], 0);
    jp_diff_free(d);
    assert_int_equal(jp_diff_new(old, new_, JP_KIND_CPU, false, false, JP_DIFF_NONE, &d, &e),
                     JP_OK);
    /* the cells hold the new side, plus a zero cell for the vanished stack */
    assert_int_equal(d->prof->kinds[JP_KIND_CPU].count, 3);
    assert_int_equal(d->prof->kinds[JP_KIND_CPU].samples, 200);
    assert_int_equal(d->old_total_samples, 100);
    jp_diff_tree(d);
    assert_int_equal(d->tree->nodes[0].total_samples, 200);
    assert_int_equal(d->node_old_total[0], 100);
    jp_diff_row *rows;
    size_t n = jp_diff_top(d, 0, &rows);
    assert_int_equal(n, 5); /* main serve parse legacy render */
    size_t len;
    /* render grew by 100 (self), legacy shrank by 50, parse grew by 50 */
    assert_memory_equal(jp_profile_frame_name(d->prof, rows[0].frame, &len), "render", 6);
    assert_true(rows[0].old_self == 0 && rows[0].new_self == 100);
    bool legacy = false;
    for (size_t i = 0; i < n; i++) {
        const char *name = jp_profile_frame_name(d->prof, rows[i].frame, &len);
        if (len == 6 && !memcmp(name, "legacy", 6)) {
            legacy = true;
            assert_true(rows[i].old_self == 50 && rows[i].new_self == 0);
        }
    }
    assert_true(legacy);
    free(rows);
    jp_diff_free(d);

    /* per sample: the old side is scaled to the new total (x2) */
    assert_int_equal(jp_diff_new(old, new_, JP_KIND_CPU, false, true, JP_DIFF_PER_SAMPLE, &d, &e),
                     JP_OK);
    assert_true(fabs(d->old_scale - 2.0) < 1e-9);
    jp_diff_free(d);
    /* per second: 20 s against 10 s, so the old side doubles too */
    assert_int_equal(jp_diff_new(old, new_, JP_KIND_CPU, false, false, JP_DIFF_PER_SECOND, &d, &e),
                     JP_OK);
    assert_true(fabs(jp_diff_old(d, 50) - 100.0) < 1e-9);
    jp_diff_free(d);
    old->start_ns = 0;
    assert_int_equal(jp_diff_new(old, new_, JP_KIND_CPU, false, false, JP_DIFF_PER_SECOND, &d, &e),
                     JP_ERR_USAGE);
    assert_null(d);
    jp_diff_norm norm;
    assert_true(jp_diff_norm_parse("second", &norm) && norm == JP_DIFF_PER_SECOND);
    assert_false(jp_diff_norm_parse("minute", &norm));
    jp_profile_free(old);
    jp_profile_free(new_);
}

/* The interactive view's overlay: the old side laid over the forward and
 * the reversed tree, the table under a zoomed node, normalisation switched
 * afterwards (and refused, unchanged, without durations). */
static void test_diff_overlay_and_norm(void **state)
{
    (void)state;
    jp_profile *old = jp_profile_new(), *new_ = jp_profile_new();
    add_collapsed(old, "main;serve;parse", 50);
    add_collapsed(old, "main;serve;legacy", 50);
    add_collapsed(new_, "main;serve;parse", 100);
    add_collapsed(new_, "main;serve;render", 100);
    jp_diff *d;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_diff_new(old, new_, JP_KIND_CPU, false, false, JP_DIFF_NONE, &d, &e),
                     JP_OK);
    jp_flame *f = jp_flame_build(d->prof, JP_KIND_CPU, false);
    uint32_t *map;
    jp_flame *g = jp_diff_old_tree(d, f, &map);
    /* the cells hold the new side again afterwards */
    assert_int_equal(d->prof->kinds[JP_KIND_CPU].samples, 200);
    assert_int_equal(g->nodes[0].total_samples, 100);
    uint32_t serve = JP_FLAME_NONE;
    for (uint32_t n = 0; n < f->count; n++) {
        assert_int_not_equal(map[n], JP_FLAME_NONE);
        size_t la, lb;
        const char *a = jp_flame_node_name(f, n, &la), *b = jp_flame_node_name(g, map[n], &lb);
        assert_int_equal(la, lb);
        assert_memory_equal(a, b, la);
        if (la == 5 && !memcmp(a, "serve", 5))
            serve = n;
        if (la == 6 && !memcmp(a, "legacy", 6)) {
            assert_int_equal(f->nodes[n].total_samples, 0);
            assert_int_equal(g->nodes[map[n]].total_samples, 50);
        }
    }
    assert_int_not_equal(serve, JP_FLAME_NONE);
    jp_diff_row *rows;
    size_t n = jp_diff_top_under(d, f, g, map, serve, false, &rows);
    assert_int_equal(n, 4); /* serve parse legacy render */
    size_t len;
    assert_memory_equal(jp_profile_frame_name(d->prof, rows[0].frame, &len), "render", 6);
    free(rows);
    /* the callers of parse, both sides */
    uint32_t parse = f->nodes[serve].first_child;
    while (parse != JP_FLAME_NONE) {
        const char *nm = jp_flame_node_name(f, parse, &len);
        if (len == 5 && !memcmp(nm, "parse", 5))
            break;
        parse = f->nodes[parse].next_sibling;
    }
    assert_int_not_equal(parse, JP_FLAME_NONE);
    jp_flame *r = jp_flame_build_reverse(d->prof, JP_KIND_CPU, f->nodes[parse].frame, false);
    uint32_t *rmap;
    jp_flame *rg = jp_diff_old_tree(d, r, &rmap);
    assert_true(rg->reversed);
    assert_int_equal(r->nodes[0].total_samples, 100);
    assert_int_equal(rg->nodes[rmap[0]].total_samples, 50);
    free(rmap);
    jp_flame_free(rg);
    jp_flame_free(r);
    /* per sample afterwards: x2; per second refused without durations */
    assert_int_equal(jp_diff_set_norm(d, JP_DIFF_PER_SAMPLE, &e), JP_OK);
    assert_true(fabs(jp_diff_scale_for(d, false) - 2.0) < 1e-9);
    assert_int_equal(jp_diff_set_norm(d, JP_DIFF_PER_SECOND, &e), JP_ERR_USAGE);
    assert_int_equal(d->norm, JP_DIFF_PER_SAMPLE);
    free(map);
    jp_flame_free(g);
    jp_flame_free(f);
    jp_diff_free(d);
    jp_profile_free(old);
    jp_profile_free(new_);
}

/* --io-detail's table: endpoints formatted, names cut, the entry cap
 * counting the rest as unlisted, merge adding up, most time first. */
static void test_io_detail_bounds(void **state)
{
    (void)state;
    jp_io_detail d;
    jp_io_detail_init(&d);
    jp_io_detail_add_socket(&d, "", 0, "::1", 3, 8080, 1, 100);
    jp_io_detail_add_socket(&d, "db", 2, "10.0.0.1", 8, 5432, 2, 900);
    jp_io_detail_add_socket(&d, "db", 2, "10.0.0.2", 8, 5432, 1, 100);
    char big[2000];
    memset(big, 'a', sizeof big);
    jp_io_detail_add(&d, JP_IO_FILE, big, sizeof big, 1, 5);
    const jp_io_entry **rows;
    size_t n = jp_io_detail_top(&d, JP_IO_SOCKET, 0, &rows);
    assert_int_equal(n, 2);
    assert_string_equal(rows[0]->name, "db:5432");
    assert_int_equal(rows[0]->events, 3);
    assert_int_equal(rows[0]->ns, 1000);
    assert_string_equal(rows[1]->name, "[::1]:8080");
    free(rows);
    n = jp_io_detail_top(&d, JP_IO_FILE, 0, &rows);
    assert_int_equal(n, 1);
    assert_int_equal(rows[0]->len, JP_IO_NAME_MAX);
    assert_memory_equal(rows[0]->name + JP_IO_NAME_MAX - 3, "...", 3);
    free(rows);
    jp_io_detail many;
    jp_io_detail_init(&many);
    for (int i = 0; i < JP_IO_MAX_ENTRIES + 5; i++) {
        char name[32];
        int len = snprintf(name, sizeof name, "/f/%d", i);
        jp_io_detail_add(&many, JP_IO_FILE, name, (size_t)len, 1, 2);
    }
    assert_int_equal(many.count, JP_IO_MAX_ENTRIES);
    assert_int_equal(many.other_events[JP_IO_FILE], 5);
    jp_io_detail_merge(&d, &many);
    assert_int_equal(d.events[JP_IO_FILE], 1 + JP_IO_MAX_ENTRIES + 5);
    assert_int_equal(d.ns[JP_IO_FILE], 5 + 2 * (JP_IO_MAX_ENTRIES + 5));
    assert_int_equal(d.events[JP_IO_SOCKET], 4);
    /* the merged table is full too: what did not fit is unlisted, not lost */
    uint64_t listed = 0;
    for (size_t i = 0; i < d.count; i++)
        if (d.entries[i].target == JP_IO_FILE)
            listed += d.entries[i].events;
    assert_int_equal(listed + d.other_events[JP_IO_FILE], d.events[JP_IO_FILE]);
    jp_io_detail_cleanup(&many);
    jp_io_detail_cleanup(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_interns_and_aggregates),
        cmocka_unit_test(test_flame_tree_totals),
        cmocka_unit_test(test_top_counts_recursion_once),
        cmocka_unit_test(test_search_share_counts_stacks_once),
        cmocka_unit_test(test_reverse_tree_shows_callers),
        cmocka_unit_test(test_merge_and_units),
        cmocka_unit_test(test_diff_grow_shrink_vanish),
        cmocka_unit_test(test_io_detail_bounds),
        cmocka_unit_test(test_diff_overlay_and_norm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
