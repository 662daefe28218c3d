/* Unit tests of jprof-server's query-string parser (src/server/api_query.c):
 * splitting and percent-decoding, and the typed parameters, above all the
 * error messages (what is wrong, in which parameter, at which byte). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/strbuf.h"
#include "base/timeutil.h"
#include "server/api_query.h"

#define NOW (1795000000LL * JP_NS_PER_SEC) /* 2026-11-18T11:06:40Z */

/* Parses q; returns the error code, the message in *e. */
static jp_err split(const char *q, api_args *a, jp_error *e)
{
    jp_error_init(e);
    return api_args_parse(q, strlen(q), a, e);
}

/* The message of a refused query string (the split must fail). */
static const char *split_error(const char *q)
{
    static jp_error e;
    api_args a;
    jp_err rc = split(q, &a, &e);
    api_args_free(&a);
    if (rc != JP_ERR_USAGE)
        fail_msg("'%.60s' was accepted (rc %d)", q, rc);
    return e.msg;
}

#define assert_has(msg, part)                                                                      \
    do {                                                                                           \
        if (!strstr((msg), (part)))                                                                \
            fail_msg("message '%s' lacks '%s'", (msg), (part));                                    \
    } while (0)

static void test_split_and_decode(void **state)
{
    (void)state;
    api_args a;
    jp_error e;
    assert_int_equal(split("a=1&b=x+y%2Bz&&c&d=%E2%9C%93&e=%f0%9f%98%80&f==x&g=%25", &a, &e),
                     JP_OK);
    assert_int_equal(a.n, 7);
    assert_string_equal(api_args_get(&a, "a"), "1");
    assert_string_equal(api_args_get(&a, "b"), "x y+z"); /* '+' is a space, %2B a plus */
    assert_string_equal(api_args_get(&a, "c"), "");      /* no '=': empty value */
    assert_string_equal(api_args_get(&a, "d"), "\xe2\x9c\x93");
    assert_string_equal(api_args_get(&a, "e"), "\xf0\x9f\x98\x80"); /* lower-case hex too */
    assert_string_equal(api_args_get(&a, "f"), "=x"); /* the first '=' ends the name */
    assert_string_equal(api_args_get(&a, "g"), "%");
    assert_null(api_args_get(&a, "h"));
    api_args_free(&a);
    /* nothing at all, or only separators */
    assert_int_equal(split("", &a, &e), JP_OK);
    assert_int_equal(a.n, 0);
    api_args_free(&a);
    assert_int_equal(split("&&&", &a, &e), JP_OK);
    assert_int_equal(a.n, 0);
    api_args_free(&a);
    /* an escaped name is decoded like a value */
    assert_int_equal(split("base%5Fpod=x", &a, &e), JP_OK);
    assert_string_equal(api_args_get(&a, "base_pod"), "x");
    api_args_free(&a);
}

static void test_percent_encoding_errors(void **state)
{
    (void)state;
    /* the byte named is the '%' of the bad escape */
    const char *m = split_error("namespace=shop&service=x%zz");
    assert_has(m, "byte 24");
    assert_has(m, "two hex digits");
    assert_has(split_error("namespace=shop%2"), "byte 14"); /* cut at the end */
    assert_has(split_error("a=%"), "byte 2");
    assert_has(split_error("a=%4"), "byte 2");
    assert_has(split_error("a=%g0"), "byte 2");
    assert_has(split_error("%=1"), "byte 0"); /* in a name too */
    /* %00 would cut a C string short: "a%00b" must not become "a" */
    m = split_error("namespace=a%00b");
    assert_has(m, "byte 11");
    assert_has(m, "NUL");
    /* raw control characters are not sent by clients: refused, not passed on */
    assert_has(split_error("a=x\ty"), "control character 0x09");
    assert_has(split_error("a=x\x7fy"), "byte 3");
}

