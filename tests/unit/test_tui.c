/* Unit tests of src/tui without a terminal: batch output formats, the
 * canvas, the flame layout and the interactive view driven by keys and
 * checked on the rendered screen text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "model/flame.h"
#include "model/profile.h"
#include "tui/report_profile.h"
#include "tui/canvas.h"
#include "wire/flame_json.h"
#include "tui/flame_panel.h"
#include "tui/flame_layout.h"
#include "tui/flame_view.h"
#include "tui/options.h"
#include "tui/report_heap.h"

#define MS 1000000ULL

static uint32_t frame(jp_profile *p, const char *name, jp_frame_kind k)
{
    return jp_profile_frame(p, name, strlen(name), k);
}

static uint32_t stack(jp_profile *p, const uint32_t *frames, size_t n)
{
    return jp_profile_stack(p, frames, n, false);
}

/* cpu: 100 samples at 10 ms, 90 of them through ShopService.checkout;
 * alloc: 5 samples; no wall, lock or park. */
static jp_profile *shop_profile_after(const char *first);

static jp_profile *shop_profile(void)
{
    return shop_profile_after(NULL);
}

/* The same profile, with the frame `first` (when not NULL) interned before
 * the others: another window, whose frames are numbered otherwise. */
static jp_profile *shop_profile_after(const char *first)
{
    jp_profile *p = jp_profile_new();
    if (first)
        frame(p, first, JP_FRAME_JIT);
    uint32_t main_ = frame(p, "com.shop.Main.main", JP_FRAME_INTERPRETED);
    uint32_t checkout = frame(p, "com.shop.ShopService.checkout", JP_FRAME_JIT);
    uint32_t price = frame(p, "com.shop.Pricing.price", JP_FRAME_INLINED);
    uint32_t get = frame(p, "java.util.HashMap.get", JP_FRAME_JIT);
    uint32_t idle = frame(p, "com.shop.Main.idle", JP_FRAME_C1);
    uint32_t memmove = frame(p, "__memmove_avx_unaligned", JP_FRAME_NATIVE);
    uint32_t sys = frame(p, "do_syscall_64", JP_FRAME_KERNEL);
    uint32_t t1 = jp_profile_thread(p, "worker-1", 8);
    uint32_t t2 = jp_profile_thread(p, "worker-2", 8);
    uint32_t a[] = {main_, checkout, price};
    uint32_t b[] = {main_, checkout, get};
    uint32_t c[] = {main_, checkout};
    uint32_t d[] = {main_, idle, memmove, sys};
    uint32_t s1 = stack(p, a, 3), s2 = stack(p, b, 3), s3 = stack(p, c, 2), s4 = stack(p, d, 4);
    jp_profile_add(p, JP_KIND_CPU, s1, t1, 30, 30, 30 * 10 * MS);
    jp_profile_add(p, JP_KIND_CPU, s1, t2, 20, 20, 20 * 10 * MS);
    jp_profile_add(p, JP_KIND_CPU, s2, t2, 30, 30, 30 * 10 * MS);
    jp_profile_add(p, JP_KIND_CPU, s3, t1, 10, 10, 10 * 10 * MS);
    jp_profile_add(p, JP_KIND_CPU, s4, JP_NO_THREAD, 10, 10, 10 * 10 * MS);
    jp_profile_add(p, JP_KIND_ALLOC, s1, t1, 5, 5, 5u << 20);
    p->kinds[JP_KIND_CPU].period_ns = 10 * MS;
    p->start_ns = 1763762400000000000LL;
    p->end_ns = p->start_ns + 60LL * 1000000000LL;
    return p;
}

static void report_for(const jp_profile *p, jfr_report *rep)
{
    memset(rep, 0, sizeof *rep);
    rep->chunks_total = rep->chunks_read = 1;
    rep->events_read = 200;
    rep->events_used = 105;
    rep->start_ns = p->start_ns;
    rep->end_ns = p->end_ns;
    rep->major = 2;
    rep->minor = 1;
}

/* Runs a writer into a string the caller frees. */
typedef jp_err (*writer_fn)(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                            bool threads, bool by_value, jp_error *err);

static char *capture(writer_fn fn, const jp_profile *p, jp_kind k, bool threads, bool by_value)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    jfr_report rep;
    report_for(p, &rep);
    jp_error err;
    jp_error_init(&err);
    assert_int_equal(fn(f, p, &rep, k, threads, by_value, &err), JP_OK);
    fclose(f);
    return buf;
}

static jp_err collapsed_adapter(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                                bool threads, bool by_value, jp_error *err)
{
    (void)rep;
    return tui_write_collapsed(out, p, k, threads, by_value, err);
}

/* ---- batch formats ---- */

static void test_collapsed_merges_threads_and_sorts(void **state)
{
    (void)state;
    jp_profile *p = shop_profile();
    char *out = capture(collapsed_adapter, p, JP_KIND_CPU, false, false);
    assert_string_equal(out, "com.shop.Main.main;com.shop.Main.idle;__memmove_avx_unaligned;"
                             "do_syscall_64 10\n"
                             "com.shop.Main.main;com.shop.ShopService.checkout 10\n"
                             "com.shop.Main.main;com.shop.ShopService.checkout;"
                             "com.shop.Pricing.price 50\n"
                             "com.shop.Main.main;com.shop.ShopService.checkout;"
                             "java.util.HashMap.get 30\n");
    free(out);
    out = capture(collapsed_adapter, p, JP_KIND_ALLOC, false, true);
    assert_string_equal(out, "com.shop.Main.main;com.shop.ShopService.checkout;"
                             "com.shop.Pricing.price 5242880\n");
    free(out);
    jp_profile_free(p);
}

