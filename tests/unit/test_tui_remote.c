/* Unit tests of the remote view's parts that need no server: the flame
 * tree of a /api/v1/flamegraph answer folded back into a profile, query
 * escaping, the report lines and the screens drawn from stored answers,
 * and the messages and exit statuses when the server cannot be reached. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/flame.h"
#include "tui/server_client.h"
#include "tui/batch_server.h"
#include "tui/report_service.h"
#include "tui/screens.h"
#include "tui/source_server.h"
#include "wire/http_client.h"
#include "wire/query_json.h"

static json_t *load(const char *text)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    if (!j)
        fail_msg("test JSON: %s", je.text);
    return j;
}

/* all 10 = a.run 10 = {b.hot self 7, c.cold self 2} (+1 cut from the tree) */
static const char *tree_samples =
    "{\"meta\":{\"truncated\":true},\"tree\":{\"name\":\"all\",\"self\":0,\"total\":10,"
    "\"children\":[{\"name\":\"a.A.run\",\"self\":0,\"total\":10,\"children\":["
    "{\"name\":\"b.B.hot\",\"self\":7,\"total\":7,\"children\":[]},"
    "{\"name\":\"c.C.cold\",\"self\":2,\"total\":2,\"children\":[]}]}]}}";
static const char *tree_values =
    "{\"tree\":{\"name\":\"all\",\"self\":0,\"total\":1000,"
    "\"children\":[{\"name\":\"a.A.run\",\"self\":0,\"total\":1000,\"children\":["
    "{\"name\":\"b.B.hot\",\"self\":700,\"total\":700},"
    "{\"name\":\"c.C.cold\",\"self\":300,\"total\":300}]}]}}";

static uint32_t child_named(const jp_flame *f, uint32_t node, const char *name)
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

static void test_flame_tree_to_profile(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    jp_error e;
    jp_error_init(&e);
    json_t *s = load(tree_samples), *v = load(tree_values);
    assert_int_equal(jp_query_flame_add(p, JP_KIND_CPU, s, false, &e), JP_OK);
    assert_int_equal(jp_query_flame_add(p, JP_KIND_CPU, v, true, &e), JP_OK);
    assert_int_equal(p->kinds[JP_KIND_CPU].samples, 10);
    assert_int_equal(p->kinds[JP_KIND_CPU].value, 1000);
    jp_flame *f = jp_flame_build(p, JP_KIND_CPU, false);
    uint32_t run = child_named(f, 0, "a.A.run");
    assert_int_not_equal(run, JP_FLAME_NONE);
    uint32_t hot = child_named(f, run, "b.B.hot");
    assert_int_not_equal(hot, JP_FLAME_NONE);
    assert_int_equal(f->nodes[hot].self_samples, 7);
    assert_int_equal(f->nodes[hot].self_value, 700);
    /* the sample the server cut stays in the total, under [omitted] */
    uint32_t om = child_named(f, run, JP_QUERY_OMITTED);
    assert_int_not_equal(om, JP_FLAME_NONE);
    assert_int_equal(f->nodes[om].total_samples, 1);
    assert_int_equal(f->nodes[run].total_samples, 10);
    /* a Java-looking name is coloured as Java */
    assert_int_equal(jp_frame_primary_kind(&p->frames[f->nodes[hot].frame]), JP_FRAME_JIT);
    jp_flame_free(f);
    json_decref(s);
    json_decref(v);
    jp_profile_free(p);
}

static void test_flame_bad_answers(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    jp_error e;
    jp_error_init(&e);
    json_t *none = load("{\"meta\":{}}");
    assert_int_equal(jp_query_flame_add(p, JP_KIND_CPU, none, false, &e), JP_ERR_FORMAT);
    /* wrong types read as absent: nothing is added, nothing crashes */
    json_t *odd =
        load("{\"tree\":{\"name\":\"all\",\"self\":\"x\",\"total\":-5,\"children\":"
             "[1,{\"name\":7},{\"name\":\"ok\",\"self\":3,\"total\":3,\"children\":{}}]}}");
    assert_int_equal(jp_query_flame_add(p, JP_KIND_CPU, odd, false, &e), JP_OK);
    assert_int_equal(p->kinds[JP_KIND_CPU].samples, 3);
    /* deeper than the cap: refused with a message */
    json_t *deep = json_object(), *cur = deep;
    json_object_set_new(deep, "tree",
                        json_pack("{s:s,s:i,s:i}", "name", "all", "self", 0, "total", 1));
    cur = json_object_get(deep, "tree");
    for (int i = 0; i < JP_QUERY_MAX_DEPTH + 2; i++) {
        json_t *c = json_pack("{s:s,s:i,s:i}", "name", "x.Y.z", "self", 0, "total", 1);
        json_object_set_new(cur, "children", json_pack("[o]", c));
        cur = c;
    }
    assert_int_equal(jp_query_flame_add(p, JP_KIND_WALL, deep, false, &e), JP_ERR_LIMIT);
    json_decref(deep);
    json_decref(none);
    json_decref(odd);
    jp_profile_free(p);
}

