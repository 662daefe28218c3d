/* Unit tests of the heap histogram: src/jvm/histogram (the GC.class_histogram
 * parser) on JDK 11, 17, 21 and 25 text (tests/unit/data/histogram-*.txt,
 * README.md there says which are captured and which written by hand) and on
 * hostile text; model/heap (cut, growth); wire/heap_json (round trip and
 * refusals). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "data_file.h"
#include "jvm/histogram.h"
#include "model/heap.h"
#include "wire/heap_json.h"

static void parse_file(const char *name, jp_heap_histo *h)
{
    size_t len;
    char *text = ut_data_file(name, &len);
    jp_error err;
    jp_error_init(&err);
    jp_heap_histo_init(h);
    jp_err rc = jvm_histogram_parse(text, len, h, &err);
    if (rc != JP_OK)
        fail_msg("%s: %s", name, err.msg);
    free(text);
}

static long find(const jp_heap_histo *h, const char *name)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->classes[i].name, name) == 0)
            return (long)i;
    return -1;
}

static void check_sums(const jp_heap_histo *h)
{
    uint64_t si = 0, sb = 0;
    for (size_t i = 0; i < h->n; i++) {
        si += h->classes[i].instances;
        sb += h->classes[i].bytes;
        if (i)
            assert_true(h->classes[i - 1].bytes >= h->classes[i].bytes);
    }
    assert_int_equal(si, h->total_instances);
    assert_int_equal(sb, h->total_bytes);
    assert_int_equal(h->classes_total, h->n);
}

static void test_leak_jdk17(void **state)
{
    (void)state;
    jp_heap_histo h;
    parse_file("histogram-leak-jdk17.txt", &h);
    check_sums(&h);
    assert_int_equal(h.n, 252);
    /* the leak is the biggest class, in the unnamed module */
    assert_string_equal(h.classes[0].name, "leak.Leak$SessionRecord");
    assert_string_equal(h.classes[0].module, "");
    assert_int_equal(h.classes[0].instances, 10742);
    assert_int_equal(h.classes[0].bytes, 1546848);
    long s = find(&h, "java.lang.String");
    assert_true(s >= 0);
    assert_string_equal(h.classes[s].module, "java.base@17.0.21.1");
    assert_true(find(&h, "[Ljava.lang.invoke.LambdaForm$Name;") >= 0);
    assert_true(find(&h, "leak.Leak$$Lambda$1/0x00007fc890000c18") >= 0);
    assert_int_equal(h.undercounted, 0);
    jp_heap_histo_cleanup(&h);
}

static void test_leak_jdk25(void **state)
{
    (void)state;
    jp_heap_histo h;
    parse_file("histogram-leak-jdk25.txt", &h);
    check_sums(&h);
    assert_string_equal(h.classes[0].name, "leak.Leak$SessionRecord");
    assert_int_equal(h.classes[0].bytes, 144 * h.classes[0].instances);
    assert_true(find(&h, "leak.Leak$$Lambda/0x000000000f040428") >= 0);
    assert_string_equal(h.classes[find(&h, "[B")].module, "java.base@25.0.3");
    jp_heap_histo_cleanup(&h);
    parse_file("histogram-all-leak-jdk25.txt", &h);
    check_sums(&h);
    jp_heap_histo_cleanup(&h);
}

static void test_jdk11(void **state)
{
    (void)state;
    jp_heap_histo h;
    parse_file("histogram-jdk11.txt", &h);
    check_sums(&h);
    assert_int_equal(h.n, 10);
    assert_int_equal(h.undercounted, 17);
    assert_string_equal(h.classes[1].name, "com.shop.cart.CartLine");
    assert_string_equal(h.classes[1].module, "app.core@");
    assert_string_equal(h.classes[7].name, "com.shop.Main$$Lambda$14/0x0000000840066440");
    assert_string_equal(h.classes[7].module, "");
    jp_heap_histo_cleanup(&h);
}

static void test_jdk21(void **state)
{
    (void)state;
    jp_heap_histo h;
    parse_file("histogram-jdk21.txt", &h);
    check_sums(&h);
    assert_int_equal(h.n, 9);
    assert_string_equal(h.classes[7].name, "com.shop.plugins.Loader");
    assert_string_equal(h.classes[7].module, "shop.plugins");
    assert_string_equal(h.classes[8].name, "<no name>");
    assert_string_equal(h.classes[8].module, "");
    jp_heap_histo_cleanup(&h);
}