static void test_collapsed_threads_are_roots(void **state)
{
    (void)state;
    jp_profile *p = shop_profile();
    char *out = capture(collapsed_adapter, p, JP_KIND_CPU, true, false);
    assert_string_equal(out, "[unknown thread];com.shop.Main.main;com.shop.Main.idle;"
                             "__memmove_avx_unaligned;do_syscall_64 10\n"
                             "worker-1;com.shop.Main.main;com.shop.ShopService.checkout 10\n"
                             "worker-1;com.shop.Main.main;com.shop.ShopService.checkout;"
                             "com.shop.Pricing.price 30\n"
                             "worker-2;com.shop.Main.main;com.shop.ShopService.checkout;"
                             "com.shop.Pricing.price 20\n"
                             "worker-2;com.shop.Main.main;com.shop.ShopService.checkout;"
                             "java.util.HashMap.get 30\n");
    free(out);
    jp_profile_free(p);
}

/* The order is the byte order of the printed line, not frame by frame:
 * "A.b;X" sorts before "A;X" because '.' < ';'. */
static void test_collapsed_byte_order(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    uint32_t a = frame(p, "A", JP_FRAME_JIT), ab = frame(p, "A.b", JP_FRAME_JIT);
    uint32_t x = frame(p, "X", JP_FRAME_JIT), a0 = frame(p, "A0", JP_FRAME_JIT);
    uint32_t s1[] = {a, x}, s2[] = {ab, x}, s3[] = {a}, s4[] = {a0}, s5[] = {a, ab};
    jp_profile_add(p, JP_KIND_CPU, stack(p, s1, 2), JP_NO_THREAD, 1, 1, 1);
    jp_profile_add(p, JP_KIND_CPU, stack(p, s2, 2), JP_NO_THREAD, 1, 2, 2);
    jp_profile_add(p, JP_KIND_CPU, stack(p, s3, 1), JP_NO_THREAD, 1, 3, 3);
    jp_profile_add(p, JP_KIND_CPU, stack(p, s4, 1), JP_NO_THREAD, 1, 4, 4);
    jp_profile_add(p, JP_KIND_CPU, stack(p, s5, 2), JP_NO_THREAD, 1, 5, 5);
    char *out = capture(collapsed_adapter, p, JP_KIND_CPU, false, false);
    assert_string_equal(out, "A 3\nA.b;X 2\nA0 4\nA;A.b 5\nA;X 1\n");
    free(out);
    jp_profile_free(p);
}

/* Two frames with the same text (a thread and a method) print the same
 * line and must come out as one. */
static void test_collapsed_merges_same_text(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    uint32_t m = frame(p, "main", JP_FRAME_JIT), w = frame(p, "work", JP_FRAME_JIT);
    uint32_t t = jp_profile_thread(p, "main", 4);
    uint32_t s1[] = {w}, s2[] = {m, w};
    jp_profile_add(p, JP_KIND_CPU, stack(p, s1, 1), t, 1, 2, 0);
    jp_profile_add(p, JP_KIND_CPU, stack(p, s2, 2), JP_NO_THREAD, 1, 3, 0);
    char *out = capture(collapsed_adapter, p, JP_KIND_CPU, true, false);
    assert_string_equal(out, "[unknown thread];main;work 3\nmain;work 2\n");
    jp_profile_free(p);
    free(out);
    p = jp_profile_new();
    m = frame(p, "main", JP_FRAME_JIT);
    w = frame(p, "work", JP_FRAME_JIT);
    uint32_t t2 = jp_profile_thread(p, "main", 4);
    uint32_t s3[] = {w}, s4[] = {m, w};
    jp_profile_add(p, JP_KIND_CPU, stack(p, s3, 1), t2, 1, 2, 0);
    jp_profile_add(p, JP_KIND_CPU, stack(p, s4, 2), t2, 1, 3, 0);
    out = capture(collapsed_adapter, p, JP_KIND_CPU, true, false);
    assert_string_equal(out, "main;main;work 3\nmain;work 2\n");
    free(out);
    jp_profile_free(p);
}

/* The line a cell prints, as the reference below builds it. */
static void ref_line(const jp_profile *p, const jp_sample *x, bool threads, char *buf, size_t len)
{
    size_t n = 0, depth = p->stacks[x->stack].depth;
    const uint32_t *f = jp_profile_stack_frames(p, x->stack);
    buf[0] = '\0';
    if (threads) {
        size_t l;
        const char *t = x->thread == JP_NO_THREAD ? "[unknown thread]"
                                                  : jp_profile_frame_name(p, x->thread, &l);
        n += (size_t)snprintf(buf + n, len - n, "%.*s", x->thread == JP_NO_THREAD ? 16 : (int)l, t);
    }
    for (size_t i = 0; i < depth; i++) {
        size_t l;
        const char *name = jp_profile_frame_name(p, f[i], &l);
        n += (size_t)snprintf(buf + n, len - n, "%s%.*s", n ? ";" : "", (int)l, name);
    }
}

static int ref_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Random stacks over names made to be hard on the order ("A" and "A.b" and
 * "Ab", a thread named like a frame; in the second half, names holding ';')
 * against the definition: each cell's printed text, equal texts summed,
 * sorted by strcmp (an empty stack as empty text, printed "[no stack]"). */