static void test_query_escape(void **state)
{
    (void)state;
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    assert_int_equal(jp_http_query_escape(&b, "vm:42 a&b=c/-_.~"), JP_OK);
    assert_string_equal(jp_strbuf_str(&b), "vm%3A42%20a%26b%3Dc%2F-_.~");
    jp_strbuf_cleanup(&b);
}

static const char *threads_answer =
    "{\"targets\":[{\"target\":{\"namespace\":\"shop\",\"service\":\"checkout\",\"pod\":\"p-1\","
    "\"pid\":42},\"time\":\"2026-11-21T10:00:00Z\",\"age_seconds\":3.5,\"summary\":{"
    "\"threads_total\":3,\"states\":{\"RUNNABLE\":1,\"BLOCKED\":2},"
    "\"busy\":{\"confidence\":\"exact_thread_cpu\",\"threads\":[]},"
    "\"blocked\":{\"count\":2,\"owners\":[{\"name\":\"w-1\",\"state\":\"RUNNABLE\",\"blocks\":2}]},"
    "\"locks\":[{\"lock\":{\"id\":\"ff01\",\"class\":\"java.lang.Object\"},\"owner\":{\"id\":1,"
    "\"name\":\"w-1\"},\"owner_blocks\":2,\"owner_chain\":[\"w-1\"],\"chain_cycles\":false,"
    "\"waiters\":[{\"name\":\"w-2\",\"state\":\"BLOCKED\"},{\"name\":\"w-3\",\"state\":"
    "\"BLOCKED\"}]}],"
    "\"snapshot\":{\"threads\":[{\"id\":1,\"name\":\"w-1\",\"state\":\"RUNNABLE\",\"cpu_ns\":"
    "2000000000,\"cpu_pct\":97.5,\"stack\":[\"shop.Tax.compute(Tax.java:9)\"]},"
    "{\"id\":2,\"name\":\"w-2\",\"state\":\"BLOCKED\",\"stack\":[\"shop.Cart.add\"]}]}}}]}";
static tui_client *offline_remote(void)
{
    tui_client_opts o = {.server = "http://127.0.0.1:1/",
                         .server_from = "--server",
                         .ns = "shop",
                         .svc = "checkout"};
    tui_client *r = tui_client_new(&o);
    r->threads = load(threads_answer);
    r->targets = load("{\"targets\":[{\"target\":{\"pod\":\"p-1\",\"pid\":42},\"state\":"
                      "\"skipped\",\"reason\":\"conflict\",\"kinds\":[],\"windows\":0}],"
                      "\"history\":[]}");
    r->ingestion = load("{\"collectors\":[]}");
    r->service = load("{\"kinds\":[\"cpu\"],\"targets\":[]}");
    return r;
}

static bool lines_have(const tui_lines *ls, const char *needle)
{
    for (size_t i = 0; i < ls->count; i++)
        if (strstr(ls->items[i].text, needle))
            return true;
    return false;
}