/* Text that must be refused with the given code and a message that has
 * `says` in it. */
static void refused(const char *text, jp_err code, const char *says)
{
    jp_heap_histo h;
    jp_heap_histo_init(&h);
    jp_error err;
    jp_error_init(&err);
    jp_err rc = jvm_histogram_parse(text, strlen(text), &h, &err);
    if (rc != code || !strstr(err.msg, says))
        fail_msg("%s -> %d '%s', expected %d '%s'", text, rc, err.msg, code, says);
    assert_int_equal(h.n, 0);
    jp_heap_histo_cleanup(&h);
}

#define HEAD " num     #instances         #bytes  class name (module)\n----------\n"

static void test_bad_text(void **state)
{
    (void)state;
    refused("", JP_ERR_FORMAT, "empty");
    refused("\n\n", JP_ERR_TRUNCATED, "no header");
    refused("hello\n", JP_ERR_FORMAT, "not a class histogram");
    refused(" num     #instances         #bytes  class name (module)\n", JP_ERR_TRUNCATED,
            "ends after its header");
    refused(HEAD "   1:  10  160  a.B\n   2:  1  16  a.C\n", JP_ERR_TRUNCATED, "no Total line");
    refused(HEAD "   1:  10  160  a.B\n   2:  1  16  a.C", JP_ERR_TRUNCATED, "after 2 classes");
    refused(HEAD "   1:  10  160  a.B\n   3:  1  16  a.C\nTotal 11 176\n", JP_ERR_FORMAT,
            "line 4: rows out of sequence");
    refused(HEAD "   1:  10  160  a.B\nTotal 11 176\n", JP_ERR_FORMAT, "add up to 10, 160");
    /* a future JDK's extra column, in the header, the rows or the totals */
    refused(" num     #instances         #bytes    #retained  class name (module)\n---\n",
            JP_ERR_FORMAT, "a column this jprof does not know");
    refused(HEAD "   1:  10  160  4000  a.B\nTotal 10 160\n", JP_ERR_FORMAT,
            "a number where the class name belongs");
    refused(HEAD "   1:  10  160  a.B\nTotal 10 160 4000\n", JP_ERR_FORMAT, "more than two totals");
    refused(HEAD "   1:  10  160  a.B\nTotal 10 160\nmore\n", JP_ERR_FORMAT, "after the Total");
    refused(HEAD "   1:  10\nTotal 10 160\n", JP_ERR_FORMAT, "instances and bytes expected");
    refused(HEAD "   1:  10  99999999999999999999  a.B\n", JP_ERR_FORMAT, "instances and bytes");
    refused(HEAD "   1:  18446744073709551615  1  a.B\n   2:  1  1  a.C\n", JP_ERR_FORMAT,
            "overflow");
    refused("ERROR: Ran out of C-heap; histogram not generated\n", JP_ERR_PROTOCOL,
            "the JVM made no histogram");
    refused(HEAD "   1:  10  160  \n", JP_ERR_FORMAT, "no class name");
}

static void test_odd_but_fine(void **state)
{
    (void)state;
    /* jcmd's "PID:" line, CRLF, a control byte and bad UTF-8 in a name */
    const char *t = "4242:\r\n" HEAD "   1:  2  32  a.\x01\xff\xc3\xa9 (m@1)\r\n"
                    "   2:  1  16  b.C\r\nTotal   3   48\r\n\r\n";
    jp_heap_histo h;
    jp_heap_histo_init(&h);
    jp_error err;
    jp_error_init(&err);
    assert_int_equal(jvm_histogram_parse(t, strlen(t), &h, &err), JP_OK);
    assert_int_equal(h.n, 2);
    assert_string_equal(h.classes[0].name, "a.??\xc3\xa9");
    assert_string_equal(h.classes[0].module, "m@1");
    jp_heap_histo_cleanup(&h);
    /* every prefix of a real text is refused, none crashes */
    size_t len;
    char *text = ut_data_file("histogram-jdk21.txt", &len);
    for (size_t n = 0; n < len - 1; n++) {
        jp_heap_histo_init(&h);
        assert_int_not_equal(jvm_histogram_parse(text, n, &h, &err), JP_OK);
        jp_heap_histo_cleanup(&h);
    }
    free(text);
}