static void test_collapsed_matches_text_sort(void **state)
{
    (void)state;
    static const char *names[] = {"A", "A.b", "Ab", "A0", "B", "B$1", "b", "A.b.c", "[x]", "A;x"};
    unsigned seed = 7;
    for (int round = 0; round < 40; round++) {
        bool threads = round % 2, semis = round >= 20;
        size_t nnames = semis ? 10 : 9;
        jp_profile *p = jp_profile_new();
        uint32_t fr[10], th[3];
        for (size_t i = 0; i < nnames; i++)
            fr[i] = frame(p, names[i], JP_FRAME_JIT);
        th[0] = jp_profile_thread(p, "A", 1);
        th[1] = jp_profile_thread(p, "B$1", 3);
        th[2] = JP_NO_THREAD;
        for (int c = 0; c < 60; c++) {
            uint32_t st[6];
            size_t depth = (size_t)(rand_r(&seed) % 6);
            for (size_t i = 0; i < depth; i++)
                st[i] = fr[(size_t)rand_r(&seed) % nnames];
            uint32_t s = stack(p, st, depth);
            jp_profile_add(p, JP_KIND_CPU, s, th[rand_r(&seed) % 3], 1,
                           (uint64_t)(rand_r(&seed) % 5 + 1), 0);
        }
        const jp_kind_table *t = &p->kinds[JP_KIND_CPU];
        char **lines = calloc(t->count, sizeof *lines);
        uint64_t *sums = calloc(t->count, sizeof *sums);
        size_t nl = 0;
        for (size_t i = 0; i < t->count; i++) {
            char buf[256];
            ref_line(p, &t->cells[i], threads, buf, sizeof buf);
            size_t j = 0;
            while (j < nl && strcmp(lines[j], buf))
                j++;
            if (j == nl)
                lines[nl++] = strdup(buf);
            sums[j] += t->cells[i].samples;
        }
        char **order = calloc(nl, sizeof *order);
        memcpy(order, lines, nl * sizeof *order);
        qsort(order, nl, sizeof *order, ref_cmp);
        char *want = NULL;
        size_t wlen = 0;
        FILE *w = open_memstream(&want, &wlen);
        for (size_t i = 0; i < nl; i++) {
            size_t j = 0;
            while (lines[j] != order[i])
                j++;
            fprintf(w, "%s %llu\n", order[i][0] ? order[i] : "[no stack]",
                    (unsigned long long)sums[j]);
        }
        fclose(w);
        char *out = capture(collapsed_adapter, p, JP_KIND_CPU, threads, false);
        assert_string_equal(out, want);
        free(out);
        free(want);
        for (size_t i = 0; i < nl; i++)
            free(lines[i]);
        free(lines);
        free(order);
        free(sums);
        jp_profile_free(p);
    }
}

static void test_top_table(void **state)
{
    (void)state;
    jp_profile *p = shop_profile();
    char *out = capture(tui_write_top, p, JP_KIND_CPU, false, false);
    assert_non_null(
        strstr(out, "# kind cpu  unit samples  value samples  events 100  samples 100"));
    assert_non_null(strstr(out, "from 2025-11-21T22:00:00.000Z"));
    const char *hdr = strstr(out, "\n      SELF  SELF%");
    assert_non_null(hdr);
    /* Pricing.price has the most self samples (50), then HashMap.get. */
    const char *r1 = strstr(out, "        50  50.0%         50  50.0%  com.shop.Pricing.price\n");
    const char *r2 = strstr(out, "        30  30.0%         30  30.0%  java.util.HashMap.get\n");
    const char *r3 =
        strstr(out, "        10  10.0%         90  90.0%  com.shop.ShopService.checkout\n");
    assert_non_null(r1);
    assert_non_null(r2);
    assert_non_null(r3);
    assert_true(r1 < r2 && r2 < r3);
    free(out);
    out = capture(tui_write_top, p, JP_KIND_CPU, false, true);
    assert_non_null(strstr(out, "unit ns  value total"));
    assert_non_null(strstr(out, "    500 ms  50.0%     500 ms  50.0%  com.shop.Pricing.price\n"));
    free(out);
    jp_profile_free(p);
}

static void test_json(void **state)
{
    (void)state;
    jp_profile *p = shop_profile();
    char *out = capture(tui_write_json, p, JP_KIND_CPU, false, true);
    json_error_t jerr;
    json_t *doc = json_loads(out, 0, &jerr);
    assert_non_null(doc);
    json_t *meta = json_object_get(doc, "meta");
    assert_string_equal(json_string_value(json_object_get(meta, "kind")), "cpu");
    assert_string_equal(json_string_value(json_object_get(meta, "unit")), "ns");
    assert_string_equal(json_string_value(json_object_get(meta, "value")), "total");
    assert_int_equal(json_integer_value(json_object_get(meta, "samples")), 100);
    assert_int_equal(json_integer_value(json_object_get(meta, "total")), 1000 * MS);
    assert_int_equal(json_integer_value(json_object_get(meta, "events_read")), 200);
    assert_int_equal(json_integer_value(json_object_get(meta, "chunks")), 1);
    assert_int_equal(json_integer_value(json_object_get(meta, "period_ns")), 10 * MS);
    assert_string_equal(json_string_value(json_object_get(meta, "start")),
                        "2025-11-21T22:00:00.000Z");
    assert_true(json_is_false(json_object_get(meta, "partial")));
    assert_true(json_is_null(json_object_get(meta, "error")));
    assert_true(json_is_array(json_object_get(meta, "warnings")));
    json_t *tree = json_object_get(doc, "tree");
    assert_string_equal(json_string_value(json_object_get(tree, "name")), "all");
    assert_int_equal(json_integer_value(json_object_get(tree, "total")), 1000 * MS);
    json_t *main_ = json_array_get(json_object_get(tree, "children"), 0);
    assert_string_equal(json_string_value(json_object_get(main_, "name")), "com.shop.Main.main");
    assert_string_equal(json_string_value(json_object_get(main_, "type")), "interpreted");
    json_t *kids = json_object_get(main_, "children");
    assert_int_equal(json_array_size(kids), 2);
    json_t *co = json_array_get(kids, 0);
    assert_string_equal(json_string_value(json_object_get(co, "name")),
                        "com.shop.ShopService.checkout");
    assert_int_equal(json_integer_value(json_object_get(co, "total")), 900 * MS);
    assert_int_equal(json_integer_value(json_object_get(co, "self")), 100 * MS);
    json_decref(doc);
    free(out);
    /* Threads on: a cell without a thread is under "[unknown thread]". */
    out = capture(tui_write_json, p, JP_KIND_CPU, true, false);
    assert_non_null(strstr(out, "{\"name\":\"[unknown thread]\",\"type\":\"thread\""));
    free(out);
    jp_profile_free(p);
}