static void test_utf8(void **state)
{
    (void)state;
    /* overlong '/', a UTF-16 surrogate, a cut sequence, a lone continuation
     * byte, beyond U+10FFFF: each refused with the parameter's name */
    const char *bad[] = {"thread=%C0%AF", "thread=%ED%A0%80",    "thread=ab%C3",
                         "thread=%80",    "thread=%F4%90%80%80", "thread=%FF"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *m = split_error(bad[i]);
        assert_has(m, "'thread' is not valid UTF-8");
    }
    assert_has(split_error("thread=ab%C3"), "decoded byte 2");
    /* raw (unescaped) UTF-8 is decoded as it is */
    api_args a;
    jp_error e;
    assert_int_equal(split("thread=\xc3\xa9t\xc3\xa9&pod=%F4%8F%BF%BF", &a, &e), JP_OK);
    assert_string_equal(api_args_get(&a, "thread"), "\xc3\xa9t\xc3\xa9");
    api_args_free(&a);
}

static void test_names_counts_and_lengths(void **state)
{
    (void)state;
    assert_has(split_error("from=-1h&to=now&from=-2h"), "byte 16: 'from' is given twice");
    assert_has(split_error("=x"), "byte 0: a parameter without a name");
    assert_has(split_error("a=1&=x"), "byte 4");
    assert_has(split_error("a%20b=1"), "printable ASCII");
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    for (int i = 0; i < 65; i++)
        jp_strbuf_printf(&b, "%sp%d=%d", i ? "&" : "", i, i);
    assert_has(split_error(b.data), "more than 64 parameters");
    /* 64 are fine */
    jp_strbuf_reset(&b);
    for (int i = 0; i < 64; i++)
        jp_strbuf_printf(&b, "%sp%d=%d", i ? "&" : "", i, i);
    api_args a;
    jp_error e;
    assert_int_equal(split(b.data, &a, &e), JP_OK);
    assert_int_equal(a.n, 64);
    assert_string_equal(api_args_get(&a, "p63"), "63");
    api_args_free(&a);
    /* a value of 4096 decoded bytes passes, 4097 does not (escapes count decoded) */
    jp_strbuf_reset(&b);
    jp_strbuf_puts(&b, "thread=");
    for (int i = 0; i < 4096; i++)
        jp_strbuf_puts(&b, i % 2 ? "%41" : "b");
    assert_int_equal(split(b.data, &a, &e), JP_OK);
    assert_int_equal(strlen(api_args_get(&a, "thread")), 4096);
    api_args_free(&a);
    jp_strbuf_putc(&b, 'c');
    const char *m = split_error(b.data);
    assert_has(m, "the value of 'thread' has 4097 bytes (at most 4096)");
    /* a name of 65 bytes */
    jp_strbuf_reset(&b);
    for (int i = 0; i < 65; i++)
        jp_strbuf_putc(&b, 'k');
    jp_strbuf_puts(&b, "=1");
    assert_has(split_error(b.data), "a parameter name of 65 bytes");
    /* the whole query string */
    jp_strbuf_reset(&b);
    for (int i = 0; i < API_QUERY_MAX_BYTES + 1; i++)
        jp_strbuf_putc(&b, '&');
    assert_has(split_error(b.data), "query string of 32769 bytes is too long");
    jp_strbuf_cleanup(&b);
}

/* Parses q with api_query_parse(); the error message, or NULL when accepted. */
static const char *query(const char *q, unsigned need, store_filter *f, api_args *a)
{
    static jp_error e;
    assert_int_equal(split(q, a, &e), JP_OK);
    jp_error_init(&e);
    return api_query_parse(a, need, NOW, f, &e) == JP_OK ? NULL : e.msg;
}

