/* libFuzzer target: jprof-server's query-string parser (src/server/api_query.h).
 * The input is a raw query string, what follows '?' in a request line. It
 * is split and decoded as http.c does, then every typed parameter is read
 * as the handlers read them, at two clocks (today and the last time a
 * query may name). Properties checked besides the sanitizers:
 *  - a refusal always carries a message;
 *  - what is accepted is bounded (count, lengths) and has no repeated name;
 *  - encoding the decoded pairs again and parsing that gives the same pairs;
 *  - an accepted range has from < to, its ends inside the allowed times. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "server/api_query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "fuzz_api_query: property failed: %s (line %d)\n", #c, __LINE__);      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void encode(jp_strbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || *p == '.' || *p == '~') {
            jp_strbuf_putc(b, (char)*p);
        } else {
            jp_strbuf_putc(b, '%');
            jp_strbuf_putc(b, hex[*p >> 4]);
            jp_strbuf_putc(b, hex[*p & 15]);
        }
    }
}

static void round_trip(const api_args *a)
{
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    for (size_t i = 0; i < a->n; i++) {
        if (i)
            jp_strbuf_putc(&b, '&');
        encode(&b, a->v[i].key);
        jp_strbuf_putc(&b, '=');
        encode(&b, a->v[i].val);
    }
    api_args again;
    jp_error e;
    jp_error_init(&e);
    /* the encoded form may be longer than the limit of a raw query string */
    if (b.len <= API_QUERY_MAX_BYTES) {
        CHECK(api_args_parse(b.data ? b.data : "", b.len, &again, &e) == JP_OK);
        CHECK(again.n == a->n);
        for (size_t i = 0; i < a->n; i++)
            CHECK(!strcmp(again.v[i].key, a->v[i].key) && !strcmp(again.v[i].val, a->v[i].val));
        api_args_free(&again);
    }
    jp_strbuf_cleanup(&b);
}

static void typed(const api_args *a, int64_t now)
{
    static const unsigned needs[] = {0, API_NEED_NS, API_NEED_NS | API_NEED_SERVICE,
                                     API_NEED_NS | API_NEED_SERVICE | API_NEED_KIND};
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
        store_filter f, bf;
        jp_error e;
        jp_error_init(&e);
        if (api_query_parse(a, needs[i], now, &f, &e) != JP_OK) {
            CHECK(e.msg[0]);
            continue;
        }
        CHECK(f.from_ns < f.to_ns && f.to_ns >= 0 && f.to_ns <= API_TIME_MAX_NS);
        CHECK(!(needs[i] & API_NEED_KIND) || f.kind >= 0);
        CHECK(!f.ns || *f.ns);
        if (api_query_base(a, &f, now, &bf, &e) != JP_OK)
            CHECK(e.msg[0]);
        else
            CHECK(bf.from_ns < bf.to_ns);
    }
    long l;
    int c;
    int64_t t = -1;
    jp_error e;
    jp_error_init(&e);
    if (api_arg_limit(a, "limit", 100, 100000, &l, &e) == JP_OK)
        CHECK(l >= 1 && l <= 100000);
    if (api_arg_time(a, "base_to", now, &t, &e) == JP_OK)
        CHECK(t == -1 || (t >= 0 && t <= API_TIME_MAX_NS));
    static const char *const fmts[] = {"json", "pprof", "html", NULL};
    if (api_arg_choice(a, "format", fmts, &c, &e) == JP_OK)
        CHECK(c >= 0 && c < 3);
    (void)api_arg_flag(a, "threads");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    api_args a;
    jp_error e;
    jp_error_init(&e);
    if (api_args_parse((const char *)data, size, &a, &e) != JP_OK) {
        CHECK(e.msg[0]);
        api_args_free(&a);
        return 0;
    }
    CHECK(a.n <= API_QUERY_MAX_ARGS);
    for (size_t i = 0; i < a.n; i++) {
        CHECK(a.v[i].key[0] && strlen(a.v[i].key) <= API_QUERY_MAX_KEY);
        CHECK(strlen(a.v[i].val) <= API_QUERY_MAX_VALUE);
        CHECK(api_args_get(&a, a.v[i].key) == a.v[i].val); /* no name twice */
    }
    round_trip(&a);
    typed(&a, 1795000000LL * 1000000000LL); /* 2026-11-18 */
    typed(&a, API_TIME_MAX_NS);
    api_args_free(&a);
    return 0;
}