static void test_json_string_invalid_utf8(void **state)
{
    (void)state;
    json_t *s = jp_json_string("a\xff"
                               "b",
                               3);
    assert_string_equal(json_string_value(s), "a?b");
    json_decref(s);
}

/* ---- canvas and layout ---- */

static void test_canvas_text(void **state)
{
    (void)state;
    tui_canvas c;
    tui_canvas_init(&c, 2, 8);
    assert_int_equal(tui_canvas_puts(&c, 0, 2, "abcdefghij", TUI_STYLE_NORMAL, 0), 6);
    tui_canvas_text(&c, 1, 0, "x\x01y\xc3", 4, -1, TUI_STYLE_WARN, TUI_F_BOLD);
    char row[64];
    tui_canvas_row_text(&c, 0, row, sizeof row);
    assert_string_equal(row, "  abcdef");
    tui_canvas_row_text(&c, 1, row, sizeof row);
    assert_string_equal(row, "x?y?    ");
    assert_int_equal(tui_canvas_at(&c, 1, 0)->style, TUI_STYLE_WARN);
    /* Off-canvas writes are clipped, never out of bounds. */
    tui_canvas_puts(&c, 5, 0, "zz", TUI_STYLE_NORMAL, 0);
    tui_canvas_puts(&c, -1, 0, "zz", TUI_STYLE_NORMAL, 0);
    tui_canvas_fill(&c, 0, -3, 100, '#', TUI_STYLE_NORMAL, 0);
    tui_canvas_row_text(&c, 0, row, sizeof row);
    assert_string_equal(row, "########");
    tui_canvas_cleanup(&c);
}

static void test_bar_label(void **state)
{
    (void)state;
    const char *name = "com.shop.ShopService.checkout", *out;
    bool cut;
    size_t n = tui_bar_label(name, strlen(name), true, 40, &out, &cut);
    assert_int_equal(n, strlen(name));
    n = tui_bar_label(name, strlen(name), true, 22, &out, &cut);
    assert_false(cut);
    assert_memory_equal(out, "ShopService.checkout", n);
    n = tui_bar_label(name, strlen(name), true, 8, &out, &cut);
    assert_true(cut);
    assert_int_equal(n, 6);
    assert_memory_equal(out, "ShopSe", 6);
    const char *lambda = "com.shop.ShopService$$Lambda$1.0x00007f3ed4000a08.run";
    n = tui_bar_label(lambda, strlen(lambda), true, 50, &out, &cut);
    assert_false(cut);
    assert_memory_equal(out, "ShopService$$Lambda$1.0x00007f3ed4000a08.run", n);
    lambda = "shop.Work$$Lambda$87+0x00007fd0f0008c10.688726285.run";
    n = tui_bar_label(lambda, strlen(lambda), true, 48, &out, &cut);
    assert_false(cut);
    assert_memory_equal(out, "Work$$Lambda$87+0x00007fd0f0008c10.688726285.run", n);
    n = tui_bar_label("libc.so.6", 9, false, 5, &out, &cut);
    assert_memory_equal(out, "lib", n);
    assert_int_equal(tui_bar_label("libc.so.6", 9, false, 3, &out, &cut), 0);
    assert_int_equal(tui_bar_label("ab", 2, false, 3, &out, &cut), 2);
}

static void test_layout(void **state)
{
    (void)state;
    jp_profile *p = shop_profile();
    jp_flame *f = jp_flame_build(p, JP_KIND_CPU, false);
    tui_flame_layout l;
    tui_flame_layout_init(&l);
    tui_flame_layout_build(&l, f, 0, false, 100);
    assert_int_equal(l.depths, 5);
    const tui_bar *root = &l.bars[tui_flame_layout_find(&l, 0)];
    assert_int_equal(root->x, 0);
    assert_int_equal(root->w, 100);
    /* main (100%), then checkout 90 and idle 10 on row 2. */
    assert_int_equal(l.row_start[2] - l.row_start[1], 1);
    assert_int_equal(l.row_start[3] - l.row_start[2], 2);
    assert_int_equal(l.bars[l.row_start[2]].w, 90);
    assert_int_equal(l.bars[l.row_start[2] + 1].x, 90);
    assert_int_equal(l.bars[l.row_start[2] + 1].w, 10);
    assert_int_equal(l.hidden, 0);
    /* At 12 columns, 10% of a 12-wide row is 1.2 columns: still drawn;
     * at 4 columns it is 0.4: hidden with its subtree, counted once. */
    tui_flame_layout_build(&l, f, 0, false, 4);
    assert_int_equal(l.hidden, 1);
    assert_int_equal(l.depths, 4);
    for (size_t i = 0; i < l.nbars; i++)
        assert_true(l.bars[i].x + l.bars[i].w <= 4);
    tui_flame_layout_cleanup(&l);
    jp_flame_free(f);
    jp_profile_free(p);
}

/* ---- the interactive view ---- */

typedef struct screen {
    jp_profile *p;
    jfr_report rep;
    tui_flame_view *v;
    tui_canvas c;
} screen;

static void screen_open(screen *s, jp_profile *p, int rows, int cols)
{
    s->p = p;
    report_for(p, &s->rep);
    jp_kind k = JP_KIND_CPU;
    s->v = tui_flame_view_new(p, &s->rep, "/tmp/shop.jfr", k, false, false);
    tui_flame_view_resize(s->v, rows, cols);
    tui_canvas_init(&s->c, rows, cols);
    tui_flame_view_update(s->v);
    tui_flame_view_render(s->v, &s->c);
}