static void add(jp_heap_histo *h, const char *name, uint64_t inst, uint64_t bytes)
{
    assert_true(jp_heap_histo_add(h, name, strlen(name), "", 0, inst, bytes));
    h->total_instances += inst;
    h->total_bytes += bytes;
    h->classes_total = h->n;
}

static void test_growth(void **state)
{
    (void)state;
    jp_heap_histo a, b;
    jp_heap_histo_init(&a);
    jp_heap_histo_init(&b);
    a.time_ns = 1000000000000LL;
    b.time_ns = a.time_ns + 30 * 1000000000LL; /* 30 s later */
    add(&a, "[B", 1000, 100000);
    add(&a, "Leak", 600, 86400);
    add(&a, "Gone", 10, 160);
    add(&a, "Dup", 1, 16); /* one class, two loaders: compared by name */
    add(&a, "Dup", 1, 16);
    add(&b, "Leak", 1600, 230400);
    add(&b, "[B", 900, 90000);
    add(&b, "New", 5, 80);
    add(&b, "Dup", 3, 48);
    jp_heap_growth g;
    jp_heap_growth_init(&g);
    jp_heap_growth_compute(&a, &b, &g);
    assert_int_equal(g.n, 5);
    assert_int_equal(g.span_ns, 30 * 1000000000LL);
    assert_false(g.approximate);
    assert_string_equal(g.rows[0].name, "Leak");
    assert_int_equal(g.rows[0].instances_delta, 1000);
    assert_int_equal(g.rows[0].bytes_delta, 144000);
    assert_true(g.rows[0].instances_per_min > 1999.99 && g.rows[0].instances_per_min < 2000.01);
    assert_true(g.rows[0].bytes_per_min > 287999.9 && g.rows[0].bytes_per_min < 288000.1);
    assert_string_equal(g.rows[1].name, "New");
    assert_string_equal(g.rows[2].name, "Dup");
    assert_int_equal(g.rows[2].instances_from, 2);
    assert_int_equal(g.rows[2].instances_delta, 1);
    assert_string_equal(g.rows[3].name, "Gone");
    assert_int_equal(g.rows[3].bytes_to, 0);
    assert_string_equal(g.rows[4].name, "[B");
    assert_int_equal(g.rows[4].bytes_delta, -10000);
    assert_int_equal(g.total_bytes_delta, (int64_t)b.total_bytes - (int64_t)a.total_bytes);
    /* a cut histogram keeps its totals and makes the growth approximate */
    jp_heap_histo_cut(&a, 2);
    assert_int_equal(a.n, 2);
    assert_int_equal(a.classes_total, 5);
    assert_true(jp_heap_histo_is_cut(&a));
    assert_string_equal(a.classes[0].name, "[B");
    jp_heap_growth_compute(&a, &b, &g);
    assert_true(g.approximate);
    jp_heap_growth_cleanup(&g);
    jp_heap_histo_cleanup(&a);
    jp_heap_histo_cleanup(&b);
}