static void test_times(void **state)
{
    (void)state;
    api_args a;
    store_filter f;
    const unsigned all = API_NEED_NS | API_NEED_SERVICE | API_NEED_KIND;
    /* defaults: the last hour */
    assert_null(query("namespace=shop&service=x", all, &f, &a));
    assert_int_equal(f.to_ns, NOW);
    assert_int_equal(f.from_ns, NOW - 3600 * JP_NS_PER_SEC);
    assert_int_equal(f.kind, JP_KIND_CPU);
    api_args_free(&a);
    /* relative, "now", RFC 3339 with an offset (':' and '+' escaped), @EPOCH */
    assert_null(query("namespace=shop&service=x&from=-90m&to=now", all, &f, &a));
    assert_int_equal(f.from_ns, NOW - 5400 * JP_NS_PER_SEC);
    assert_int_equal(f.to_ns, NOW);
    api_args_free(&a);
    assert_null(
        query("namespace=s&service=x&from=2026-11-18T10%3A00%3A00.5%2B01%3A00&to=@1795000000", all,
              &f, &a));
    assert_int_equal(f.from_ns, 1794992400LL * JP_NS_PER_SEC + 500000000);
    assert_int_equal(f.to_ns, NOW);
    api_args_free(&a);
    /* a bad time names the parameter and the value */
    const char *m = query("namespace=s&service=x&from=yesterday", all, &f, &a);
    assert_non_null(m);
    assert_has(m, "from: ");
    assert_has(m, "yesterday");
    api_args_free(&a);
    assert_has(query("namespace=s&service=x&to=2026-13-01T00:00:00Z", all, &f, &a), "to: bad time");
    api_args_free(&a);
    /* from after to: both times shown */
    m = query("namespace=s&service=x&from=-1h&to=-2h", all, &f, &a);
    assert_string_equal(m, "'from' (2026-11-18T10:06:40.000Z) must be before 'to' "
                           "(2026-11-18T09:06:40.000Z)");
    api_args_free(&a);
    assert_has(query("namespace=s&service=x&from=now&to=now", all, &f, &a), "must be before");
    api_args_free(&a);
    /* Regressions: these overflowed int64 in the handlers' arithmetic
     * (now + 100000 d; a base range as long as -9e9 .. 9e9 s); now they are
     * times outside what a query may name. */
    m = query("namespace=s&service=x&to=%2B100000d", all, &f, &a);
    assert_has(m, "to: '+100000d' is outside the times a query may name");
    api_args_free(&a);
    assert_has(query("namespace=s&service=x&from=@-9000000000&to=now", all, &f, &a),
               "from: '@-9000000000' is outside");
    api_args_free(&a);
    assert_has(query("namespace=s&service=x&to=2100-01-01T00:00:01Z", all, &f, &a), "outside");
    api_args_free(&a);
    assert_null(query("namespace=s&service=x&to=2099-12-31T23:59:59Z&from=1970-01-01T00:00:00Z",
                      all, &f, &a));
    api_args_free(&a);
    /* an overlong time is refused before it is parsed, and not echoed */
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    jp_strbuf_puts(&b, "namespace=s&service=x&from=-");
    for (int i = 0; i < 70; i++)
        jp_strbuf_putc(&b, '1');
    jp_strbuf_puts(&b, "h");
    assert_string_equal(query(b.data, all, &f, &a),
                        "from: a time of 72 bytes is too long (at most 64)");
    api_args_free(&a);
    jp_strbuf_cleanup(&b);
}