static void screen_close(screen *s)
{
    tui_flame_view_free(s->v);
    tui_canvas_cleanup(&s->c);
    jp_profile_free(s->p);
}

static tui_action press(screen *s, int key)
{
    tui_action a = tui_flame_view_key(s->v, key);
    tui_flame_view_update(s->v);
    tui_flame_view_render(s->v, &s->c);
    return a;
}

/* The screen as text, rows joined by '\n'. */
static char *screen_text(screen *s)
{
    size_t cap = (size_t)s->c.rows * ((size_t)s->c.cols * 4 + 1) + 1, n = 0;
    char *buf = malloc(cap);
    for (int r = 0; r < s->c.rows; r++) {
        n += tui_canvas_row_text(&s->c, r, buf + n, cap - n);
        buf[n++] = '\n';
    }
    buf[n] = '\0';
    return buf;
}

static char *row_text(screen *s, int r)
{
    static char buf[2048];
    tui_canvas_row_text(&s->c, r, buf, sizeof buf);
    return buf;
}

static bool screen_has(screen *s, const char *needle)
{
    char *t = screen_text(s);
    bool found = strstr(t, needle) != NULL;
    if (!found)
        fprintf(stderr, "--- screen without \"%s\":\n%s---\n", needle, t);
    free(t);
    return found;
}

static void test_view_initial_screen(void **state)
{
    (void)state;
    screen s;
    screen_open(&s, shop_profile(), 24, 80);
    assert_true(screen_has(&s, "shop.jfr  cpu: 100 events, 1 s  2025-11-21 22:00:00Z +60 s"));
    assert_true(screen_has(&s, "[cpu]"));
    assert_true(screen_has(&s, "Zoom: all"));
    /* The root bar fills the first flame row, less its gap column. */
    assert_int_equal(s.v->flame_top, 3);
    assert_int_equal(strncmp(row_text(&s, 3), "all ", 4), 0);
    assert_int_equal(tui_canvas_at(&s.c, 3, 0)->style, TUI_STYLE_ROOT);
    assert_int_equal(tui_canvas_at(&s.c, 3, 0)->flags & TUI_F_REVERSE, TUI_F_REVERSE);
    /* Row 2 of the graph: checkout (90%) then idle, coloured by kind. */
    assert_int_equal(strncmp(row_text(&s, 5), "com.shop.ShopService.checkout", 29), 0);
    assert_int_equal(tui_canvas_at(&s.c, 5, 0)->style, TUI_STYLE_FRAME_JIT);
    assert_int_equal(tui_canvas_at(&s.c, 5, 72)->style, TUI_STYLE_FRAME_C1);
    /* Top table and key bar. */
    assert_true(screen_has(&s, "FRAME (7) under all"));
    assert_true(screen_has(&s, "50  50.0%         50  50.0%   com.shop.Pricing.price"));
    assert_true(screen_has(&s, "F1Help"));
    assert_true(screen_has(&s, "total 100.0% 100  self 0.0% 0  all"));
    screen_close(&s);
}

/* G: the GC screen over the flame view, and back. */
static void test_view_gc_screen(void **state)
{
    (void)state;
    screen s;
    jp_profile *p = shop_profile();
    for (int i = 0; i < 4; i++) {
        jp_gc_pause ps = {.start_ns = p->start_ns + i * 10000000000LL,
                          .duration_ns = (i + 1) * 1000000LL,
                          .gc_id = (uint64_t)i};
        snprintf(ps.name, sizeof ps.name, "GC Pause");
        jp_gc_log_pause(&p->gc, &ps);
        jp_gc_collection c = {.start_ns = ps.start_ns, .gc_id = (uint64_t)i};
        snprintf(c.name, sizeof c.name, "G1New");
        jp_gc_log_collection(&p->gc, &c);
    }
    screen_open(&s, p, 24, 100);
    assert_int_equal(press(&s, 'G'), TUI_ACTION_REDRAW);
    assert_true(screen_has(&s, "GC: 4 collections, 4 pauses in 60 s (0.02% of the time paused)"));
    assert_true(screen_has(&s, "max 4 ms"));
    assert_true(screen_has(&s, "GC Pause of G1New, cause: unknown (gc id 3)"));
    assert_true(screen_has(&s, "heap:    unknown"));
    assert_true(screen_has(&s, "|-               +               *                @"));
    assert_true(screen_has(&s, "100.0%        5 MB  com.shop.Pricing.price"));
    assert_true(screen_has(&s, "heap dump"));
    assert_int_equal(press(&s, TUI_KEY_ESC), TUI_ACTION_REDRAW);
    assert_true(screen_has(&s, "Zoom: all"));
    screen_close(&s);
}

static void test_view_move_zoom_and_back(void **state)
{
    (void)state;
    screen s;
    screen_open(&s, shop_profile(), 24, 80);
    press(&s, TUI_KEY_DOWN); /* main */
    press(&s, TUI_KEY_DOWN); /* checkout, the largest child */
    assert_true(screen_has(&s, "total 90.0% 90  self 10.0% 10  com.shop.ShopService.checkout"));
    press(&s, TUI_KEY_RIGHT); /* idle, its neighbour */
    assert_true(screen_has(&s, "com.shop.Main.idle"));
    assert_int_equal(s.v->sel, tui_flame_layout_find(&s.v->layout, s.v->sel) >= 0 ? s.v->sel : 0);
    press(&s, TUI_KEY_LEFT);
    press(&s, TUI_KEY_ENTER);
    assert_true(screen_has(&s, "Zoom: all > com.shop.Main.main > com.shop.ShopService.checkout"));
    assert_true(screen_has(&s, "FRAME (3) under ShopService.checkout"));
    /* The zoomed frame fills the width; percentages are of the zoom. */
    assert_int_equal(strncmp(row_text(&s, 3), "com.shop.ShopService.checkout", 29), 0);
    assert_true(screen_has(&s, "total 100.0% 90"));
    press(&s, TUI_KEY_DOWN);
    assert_true(screen_has(&s, "total 55.6% 50  self 55.6% 50  com.shop.Pricing.price"));
    press(&s, TUI_KEY_ESC);
    assert_int_equal(strncmp(row_text(&s, 2), "Zoom: all ", 10), 0);
    assert_true(screen_has(&s, "total 90.0% 90  self 10.0% 10  com.shop.ShopService.checkout"));
    screen_close(&s);
}