static void test_json(void **state)
{
    (void)state;
    jp_heap_histo h, back;
    parse_file("histogram-jdk11.txt", &h);
    h.time_ns = 1234;
    h.took_ns = 56;
    h.all = true;
    json_t *j = jp_heap_histo_json(&h, 0);
    char why[160];
    jp_heap_histo_init(&back);
    assert_true(jp_heap_histo_from_json(j, &back, 100, why, sizeof why));
    assert_int_equal(back.n, h.n);
    assert_int_equal(back.time_ns, 1234);
    assert_int_equal(back.took_ns, 56);
    assert_true(back.all);
    assert_int_equal(back.undercounted, 17);
    assert_int_equal(back.total_bytes, h.total_bytes);
    for (size_t i = 0; i < h.n; i++) {
        assert_string_equal(back.classes[i].name, h.classes[i].name);
        assert_string_equal(back.classes[i].module, h.classes[i].module);
        assert_int_equal(back.classes[i].bytes, h.classes[i].bytes);
    }
    assert_false(jp_heap_histo_from_json(j, &back, 3, why, sizeof why));
    assert_non_null(strstr(why, "classes: more classes than allowed"));
    json_decref(j);
    /* top 3: cut, the totals kept */
    j = jp_heap_histo_json(&h, 3);
    assert_true(json_is_true(json_object_get(j, "cut")));
    assert_true(jp_heap_histo_from_json(j, &back, 100, why, sizeof why));
    assert_int_equal(back.n, 3);
    assert_int_equal(back.classes_total, 10);
    assert_int_equal(back.total_bytes, h.total_bytes);
    /* refusals say what and where */
    json_object_set_new(json_array_get(json_object_get(j, "classes"), 1), "bytes",
                        json_integer(-1));
    assert_false(jp_heap_histo_from_json(j, &back, 100, why, sizeof why));
    assert_string_equal(why, "classes[1].bytes: must be an integer >= 0");
    assert_int_equal(back.n, 0);
    json_object_set_new(json_array_get(json_object_get(j, "classes"), 1), "bytes",
                        json_integer((json_int_t)h.total_bytes));
    assert_false(jp_heap_histo_from_json(j, &back, 100, why, sizeof why));
    assert_string_equal(why, "total_bytes: smaller than what the classes add up to");
    json_decref(j);
    jp_heap_histo_cleanup(&back);
    /* growth JSON */
    jp_heap_histo later;
    parse_file("histogram-jdk11.txt", &later);
    later.time_ns = h.time_ns + 60000000000LL;
    later.classes[1].instances += 60;
    later.classes[1].bytes += 60 * 144;
    jp_heap_growth g;
    jp_heap_growth_init(&g);
    jp_heap_growth_compute(&h, &later, &g);
    j = jp_heap_growth_json(&g, 1);
    assert_int_equal(json_array_size(json_object_get(j, "classes")), 1);
    json_t *r = json_array_get(json_object_get(j, "classes"), 0);
    assert_string_equal(json_string_value(json_object_get(r, "name")), "com.shop.cart.CartLine");
    assert_int_equal(json_integer_value(json_object_get(r, "bytes_delta")), 60 * 144);
    assert_true(json_real_value(json_object_get(r, "instances_per_min")) == 60.0);
    json_decref(j);
    /* read back (the server's growth in jprof-top): rows, names, rates */
    j = jp_heap_growth_json(&g, 0);
    jp_heap_growth back_g;
    jp_heap_histo names;
    jp_heap_growth_init(&back_g);
    jp_heap_histo_init(&names);
    assert_true(jp_heap_growth_from_json(j, &back_g, &names, 100, why, sizeof why));
    assert_int_equal(back_g.n, g.n);
    assert_int_equal(back_g.span_ns, 60000000000LL);
    assert_string_equal(back_g.rows[0].name, "com.shop.cart.CartLine");
    assert_string_equal(back_g.rows[0].module, "app.core@");
    assert_int_equal(back_g.rows[0].bytes_delta, 60 * 144);
    assert_true(back_g.rows[0].instances_per_min == 60.0);
    assert_false(jp_heap_growth_from_json(j, &back_g, &names, 2, why, sizeof why));
    assert_string_equal(why, "classes: more rows than allowed");
    json_object_set_new(json_array_get(json_object_get(j, "classes"), 0), "bytes_to",
                        json_string("x"));
    assert_false(jp_heap_growth_from_json(j, &back_g, &names, 100, why, sizeof why));
    assert_string_equal(why, "classes[0].bytes_to: must be an integer >= 0");
    assert_int_equal(back_g.n, 0);
    json_decref(j);
    jp_heap_growth_cleanup(&back_g);
    jp_heap_histo_cleanup(&names);
    jp_heap_growth_cleanup(&g);
    jp_heap_histo_cleanup(&later);
    jp_heap_histo_cleanup(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leak_jdk17), cmocka_unit_test(test_leak_jdk25),
        cmocka_unit_test(test_jdk11),      cmocka_unit_test(test_jdk21),
        cmocka_unit_test(test_bad_text),   cmocka_unit_test(test_odd_but_fine),
        cmocka_unit_test(test_growth),     cmocka_unit_test(test_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
