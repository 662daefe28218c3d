/* Unit tests of jprof-server's pure parts: the token file and the batch JSON
 * codec (src/server/auth.c, src/wire/batch*.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/profile.h"
#include "server/auth.h"
#include "server/store.h"
#include "wire/batch.h"
#include "wire/batch_json.h"

static const auth_token *look(const auth_table *t, const char *s)
{
    return auth_lookup(t, s, strlen(s));
}

static void test_auth_roles_and_scopes(void **state)
{
    (void)state;
    const char *text = "# comment\n"
                       "\n"
                       "ingest-token-0123456789 ingest *\n"
                       "  read-token-0123456789ab   read shop,pay  # trailing comment\r\n"
                       "admin-token-0123456789a admin *\n";
    auth_table *t;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(auth_parse(text, strlen(text), "tokens", &t, &e), JP_OK);
    assert_int_equal(auth_count(t), 3);
    const auth_token *in = look(t, "ingest-token-0123456789");
    const auth_token *rd = look(t, "read-token-0123456789ab");
    const auth_token *ad = look(t, "admin-token-0123456789a");
    assert_non_null(in);
    assert_non_null(rd);
    assert_non_null(ad);
    assert_true(auth_has_role(in, AUTH_INGEST));
    assert_false(auth_has_role(in, AUTH_READ));
    assert_true(auth_has_role(rd, AUTH_READ));
    assert_false(auth_has_role(rd, AUTH_INGEST));
    assert_true(auth_has_role(ad, AUTH_READ) && auth_has_role(ad, AUTH_INGEST));
    assert_true(auth_in_scope(rd, "shop") && auth_in_scope(rd, "pay"));
    assert_false(auth_in_scope(rd, "sho"));
    assert_false(auth_in_scope(rd, "other"));
    assert_true(auth_in_scope(in, "anything"));
    /* a prefix, a longer string or a near miss is not the token */
    assert_null(look(t, "read-token-0123456789a"));   /* prefix */
    assert_null(look(t, "read-token-0123456789abc")); /* longer */
    assert_null(look(t, "read-token-0123456789aX"));  /* last byte differs */
    assert_null(look(t, ""));
    auth_free(t);
}

static void test_auth_errors_name_the_line_not_the_token(void **state)
{
    (void)state;
    const char *bad[] = {
        "secret-token-abcdef0123 reader *\n", "good-token-0123456789 read *\nshort read *\n",
        "secret-token-abcdef0123 read\n", "secret-token-abcdef0123 read shop,,x\n", "# nothing\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        auth_table *t = NULL;
        jp_error e;
        jp_error_init(&e);
        assert_int_not_equal(auth_parse(bad[i], strlen(bad[i]), "tok", &t, &e), JP_OK);
        assert_null(t);
        assert_non_null(strstr(e.msg, "tok"));
        assert_null(strstr(e.msg, "secret-token"));
    }
}

static const char good_batch[] =
    "{\"batch_id\":\"b-1\",\"collector\":{\"id\":\"agent@n1\"},"
    "\"frames\":[\"java.lang.Thread.run\",\"a.B.c\"],\"frame_kinds\":[\"interpreted\","
    "\"some-future-kind\"],\"threads\":[\"main\"],"
    "\"stacks\":[[0,1],{\"frames\":[0],\"truncated\":true}],"
    "\"windows\":[{\"target\":{\"namespace\":\"shop\",\"service\":\"checkout\",\"pod\":\"p1\","
    "\"pid\":42},\"kind\":\"alloc\",\"start\":\"2026-11-21T10:00:00Z\",\"end\":1795341660000000000,"
    "\"events\":3,\"rows\":[[0,2,2048],[1,1,512,0]]}],"
    "\"statuses\":[{\"target\":{\"namespace\":\"shop\"},\"time\":5,\"state\":\"skipped\","
    "\"reason\":\"conflict\",\"mode\":\"temporary\",\"until\":\"2026-11-21T12:00:00Z\"}],"
    "\"thread_snapshots\":[{\"target\":{\"namespace\":\"shop\"},\"time\":5,\"threads\":"
    "[{\"name\":\"main\",\"state\":\"RUNNABLE\"}]}],"
    "\"gc\":[{\"target\":{\"namespace\":\"shop\",\"service\":\"checkout\",\"pod\":\"p1\"},"
    "\"start\":1795341600000000000,\"end\":1795341660000000000,\"summary\":{"
    "\"collections\":2,\"pauses\":3,\"pauses_from\":\"jdk.GCPhasePause\","
    "\"pause_total_ns\":9,\"pause_p50_ns\":3,\"pause_p99_ns\":5,\"pause_max_ns\":5,"
    "\"longest\":{\"start_ns\":1795341601000000000,\"gc_id\":7,\"phase\":\"GC Pause\","
    "\"collector\":\"G1New\",\"cause\":\"unknown\"},\"heap\":null,"
    "\"alloc\":{\"bytes\":600,\"span_ns\":60,\"source\":\"thread allocation statistics\"},"
    "\"future_key\":1},\"pause_ns\":[5,1,3]}],"
    "\"heap_histograms\":[{\"target\":{\"namespace\":\"shop\",\"service\":\"checkout\","
    "\"pod\":\"p1\"},\"time\":1795341650000000000,\"histogram\":{\"time_ns\":"
    "1795341650000000000,\"took_ns\":4000000,\"all\":false,\"total_instances\":3,"
    "\"total_bytes\":48,\"classes_total\":2,\"undercounted\":0,\"classes\":[{\"name\":"
    "\"a.B\",\"module\":\"m@1\",\"instances\":2,\"bytes\":32},{\"name\":\"c.D\","
    "\"module\":\"\",\"instances\":1,\"bytes\":16}]}}]}";