static void test_view_search(void **state)
{
    (void)state;
    screen s;
    screen_open(&s, shop_profile(), 24, 80);
    press(&s, '/');
    const char *q = "Pricing|HashMap";
    for (const char *c = q; *c; c++)
        press(&s, *c);
    assert_true(screen_has(&s, "Search (regex): Pricing|HashMap"));
    press(&s, TUI_KEY_ENTER);
    assert_true(screen_has(&s, "/Pricing|HashMap/ 80.0% (80, 2 frames)"));
    press(&s, 'n');
    assert_true(screen_has(&s, "com.shop.Pricing.price"));
    assert_int_equal(tui_canvas_at(&s.c, 6, 0)->style, TUI_STYLE_MATCH);
    uint32_t first = s.v->sel;
    press(&s, 'n');
    assert_true(s.v->sel != first);
    assert_true(screen_has(&s, "java.util.HashMap.get"));
    press(&s, 'N');
    assert_int_equal(s.v->sel, first);
    /* A bad regex is reported, not fatal. */
    press(&s, '/');
    press(&s, TUI_KEY_BACKSPACE);
    for (int i = 0; i < 20; i++)
        press(&s, TUI_KEY_BACKSPACE);
    press(&s, '(');
    press(&s, TUI_KEY_ENTER);
    assert_true(screen_has(&s, "bad regex /(/"));
    screen_close(&s);
}

static void test_view_reverse(void **state)
{
    (void)state;
    screen s;
    screen_open(&s, shop_profile(), 24, 80);
    press(&s, 'r');
    assert_true(screen_has(&s, "select a frame first"));
    press(&s, TUI_KEY_DOWN);
    press(&s, TUI_KEY_DOWN);
    press(&s, TUI_KEY_DOWN); /* Pricing.price */
    press(&s, 'r');
    assert_true(screen_has(&s, "Callers of com.shop.Pricing.price: all"));
    assert_int_equal(strncmp(row_text(&s, 4), "com.shop.Pricing.price", 22), 0);
    assert_int_equal(strncmp(row_text(&s, 5), "com.shop.ShopService.checkout", 29), 0);
    assert_int_equal(strncmp(row_text(&s, 6), "com.shop.Main.main", 18), 0);
    press(&s, 'r');
    assert_true(screen_has(&s, "callers view closed"));
    press(&s, 'x'); /* any key clears a message */
    assert_true(screen_has(&s, "Zoom: all"));
    assert_true(screen_has(&s, "self 50.0% 50  com.shop.Pricing.price"));
    screen_close(&s);
}

/* The shop profile on a 24x80 screen, zoomed on ShopService.checkout. */
static void open_zoomed_on_checkout(screen *s)
{
    screen_open(s, shop_profile(), 24, 80);
    press(s, TUI_KEY_DOWN);
    press(s, TUI_KEY_DOWN);
    press(s, TUI_KEY_ENTER);
}

static void test_view_kinds_and_value(void **state)
{
    (void)state;
    screen s;
    open_zoomed_on_checkout(&s);
    press(&s, '2');
    assert_true(screen_has(&s, "no wall events in this recording"));
    press(&s, 'k'); /* next present kind: alloc */
    assert_true(screen_has(&s, "shop.jfr  alloc: 5 events, 5 MB"));
    assert_true(screen_has(&s, "[alloc]"));
    /* The zoom path still exists in alloc, so it is kept. */
    assert_true(screen_has(&s, "Zoom: all > com.shop.Main.main > com.shop.ShopService.checkout"));
    press(&s, 'v');
    assert_true(screen_has(&s, "values: bytes"));
    press(&s, TUI_KEY_HOME);
    assert_true(screen_has(&s, "total 100.0% 5 MB"));
    assert_true(screen_has(&s, "cpu wall [alloc] lock park  bytes"));
    press(&s, '1');
    press(&s, 'x');
    assert_true(screen_has(&s, "[cpu]"));
    assert_true(screen_has(&s, "total 100.0% 900 ms"));
    screen_close(&s);
}

/* A new window's view keeps the zoom, the selection and the search of the
 * previous one by frame name, though its profile numbers the frames
 * otherwise. */
static void test_view_carry_to_new_window(void **state)
{
    (void)state;
    screen s;
    open_zoomed_on_checkout(&s);
    press(&s, TUI_KEY_DOWN); /* select Pricing.price */
    tui_flame_view_search(s.v, "HashMap");
    jp_profile *p2 = shop_profile_after("com.shop.Warmup.run");
    assert_int_not_equal(jp_profile_frame(p2, "com.shop.ShopService.checkout", 29, JP_FRAME_JIT),
                         jp_profile_frame(s.p, "com.shop.ShopService.checkout", 29, JP_FRAME_JIT));
    tui_flame_view *nv = tui_flame_view_new(p2, &s.rep, "/tmp/shop.jfr", JP_KIND_CPU, false, false);
    tui_flame_view_resize(nv, 24, 80);
    tui_flame_view_carry(nv, s.v);
    tui_flame_view_free(s.v);
    jp_profile_free(s.p);
    s.v = nv;
    s.p = p2;
    press(&s, 'x'); /* any key clears a message */
    assert_true(screen_has(&s, "Zoom: all > com.shop.Main.main > com.shop.ShopService.checkout"));
    size_t len;
    const char *sel = jp_flame_node_name(nv->cur, nv->sel, &len);
    assert_int_equal(len, strlen("com.shop.Pricing.price"));
    assert_memory_equal(sel, "com.shop.Pricing.price", len);
    assert_string_equal(nv->pattern, "HashMap");
    /* another kind starts at the top */
    jp_profile *p3 = shop_profile();
    tui_flame_view *av =
        tui_flame_view_new(p3, &s.rep, "/tmp/shop.jfr", JP_KIND_ALLOC, false, false);
    tui_flame_view_carry(av, nv);
    assert_int_equal(av->nzoom, 0);
    assert_string_equal(av->pattern, "");
    tui_flame_view_free(av);
    jp_profile_free(p3);
    screen_close(&s);
}