static void test_required_kind_and_choices(void **state)
{
    (void)state;
    api_args a;
    store_filter f;
    jp_error e;
    const unsigned all = API_NEED_NS | API_NEED_SERVICE | API_NEED_KIND;
    assert_string_equal(query("service=x", all, &f, &a), "query parameter 'namespace' is required");
    api_args_free(&a);
    /* empty is absent */
    assert_string_equal(query("namespace=&service=x", all, &f, &a),
                        "query parameter 'namespace' is required");
    api_args_free(&a);
    assert_string_equal(query("namespace=s&service=", all, &f, &a),
                        "query parameter 'service' is required");
    api_args_free(&a);
    assert_null(query("pod=&thread=", 0, &f, &a));
    assert_null(f.ns);
    assert_null(f.pod);
    assert_null(f.thread);
    assert_int_equal(f.kind, -1); /* not asked for */
    api_args_free(&a);
    const char *m = query("namespace=s&service=x&kind=heap", all, &f, &a);
    assert_has(m, "unknown kind 'heap' (");
    assert_has(m, "cpu");
    api_args_free(&a);
    /* a long value is echoed cut at 40 bytes, at a character boundary */
    m = query("namespace=s&service=x&kind=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa%C3%A9zzzz", all,
              &f, &a);
    assert_has(m, "unknown kind 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
    api_args_free(&a);
    assert_null(query("namespace=s&service=x&kind=alloc", all, &f, &a));
    assert_int_equal(f.kind, JP_KIND_ALLOC);
    /* choices, limits, flags */
    static const char *const fmts[] = {"json", "pprof", "html", NULL};
    int c = -1;
    jp_error_init(&e);
    assert_int_equal(api_arg_choice(&a, "format", fmts, &c, &e), JP_OK);
    assert_int_equal(c, 0);
    long l = 0;
    assert_int_equal(api_arg_limit(&a, "limit", 100, 1000, &l, &e), JP_OK);
    assert_int_equal(l, 100);
    assert_false(api_arg_flag(&a, "threads"));
    api_args_free(&a);
    assert_int_equal(
        split("format=xml&limit=0&max_nodes=12x&threads=true&history_limit=1000", &a, &e), JP_OK);
    assert_int_equal(api_arg_choice(&a, "format", fmts, &c, &e), JP_ERR_USAGE);
    assert_string_equal(e.msg, "format must be one of 'json', 'pprof', 'html', not 'xml'");
    assert_int_equal(api_arg_limit(&a, "limit", 100, 1000, &l, &e), JP_ERR_USAGE);
    assert_string_equal(e.msg, "limit must be an integer from 1 to 1000");
    assert_int_equal(api_arg_limit(&a, "max_nodes", 100, 1000, &l, &e), JP_ERR_USAGE);
    assert_int_equal(api_arg_limit(&a, "history_limit", 100, 1000, &l, &e), JP_OK);
    assert_int_equal(l, 1000);
    assert_true(api_arg_flag(&a, "threads"));
    api_args_free(&a);
}

static void test_diff_base(void **state)
{
    (void)state;
    api_args a;
    store_filter f, bf;
    jp_error e;
    const unsigned all = API_NEED_NS | API_NEED_SERVICE | API_NEED_KIND;
    /* only base_to: the baseline is as long as the current range */
    assert_null(query("namespace=s&service=x&pod=p1&from=-2h&base_to=-3h", all, &f, &a));
    jp_error_init(&e);
    assert_int_equal(api_query_base(&a, &f, NOW, &bf, &e), JP_OK);
    assert_int_equal(bf.to_ns, NOW - 3 * 3600 * JP_NS_PER_SEC);
    assert_int_equal(bf.from_ns, NOW - 5 * 3600 * JP_NS_PER_SEC);
    assert_string_equal(bf.pod, "p1");
    api_args_free(&a);
    /* only base_from; an empty base_pod is every pod */
    assert_null(query("namespace=s&service=x&pod=p1&base_from=-5h&base_pod=", all, &f, &a));
    assert_int_equal(api_query_base(&a, &f, NOW, &bf, &e), JP_OK);
    assert_int_equal(bf.to_ns, NOW - 4 * 3600 * JP_NS_PER_SEC);
    assert_null(bf.pod);
    api_args_free(&a);
    assert_null(query("namespace=s&service=x&base_from=-10m&base_to=-20m", all, &f, &a));
    assert_int_equal(api_query_base(&a, &f, NOW, &bf, &e), JP_ERR_USAGE);
    assert_has(e.msg, "'base_from' (");
    assert_has(e.msg, "must be before 'base_to'");
    api_args_free(&a);
    assert_null(query("namespace=s&service=x&base_from=yesterday", all, &f, &a));
    assert_int_equal(api_query_base(&a, &f, NOW, &bf, &e), JP_ERR_USAGE);
    assert_has(e.msg, "base_from: ");
    api_args_free(&a);
    /* the widest range moved by its own length stays inside int64 */
    assert_null(query("namespace=s&service=x&from=@0&to=2099-12-31T00:00:00Z"
                      "&base_from=2099-12-31T00:00:00Z",
                      all, &f, &a));
    assert_int_equal(api_query_base(&a, &f, NOW, &bf, &e), JP_OK);
    assert_int_equal(bf.to_ns - bf.from_ns, f.to_ns - f.from_ns);
    api_args_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_and_decode),
        cmocka_unit_test(test_percent_encoding_errors),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_names_counts_and_lengths),
        cmocka_unit_test(test_times),
        cmocka_unit_test(test_required_kind_and_choices),
        cmocka_unit_test(test_diff_base),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