static void test_batch_decode_and_roundtrip(void **state)
{
    (void)state;
    jp_batch_limits lim;
    jp_batch_limits_default(&lim);
    jp_batch b;
    jp_batch_init(&b);
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_batch_json_decode(good_batch, strlen(good_batch), &lim, &b, &e), JP_OK);
    assert_string_equal(b.id, "b-1");
    assert_int_equal(b.nwindows, 1);
    assert_int_equal(b.windows[0].kind, JP_KIND_ALLOC);
    assert_int_equal(b.windows[0].nrows, 2);
    assert_int_equal(b.windows[0].rows[1].thread, 0);
    assert_int_equal(b.windows[0].rows[0].thread, JP_BATCH_NO_THREAD);
    assert_true(b.stacks[1].truncated);
    assert_string_equal(b.statuses[0].reason, "conflict");
    assert_string_equal(b.statuses[0].mode, "temporary");
    assert_int_equal(b.statuses[0].until_ns, 1795262400LL * 1000000000LL);
    assert_int_equal(b.nsnapshots, 1);
    /* frame kinds: one per frame; a word this version does not know is unknown */
    assert_int_equal(b.nframe_kinds, 2);
    assert_int_equal(jp_batch_frame_kind(&b, 0), JP_FRAME_INTERPRETED);
    assert_int_equal(jp_batch_frame_kind(&b, 1), JP_FRAME_UNKNOWN);
    b.frame_kinds[1] = JP_FRAME_INLINED;
    /* the stack id is the one jp_profile gives the same frames */
    jp_profile *p = jp_profile_new();
    uint32_t f[2] = {jp_profile_frame(p, "java.lang.Thread.run", 20, JP_FRAME_JIT),
                     jp_profile_frame(p, "a.B.c", 5, JP_FRAME_JIT)};
    uint32_t s = jp_profile_stack(p, f, 2, false);
    assert_true(p->stacks[s].id == b.stacks[0].id);
    jp_profile_free(p);
    /* encode, decode again: the same content */
    size_t len;
    char *text = jp_batch_json_encode(&b, &len);
    jp_batch b2;
    jp_batch_init(&b2);
    assert_int_equal(jp_batch_json_decode(text, len, &lim, &b2, &e), JP_OK);
    assert_int_equal(b2.nwindows, 1);
    assert_int_equal(b2.windows[0].start_ns, b.windows[0].start_ns);
    assert_int_equal(b2.windows[0].rows[0].value, 2048);
    assert_true(b2.stacks[0].id == b.stacks[0].id);
    assert_true(b2.stacks[1].truncated);
    assert_string_equal(b2.windows[0].target.pod, "p1");
    assert_int_equal(jp_batch_frame_kind(&b2, 1), JP_FRAME_INLINED);
    assert_string_equal(b2.statuses[0].mode, "temporary");
    assert_int_equal(b2.statuses[0].until_ns, b.statuses[0].until_ns);
    /* the GC summary: sorted pauses, "unknown" names empty, source parsed */
    assert_int_equal(b2.ngcs, 1);
    const jp_gc_window *w = &b2.gcs[0].w;
    assert_string_equal(b2.gcs[0].target.pod, "p1");
    assert_int_equal(w->s.from_ns, 1795341600000000000LL);
    assert_int_equal(w->s.pauses, 3);
    assert_int_equal(w->npause, 3);
    assert_int_equal(w->pause_ns[0], 1);
    assert_int_equal(w->pause_ns[2], 5);
    assert_true(w->s.has_longest && !w->s.has_heap);
    assert_string_equal(w->s.longest_collector, "G1New");
    assert_string_equal(w->s.longest_cause, "");
    assert_int_equal(w->s.alloc_source, JP_GC_ALLOC_THREADS);
    assert_true(w->s.alloc_rate > 9.99e9 && w->s.alloc_rate < 10.01e9);
    /* the heap histogram travels as its checked JSON text */
    assert_int_equal(b2.nheaps, 1);
    assert_int_equal(b2.heaps[0].time_ns, 1795341650000000000LL);
    assert_string_equal(b2.heaps[0].target.pod, "p1");
    assert_non_null(strstr(b2.heaps[0].json, "\"name\":\"c.D\""));
    free(text);
    jp_batch_cleanup(&b2);
    jp_batch_cleanup(&b);
}