static void test_view_table_focus(void **state)
{
    (void)state;
    screen s;
    screen_open(&s, shop_profile(), 24, 80);
    press(&s, TUI_KEY_TAB);
    press(&s, TUI_KEY_DOWN); /* second row: HashMap.get */
    assert_int_equal(s.v->top_sel, 1);
    press(&s, TUI_KEY_ENTER);
    assert_int_equal(s.v->focus, TUI_FOCUS_FLAME);
    assert_true(screen_has(&s, "total 30.0% 30  self 30.0% 30  java.util.HashMap.get"));
    screen_close(&s);
}

static void test_view_help_and_quit(void **state)
{
    (void)state;
    screen s;
    screen_open(&s, shop_profile(), 24, 80);
    press(&s, '?');
    assert_true(screen_has(&s, "zoom into the selected frame"));
    assert_int_equal(press(&s, 'q'), TUI_ACTION_REDRAW); /* q leaves help only */
    assert_true(screen_has(&s, "Zoom: all"));
    assert_int_equal(press(&s, 'q'), TUI_ACTION_QUIT);
    screen_close(&s);
}

static void test_view_empty_profile(void **state)
{
    (void)state;
    screen s;
    screen_open(&s, jp_profile_new(), 24, 80);
    assert_true(screen_has(&s, "no events of kind cpu in this recording"));
    static const int keys[] = {
        TUI_KEY_DOWN, TUI_KEY_ENTER, 'r',           'n',         'k', '3', 'v',           't',
        TUI_KEY_TAB,  TUI_KEY_DOWN,  TUI_KEY_ENTER, TUI_KEY_ESC, '/', 'x', TUI_KEY_ENTER, 'n'};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        press(&s, keys[i]);
    assert_true(screen_has(&s, "no events of kind cpu"));
    screen_close(&s);
}

/* A deep stack scrolls so the selection stays on screen. */
static void test_view_deep_scrolls(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    uint32_t fr[60];
    char name[16];
    for (int i = 0; i < 60; i++) {
        int n = snprintf(name, sizeof name, "f%02d", i);
        fr[i] = jp_profile_frame(p, name, (size_t)n, JP_FRAME_JIT);
    }
    jp_profile_add(p, JP_KIND_CPU, stack(p, fr, 60), JP_NO_THREAD, 1, 1, 1);
    screen s;
    screen_open(&s, p, 24, 80);
    for (int i = 0; i < 40; i++)
        press(&s, TUI_KEY_DOWN);
    assert_true(s.v->scroll > 0);
    assert_true(screen_has(&s, "total 100.0% 1  self 0.0% 0  f39"));
    int row = s.v->flame_top + 40 - s.v->scroll;
    assert_true(row < s.v->flame_top + s.v->flame_h);
    assert_int_equal(strncmp(row_text(&s, row), "f39", 3), 0);
    assert_true(screen_has(&s, "rows 30-41 of 61"));
    screen_close(&s);
}

/* Every key at every size, including absurd ones, keeps a valid state. */
static void test_view_key_storm(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {2, 10}, {5, 20}, {8, 30}, {24, 80}, {50, 200}, {3, 1}};
    static const int keys[] = {TUI_KEY_DOWN,
                               TUI_KEY_DOWN,
                               TUI_KEY_RIGHT,
                               TUI_KEY_ENTER,
                               TUI_KEY_DOWN,
                               'r',
                               TUI_KEY_UP,
                               TUI_KEY_LEFT,
                               TUI_KEY_ENTER,
                               '/',
                               'e',
                               TUI_KEY_ENTER,
                               'n',
                               'N',
                               'v',
                               'k',
                               't',
                               TUI_KEY_TAB,
                               TUI_KEY_PGDN,
                               TUI_KEY_END,
                               TUI_KEY_ENTER,
                               TUI_KEY_PGDN,
                               TUI_KEY_PGUP,
                               TUI_KEY_ESC,
                               TUI_KEY_BACKSPACE,
                               '?',
                               'x',
                               TUI_KEY_HOME,
                               TUI_KEY_RESIZE,
                               '5',
                               '1',
                               'K',
                               'r',
                               'r'};
    screen s;
    screen_open(&s, shop_profile(), 24, 80);
    unsigned seed = 7;
    for (int i = 0; i < 3000; i++) {
        seed = seed * 1103515245u + 12345u;
        if (seed % 17 == 0) {
            const int *sz = sizes[(seed >> 8) % (sizeof sizes / sizeof sizes[0])];
            tui_flame_view_resize(s.v, sz[0], sz[1]);
        }
        int k = keys[(seed >> 4) % (sizeof keys / sizeof keys[0])];
        if (press(&s, k) == TUI_ACTION_QUIT)
            break;
        assert_true(s.v->sel < s.v->cur->count);
        assert_int_equal(s.c.rows, s.v->rows);
        assert_int_equal(s.c.cols, s.v->cols);
    }
    screen_close(&s);
}