static void test_reports(void **state)
{
    (void)state;
    tui_client *r = offline_remote();
    assert_string_equal(r->base, "http://127.0.0.1:1"); /* trailing / dropped */
    tui_lines ls;
    tui_lines_init(&ls);
    tui_report_service_status(r, &ls);
    assert_true(lines_have(&ls, "conflict"));
    assert_true(lines_have(&ls, "no agent sent anything in the last hour"));
    tui_lines_cleanup(&ls);
    /* the batch JSON: each JVM in the shape every source prints */
    json_t *j = tui_batch_server_json(r, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "via")), "server");
    json_t *jvm = json_array_get(json_object_get(j, "jvms"), 0);
    assert_non_null(jvm);
    assert_string_equal(json_string_value(json_object_get(jvm, "via")), "server");
    assert_string_equal(json_string_value(json_object_get(jvm, "where")), "shop/checkout pod p-1");
    json_t *t0 = json_array_get(json_object_get(jvm, "threads"), 0);
    assert_string_equal(json_string_value(json_object_get(t0, "name")), "w-1");
    assert_true(json_number_value(json_object_get(t0, "cpu_pct")) > 97);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(jvm, "target"), "pid")),
                     42);
    json_decref(j);
    tui_client_free(r);
}

static bool canvas_has(const tui_canvas *c, const char *needle)
{
    char row[1024];
    for (int i = 0; i < c->rows; i++) {
        tui_canvas_row_text(c, i, row, sizeof row);
        if (strstr(row, needle))
            return true;
    }
    return false;
}

/* The server as a source of the screens every source has: the stored
 * snapshot opens at once, the Status screen has the server's words, the
 * Flame keys < > step the range, a failed read keeps the last data. */
static void test_view_keys_and_unreachable_server(void **state)
{
    (void)state;
    tui_client *r = offline_remote();
    tui_target_opts o;
    tui_target_opts_init(&o);
    tui_target *l = tui_server_open_on(r, "p-1", -1, 1, &o);
    assert_non_null(l->cur);
    assert_int_equal(l->proc.pid, 42);
    tui_screens *v = tui_screens_new_with(l, NULL, &o);
    tui_screens_resize(v, 30, 120);
    tui_canvas c;
    tui_canvas_init(&c, 1, 1);
    tui_screens_render(v, &c);
    assert_true(canvas_has(&c, "jprof-top  shop/checkout pod p-1 pid 42"));
    assert_true(canvas_has(&c, "w-1"));
    assert_true(canvas_has(&c, "97.5")); /* the stored snapshot's CPU between two snapshots */
    assert_true(canvas_has(&c, "F9Status"));
    assert_int_equal(tui_screens_key(v, 'S'), TUI_ACTION_REDRAW);
    tui_screens_render(v, &c);
    assert_true(canvas_has(&c, "source: server"));
    assert_true(canvas_has(&c, "flame range 15m (this pod)"));
    assert_true(canvas_has(&c, "conflict"));
    /* the range keys belong to the source on the Flame screen */
    assert_true(l->ops->flame_key(l, '>', (char[64]){0}, 64));
    assert_true(l->ops->flame_key(l, '>', (char[64]){0}, 64));
    char label[200];
    tui_target_prof_label(l, label, sizeof label);
    assert_string_equal(label, "shop/checkout last 6h, pod p-1");
    assert_true(l->ops->flame_key(l, '>', (char[64]){0}, 64));
    char msg[64];
    assert_false(l->ops->flame_key(l, '>', msg, sizeof msg)); /* stays at the longest */
    assert_string_equal(msg, "range stays 24h (5m 15m 1h 6h 24h)");
    assert_true(l->ops->flame_key(l, 'a', msg, sizeof msg));
    tui_target_prof_label(l, label, sizeof label);
    assert_string_equal(label, "shop/checkout last 24h, all pods");
    /* the timed refresh meets no server: the last data stays, the error shows */
    tui_screens_key(v, 'T');
    v->next_refresh = 0;
    tui_screens_tick(v);
    tui_screens_render(v, &c);
    assert_true(canvas_has(&c, "cannot reach jprof-server at http://127.0.0.1:1 (--server)"));
    assert_true(canvas_has(&c, "w-1"));
    assert_int_equal(tui_screens_key(v, 'q'), TUI_ACTION_QUIT);
    tui_canvas_cleanup(&c);
    tui_screens_free(v); /* frees l and r */
}

int main(void)
{
    jp_error e;
    jp_error_init(&e);
    if (jp_http_global_init(&e) != JP_OK) {
        fprintf(stderr, "test_tui_remote: %s\n", e.msg);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flame_tree_to_profile),
        cmocka_unit_test(test_flame_bad_answers),
        cmocka_unit_test(test_query_escape),
        cmocka_unit_test(test_reports),
        cmocka_unit_test(test_view_keys_and_unreachable_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