static void expect_error(const char *json, jp_err code, const char *where,
                         const jp_batch_limits *lim)
{
    jp_batch b;
    jp_batch_init(&b);
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_batch_json_decode(json, strlen(json), lim, &b, &e), code);
    if (!strstr(e.msg, where))
        fail_msg("'%s' does not name '%s'", e.msg, where);
    jp_batch_cleanup(&b);
}

static void test_batch_errors_name_the_field(void **state)
{
    (void)state;
    jp_batch_limits lim;
    jp_batch_limits_default(&lim);
    expect_error("{\"collector\":{\"id\":\"x\"}}", JP_ERR_FORMAT, "batch_id", &lim);
    expect_error("{\"batch_id\":\"x\"}", JP_ERR_FORMAT, "collector", &lim);
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"stacks\":[[0]]}",
                 JP_ERR_FORMAT, "stacks[0]", &lim);
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"windows\":[{\"target\":"
                 "{\"namespace\":\"n\",\"service\":\"s\"},\"kind\":\"cpu\",\"start\":1,\"end\":2,"
                 "\"rows\":[[0,1,1]]}]}",
                 JP_ERR_FORMAT, "windows[0].rows[0]", &lim);
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"windows\":[{\"target\":"
                 "{\"namespace\":\"n\"},\"kind\":\"cpu\",\"start\":1,\"end\":2,\"rows\":[]}]}",
                 JP_ERR_FORMAT, "windows[0].target.service", &lim);
    expect_error("[]", JP_ERR_FORMAT, "object", &lim);
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"gc\":{}}", JP_ERR_FORMAT,
                 "gc: must be an array", &lim);
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"gc\":[{\"target\":"
                 "{\"namespace\":\"n\"},\"start\":1,\"end\":2,\"summary\":{\"pauses\":1}}]}",
                 JP_ERR_FORMAT, "gc[0].summary.collections: required integer is missing", &lim);
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"heap_histograms\":[{"
                 "\"target\":{\"namespace\":\"n\"},\"time\":1,\"histogram\":{\"time_ns\":1,"
                 "\"took_ns\":1,\"all\":true,\"total_instances\":1,\"total_bytes\":8,"
                 "\"classes_total\":1,\"undercounted\":0,\"classes\":[{\"name\":\"a\","
                 "\"module\":\"\",\"instances\":1,\"bytes\":-8}]}}]}",
                 JP_ERR_FORMAT, "heap_histograms[0].histogram.classes[0].bytes: must be", &lim);
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"frames\":[\"a\"],"
                 "\"frame_kinds\":[\"jit\",\"jit\"]}",
                 JP_ERR_FORMAT, "frame_kinds", &lim);
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"frame_kinds\":[3]}",
                 JP_ERR_FORMAT, "frame_kinds[0]", &lim);
    lim.max_depth = 1;
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"frames\":[\"a\"],"
                 "\"stacks\":[[0,0]]}",
                 JP_ERR_LIMIT, "stacks[0]", &lim);
    lim.max_string = 3;
    expect_error("{\"batch_id\":\"x\",\"collector\":{\"id\":\"a\"},\"frames\":[\"abcd\"]}",
                 JP_ERR_LIMIT, "frames[0]", &lim);
}

/* Clock skew and retention: a window is refused with a code the agent counts. */
static void test_window_refusal_future_and_retention(void **state)
{
    (void)state;
    const int64_t s = 1000000000LL, now = 1790000000LL * s, skew = 600 * s;
    const char *why = "x";
    assert_null(store_window_refusal(now - 60 * s, now, 7, skew, &why));
    assert_null(why);
    assert_null(store_window_refusal(now + 599 * s, now, 7, skew, &why)); /* within tolerance */
    assert_string_equal(store_window_refusal(now + 601 * s, now, 7, skew, &why), "future");
    assert_non_null(strstr(why, "clock"));
    assert_string_equal(store_window_refusal(now + 3 * 86400 * s, now, 7, 100 * 86400 * s, &why),
                        "future"); /* past tomorrow, whatever the tolerance */
    assert_string_equal(store_window_refusal(now - 9 * 86400 * s, now, 7, skew, &why), "retention");
    assert_non_null(strstr(why, "retention"));
    assert_null(store_window_refusal(now - 5 * 86400 * s, now, 7, skew, &why));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_auth_roles_and_scopes),
        cmocka_unit_test(test_auth_errors_name_the_line_not_the_token),
        cmocka_unit_test(test_batch_decode_and_roundtrip),
        cmocka_unit_test(test_batch_errors_name_the_field),
        cmocka_unit_test(test_window_refusal_future_and_retention),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