/* ---- the Heap screen and --heap: one histogram, then the growth ---- */

static void heap_histo(jp_heap_histo *h, int64_t t, uint64_t leak)
{
    jp_heap_histo_init(h);
    const struct {
        const char *name, *module;
        uint64_t n, size;
    } cls[] = {{"[B", "java.base@17", 5000, 800},
               {"com.shop.Session", "", leak, 144},
               {"java.lang.String", "java.base@17", 3000, 24}};
    for (size_t i = 0; i < 3; i++) {
        jp_heap_histo_add(h, cls[i].name, strlen(cls[i].name), cls[i].module, strlen(cls[i].module),
                          cls[i].n, cls[i].n * cls[i].size);
        h->total_instances += cls[i].n;
        h->total_bytes += cls[i].n * cls[i].size;
    }
    jp_heap_histo_sort(h);
    h->classes_total = h->n;
    h->time_ns = t;
    h->took_ns = 42000000;
}

static bool lines_have(const tui_lines *ls, const char *needle)
{
    for (size_t i = 0; i < ls->count; i++)
        if (strstr(ls->items[i].text, needle))
            return true;
    return false;
}

static void test_heap_report(void **state)
{
    (void)state;
    tui_heap s;
    tui_heap_init(&s);
    tui_lines ls;
    tui_lines_init(&ls);
    tui_report_heap(&s, 10, "r takes one", &ls);
    assert_true(lines_have(&ls, "No class histogram yet. r takes one"));
    assert_true(lines_have(&ls, "safepoint")); /* why it is not taken by itself */
    jp_heap_histo h;
    heap_histo(&h, 1000000000000LL, 1000);
    tui_heap_add(&s, &h);
    tui_lines_reset(&ls);
    tui_report_heap(&s, 10, "", &ls);
    assert_true(lines_have(&ls, "it paused the JVM 42"));
    assert_true(lines_have(&ls, "What grows shows from the second histogram on."));
    json_t *j = tui_heap_json(&s, 0);
    assert_true(json_is_null(json_object_get(j, "growth")));
    assert_int_equal(json_integer_value(json_object_get(j, "histograms")), 1);
    json_decref(j);
    heap_histo(&h, 1000000000000LL + 60000000000LL, 7000);
    tui_heap_add(&s, &h);
    tui_lines_reset(&ls);
    tui_report_heap(&s, 10, "", &ls);
    assert_true(lines_have(&ls, "GROWTH over ") && lines_have(&ls, "(2 histograms)"));
    /* the leak first, per minute; unchanged classes left out */
    size_t i = 0;
    while (i < ls.count && !strstr(ls.items[i].text, "BYTES/MIN"))
        i++;
    assert_true(i + 1 < ls.count);
    assert_non_null(strstr(ls.items[i + 1].text, "com.shop.Session"));
    assert_non_null(strstr(ls.items[i + 1].text, "+6000"));
    assert_true(lines_have(&ls, "(classes that did not change are left out)"));
    j = tui_heap_json(&s, 1);
    json_t *g = json_object_get(j, "growth");
    assert_int_equal(json_array_size(json_object_get(g, "classes")), 1);
    assert_true(json_real_value(json_object_get(json_array_get(json_object_get(g, "classes"), 0),
                                                "instances_per_min")) == 6000.0);
    assert_int_equal(json_integer_value(json_object_get(j, "histograms")), 2);
    json_decref(j);
    tui_lines_cleanup(&ls);
    tui_heap_cleanup(&s);
}

static void test_heap_options(void **state)
{
    (void)state;
    struct {
        const char *argv[8];
        int argc, status; /* -1: accepted */
    } cases[] = {
        {{"jprof-top", "-b", "-p", "1", "--heap", "--all", "--count", "3"}, 8, -1},
        {{"jprof-top", "-b", "--heap"}, 3, 2},                            /* no JVM */
        {{"jprof-top", "-p", "1", "--all"}, 4, 2},                        /* --all without --heap */
        {{"jprof-top", "-p", "1", "--heap", "--heap-every", "5s"}, 6, 2}, /* < 10s */
        {{"jprof-top", "-p", "1", "--heap", "--io-detail"}, 5, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tui_args a; /* the parser initialises it and getopt's optind */
        FILE *saved = stderr;
        stderr = fopen("/dev/null", "w");
        int rc = tui_args_parse(cases[i].argc, (char **)cases[i].argv, &a);
        fclose(stderr);
        stderr = saved;
        assert_int_equal(rc, cases[i].status);
        if (rc == -1)
            assert_true(a.heap && a.heap_all && a.count == 3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap_report),
        cmocka_unit_test(test_heap_options),
        cmocka_unit_test(test_collapsed_merges_threads_and_sorts),
        cmocka_unit_test(test_collapsed_threads_are_roots),
        cmocka_unit_test(test_collapsed_byte_order),
        cmocka_unit_test(test_collapsed_merges_same_text),
        cmocka_unit_test(test_collapsed_matches_text_sort),
        cmocka_unit_test(test_top_table),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_string_invalid_utf8),
        cmocka_unit_test(test_canvas_text),
        cmocka_unit_test(test_bar_label),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_view_initial_screen),
        cmocka_unit_test(test_view_move_zoom_and_back),
        cmocka_unit_test(test_view_carry_to_new_window),
        cmocka_unit_test(test_view_gc_screen),
        cmocka_unit_test(test_view_search),
        cmocka_unit_test(test_view_reverse),
        cmocka_unit_test(test_view_kinds_and_value),
        cmocka_unit_test(test_view_table_focus),
        cmocka_unit_test(test_view_help_and_quit),
        cmocka_unit_test(test_view_empty_profile),
        cmocka_unit_test(test_view_deep_scrolls),
        cmocka_unit_test(test_view_key_storm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
