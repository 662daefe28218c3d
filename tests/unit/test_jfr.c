/* Unit tests of the JFR reader end to end: synthetic chunks from
 * jfr_writer (formats 2.0 and 2.1), damaged input, and the real
 * async-profiler fixtures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/failinj.h"
#include "base/strbuf.h"
#include "jfr/jfr.h"
#include "jfr_writer.h"
#include "jfr_test_util.h"

#define MS 1000000ULL

static void assert_collapsed(const jp_profile *p, jp_kind k, const char *want)
{
    char *got = ut_collapsed(p, k);
    if (strcmp(got, want))
        fprintf(stderr, "kind %s:\n--- got\n%s--- want\n%s", jp_kind_name(k), got, want);
    assert_string_equal(got, want);
    free(got);
}

typedef struct result {
    jp_profile *p;
    jfr_report rep;
    jp_err rc;
} result;

static void read_buf(result *r, const uint8_t *data, size_t len, const jfr_options *opt)
{
    r->p = jp_profile_new();
    jfr_report_init(&r->rep);
    r->rc = jfr_read_buffer(data, len, "t.jfr", opt, r->p, &r->rep);
}

static void result_free(result *r)
{
    jp_profile_free(r->p);
}

static bool has_warning(const jfr_report *r, const char *text)
{
    for (uint32_t i = 0; i < r->nwarnings; i++)
        if (strstr(r->warnings[i], text))
            return true;
    return false;
}

#define APP "com.example.App."
static const char *const std_cpu6 = APP "main 2 40000000\n" APP "main;" APP "work 2 40000000\n" APP
                                        "main;" APP "work;com.example.Util.leaf 2 40000000\n";

static void check_std(const result *r, int minor)
{
    assert_int_equal(r->rc, JP_OK);
    assert_false(r->rep.partial);
    assert_int_equal(r->rep.chunks_read, 1);
    assert_int_equal(r->rep.chunks_total, 1);
    assert_int_equal(r->rep.major, 2);
    assert_int_equal(r->rep.minor, minor);
    assert_int_equal(r->rep.events_read, 14);
    assert_int_equal(r->rep.events_used, 12);
    assert_collapsed(r->p, JP_KIND_CPU, std_cpu6);
    assert_true(r->p->kinds[JP_KIND_CPU].period_ns == 20 * (int64_t)MS);
    assert_int_equal(r->p->kinds[JP_KIND_CPU].truncated, 2);
    assert_collapsed(r->p, JP_KIND_ALLOC,
                     APP "main;" APP "work 1 70000\n" APP "main;" APP
                         "work;com.example.Util.leaf 2 4608\n");
    assert_collapsed(r->p, JP_KIND_LOCK, APP "main;" APP "work 1 5000000\n");
    assert_collapsed(r->p, JP_KIND_PARK, APP "main;" APP "work;com.example.Util.leaf 1 7000000\n");
    /* No wall interval in a JDK-style chunk: 50 ms assumed, and said so. */
    assert_collapsed(r->p, JP_KIND_WALL, APP "main 3 150000000\n");
    assert_true(has_warning(&r->rep, "period assumed"));
    assert_true(r->p->start_ns == 1000000000000000000LL);
    assert_true(r->p->end_ns == 1000000001000000000LL);
    assert_true(r->rep.start_ns == r->p->start_ns && r->rep.end_ns == r->p->end_ns);
}

static void test_std_chunk_every_format(void **state)
{
    (void)state;
    static const struct {
        int minor, flavour;
    } cases[] = {{0, JW_JDK11}, {1, JW_JDK17}, {1, JW_FUTURE}};
    for (size_t i = 0; i < 3; i++) {
        jw_buf b;
        jw_init(&b);
        jw_std_chunk(&b, cases[i].minor, cases[i].flavour, 1000000000000000000LL, 6);
        result r;
        read_buf(&r, b.data, b.len, NULL);
        check_std(&r, cases[i].minor);
        /* Frame kinds come from the stack frames. */
        const jp_profile *p = r.p;
        for (size_t f = 0; f < p->nframes; f++) {
            size_t len;
            const char *n = jp_profile_frame_name(p, (uint32_t)f, &len);
            if (len == strlen(APP "work") && !memcmp(n, APP "work", len))
                assert_int_equal(p->frames[f].kinds,
                                 (1 << JP_FRAME_INTERPRETED) | (1 << JP_FRAME_INLINED));
            if (len == strlen("com.example.Util.leaf") && !memcmp(n, "com.example.Util.leaf", len))
                assert_int_equal(p->frames[f].kinds, 1 << JP_FRAME_JIT);
        }
        result_free(&r);
        jw_free(&b);
    }
}

static void test_threads_and_kind_mask(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 1, JW_JDK17, 1000000000000000000LL, 6);
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    opt.kinds = 1u << JP_KIND_CPU | 1u << JP_KIND_LOCK;
    result r;
    read_buf(&r, b.data, b.len, &opt);
    assert_int_equal(r.rc, JP_OK);
    /* javaName when set, else osName ("worker-os" has an empty javaName). */
    assert_collapsed(r.p, JP_KIND_CPU,
                     "main;" APP "main 1 20000000\n"
                     "main;" APP "main;" APP "work 1 20000000\n"
                     "main;" APP "main;" APP "work;com.example.Util.leaf 1 20000000\n"
                     "worker-os;" APP "main 1 20000000\n"
                     "worker-os;" APP "main;" APP "work 1 20000000\n"
                     "worker-os;" APP "main;" APP "work;com.example.Util.leaf 1 20000000\n");
    assert_collapsed(r.p, JP_KIND_LOCK, "main;" APP "main;" APP "work 1 5000000\n");
    assert_false(jp_profile_has_kind(r.p, JP_KIND_ALLOC));
    assert_false(jp_profile_has_kind(r.p, JP_KIND_WALL));
    assert_false(jp_profile_has_kind(r.p, JP_KIND_PARK));
    assert_int_equal(r.rep.events_used, 7);
    result_free(&r);
    jw_free(&b);
}

static void test_multi_chunk(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 0, JW_JDK11, 2000000000000000000LL, 3);
    size_t second = jw_std_chunk(&b, 1, JW_FUTURE, 1000000000000000000LL, 6);
    result r;
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_OK);
    assert_int_equal(r.rep.chunks_read, 2);
    assert_int_equal(r.rep.chunks_total, 2);
    assert_int_equal(r.rep.minor, 0); /* the first chunk's version */
    assert_collapsed(r.p, JP_KIND_CPU,
                     APP "main 3 60000000\n" APP "main;" APP "work 3 60000000\n" APP "main;" APP
                         "work;com.example.Util.leaf 3 60000000\n");
    assert_int_equal(r.p->kinds[JP_KIND_LOCK].events, 2);
    assert_true(r.p->start_ns == 1000000000000000000LL);
    assert_true(r.p->end_ns == 2000000001000000000LL);
    result_free(&r);
    /* The second chunk alone is a valid file too. */
    read_buf(&r, b.data + second, b.len - second, NULL);
    assert_int_equal(r.rc, JP_OK);
    assert_collapsed(r.p, JP_KIND_CPU, std_cpu6);
    result_free(&r);
    jw_free(&b);
}

/* Chunk 2 refers to a stack trace and a thread that only chunk 1 defines
 * (JDK 17 does this after a rotation): taken from chunk 1, with a warning. */
static void test_keys_from_previous_chunk(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 1, JW_JDK17, 1000000000000000000LL, 3);
    jw_chunk c;
    jw_chunk_begin(&c, &b, 1, 1000000001000000000LL, 5000, 1000000000);
    jw_std_metadata(&c, JW_JDK17);
    jw_ev_exec(&b, JW_JDK17, 5000, 2, 1);
    size_t cp = jw_checkpoint_begin(&c, 1);
    jw_pool(&b, JW_STRING, 1);
    jw_symbol(&b, 1, JW_UTF8, "unused");
    jw_checkpoint_end(&c, cp);
    jw_chunk_end(&c, 1000);
    /* Decoded in parallel, chunk 2 reads chunk 1's pools by itself. */
    for (int jobs = 1; jobs <= 4; jobs += 3) {
        jfr_options opt;
        jfr_options_init(&opt);
        opt.threads = true;
        opt.kinds = 1u << JP_KIND_CPU;
        opt.jobs = jobs;
        result r;
        read_buf(&r, b.data, b.len, &opt);
        assert_int_equal(r.rc, JP_OK);
        assert_int_equal(r.rep.chunks_read, 2);
        assert_collapsed(r.p, JP_KIND_CPU,
                         "main;" APP "main 1 20000000\n"
                         "main;" APP "main;" APP "work;com.example.Util.leaf 1 20000000\n"
                         "worker-os;" APP "main;" APP "work 1 20000000\n"
                         "worker-os;" APP "main;" APP "work;com.example.Util.leaf 1 20000000\n");
        assert_true(
            has_warning(&r.rep, "chunk 2: stack trace key 1 taken from the previous chunk"));
        result_free(&r);
    }
    jw_free(&b);
}

static void test_time_filter(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 1, JW_JDK17, 1000000000000000000LL, 6);
    jfr_options opt;
    jfr_options_init(&opt);
    /* Samples sit at +0, +1, ... +5 ms: keep [+2 ms, +4 ms). */
    opt.has_from = opt.has_to = true;
    opt.from = (jp_timespec_arg){.relative = true, .value = 2 * (int64_t)MS};
    opt.to = (jp_timespec_arg){.relative = true, .value = 4 * (int64_t)MS};
    result r;
    read_buf(&r, b.data, b.len, &opt);
    assert_int_equal(r.rc, JP_OK);
    assert_int_equal(r.p->kinds[JP_KIND_CPU].events, 2);
    assert_collapsed(r.p, JP_KIND_CPU,
                     APP "main 1 20000000\n" APP "main;" APP
                         "work;com.example.Util.leaf 1 20000000\n");
    /* 4 other samples, and the 6 events of other kinds at +0 ms. */
    assert_int_equal(r.rep.events_filtered, 10);
    assert_int_equal(r.rep.events_used, 2);
    result_free(&r);
    /* Absolute times, counted back from the end of the recording. */
    opt.has_from = true;
    opt.has_to = false;
    opt.from = (jp_timespec_arg){.relative = true, .from_end = true, .value = 996 * (int64_t)MS};
    read_buf(&r, b.data, b.len, &opt);
    assert_int_equal(r.p->kinds[JP_KIND_CPU].events, 2);
    result_free(&r);
    jw_free(&b);
}

static void test_truncated_anywhere(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 1, JW_JDK17, 1000000000000000000LL, 6);
    size_t first = b.len;
    jw_std_chunk(&b, 0, JW_JDK11, 1000000002000000000LL, 3);
    for (size_t n = 1; n < b.len; n += 5) {
        result r;
        read_buf(&r, b.data, n, NULL);
        if (n == first) {
            assert_int_equal(r.rc, JP_OK);
            result_free(&r);
            continue;
        }
        assert_int_equal(r.rc, JP_ERR_TRUNCATED);
        assert_true(r.rep.partial);
        assert_int_equal(r.rep.error.code, JP_ERR_TRUNCATED);
        if (n < first) {
            assert_non_null(strstr(r.rep.error.msg, "t.jfr: chunk 1 @0x"));
            assert_false(jp_profile_has_kind(r.p, JP_KIND_CPU));
        } else {
            /* The first chunk stays in the profile. */
            assert_non_null(strstr(r.rep.error.msg, "t.jfr: chunk 2 @0x"));
            assert_int_equal(r.rep.chunks_read, 1);
            assert_collapsed(r.p, JP_KIND_CPU, std_cpu6);
        }
        result_free(&r);
    }
    jw_free(&b);
}

static void test_bad_magic_and_tiny_inputs(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 1, JW_JDK17, 1, 1);
    b.data[2] = 'X';
    result r;
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_ERR_FORMAT);
    assert_true(r.rep.partial);
    assert_non_null(strstr(r.rep.error.msg, "t.jfr: chunk 1 @0x0: not a JFR chunk"));
    result_free(&r);
    b.data[2] = 'R';
    b.data[7] = 3; /* format 2.3 still reads */
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_OK);
    result_free(&r);
    b.data[5] = 9; /* version 9.x does not */
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_ERR_UNSUPPORTED);
    assert_non_null(strstr(r.rep.error.msg, "@0x4: format version"));
    result_free(&r);
    read_buf(&r, (const uint8_t *)"", 0, NULL);
    assert_int_equal(r.rc, JP_ERR_TRUNCATED);
    assert_non_null(strstr(r.rep.error.msg, "empty input"));
    result_free(&r);
    read_buf(&r, (const uint8_t *)"FLR\0\0\2\0\1", 8, NULL);
    assert_int_equal(r.rc, JP_ERR_TRUNCATED);
    assert_non_null(strstr(r.rep.error.msg, "header cut off"));
    result_free(&r);
    jw_free(&b);
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void test_unfinished_and_impossible_headers(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 1, JW_JDK17, 1, 2);
    uint8_t *h = b.data;
    uint8_t saved[68];
    memcpy(saved, h, 68);
    static const struct {
        size_t at;
        uint64_t v;
        jp_err code;
        const char *msg;
    } cases[] = {
        {16, 0, JP_ERR_TRUNCATED, "never finished"},
        {24, 0, JP_ERR_TRUNCATED, "never finished"},
        {8, 12, JP_ERR_FORMAT, "impossible chunk size 12"},
        {8, UINT64_MAX, JP_ERR_TRUNCATED, "runs past the end"},
        {16, 1ULL << 40, JP_ERR_FORMAT, "checkpoint offset"},
        {24, 3, JP_ERR_FORMAT, "metadata offset 3 outside"},
        {56, 0, JP_ERR_FORMAT, "ticks per second"},
        {24, 70, JP_ERR_FORMAT, "metadata"}, /* not the metadata event */
        {16, 70, JP_ERR_FORMAT, "checkpoint"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(h, saved, 68);
        put64(h + cases[i].at, cases[i].v);
        result r;
        read_buf(&r, b.data, b.len, NULL);
        assert_int_equal(r.rc, cases[i].code);
        if (!strstr(r.rep.error.msg, cases[i].msg))
            fprintf(stderr, "case %zu: %s\n", i, r.rep.error.msg);
        assert_non_null(strstr(r.rep.error.msg, cases[i].msg));
        assert_non_null(strstr(r.rep.error.msg, "t.jfr: chunk 1 @0x"));
        result_free(&r);
    }
    jw_free(&b);
}

/* A chunk with two checkpoints: the standard pools, then a small one. */
static void two_checkpoints(jw_buf *b, jw_chunk *c, size_t *first_delta, size_t *first_cp)
{
    jw_chunk_begin(c, b, 1, 1, 1000, 1000000000);
    jw_std_metadata(c, JW_JDK17);
    jw_ev_exec(b, JW_JDK17, 1000, 1, 1);
    jw_std_pools(c, JW_JDK17);
    *first_delta = c->delta_at;
    *first_cp = c->start + c->cp_off;
    jw_ev_exec(b, JW_JDK17, 1000, 1, 2);
    size_t cp = jw_checkpoint_begin(c, 1);
    jw_pool(b, JW_STRING, 1);
    jw_symbol(b, 99, JW_UTF8, "late");
    jw_checkpoint_end(c, cp);
    jw_chunk_end(c, 1000);
}

static void patch_delta(jw_buf *b, size_t at, int64_t delta)
{
    jw_buf d;
    jw_init(&d);
    jw_varint_pad(&d, (uint64_t)delta, 9);
    memcpy(b->data + at, d.data, 9);
    jw_free(&d);
}

static void test_checkpoint_chain(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_chunk c;
    size_t delta_at, first_cp;
    two_checkpoints(&b, &c, &delta_at, &first_cp);
    result r;
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_OK);
    assert_collapsed(r.p, JP_KIND_CPU,
                     APP "main;" APP "work 1 10000000\n" APP "main;" APP
                         "work;com.example.Util.leaf 1 10000000\n");
    result_free(&r);
    /* The first checkpoint points forward to the second: a cycle. */
    size_t last_cp = c.start + c.cp_off;
    patch_delta(&b, delta_at, (int64_t)(last_cp - first_cp));
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_ERR_FORMAT);
    assert_non_null(strstr(r.rep.error.msg, "loops back"));
    result_free(&r);
    /* ... or out of the chunk. */
    patch_delta(&b, delta_at, -(int64_t)first_cp);
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_ERR_FORMAT);
    assert_non_null(strstr(r.rep.error.msg, "outside the chunk"));
    result_free(&r);
    patch_delta(&b, delta_at, INT64_MAX);
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_ERR_FORMAT);
    result_free(&r);
    jw_free(&b);
}

/* A chunk whose checkpoint is written by `pools` (after the std metadata
 * and one ExecutionSample on stack 1). */
static void custom_chunk(jw_buf *b, void (*pools)(jw_chunk *c), void (*events)(jw_buf *b))
{
    jw_chunk c;
    jw_chunk_begin(&c, b, 1, 1, 1000, 1000000000);
    jw_std_metadata(&c, JW_FUTURE);
    jw_ev_exec(b, JW_FUTURE, 1000, 1, 1);
    if (events)
        events(b);
    pools(&c);
    jw_chunk_end(&c, 1000);
}

static void jw_std_pools_future(jw_chunk *c)
{
    jw_std_pools(c, JW_FUTURE);
}

static void pools_huge_count(jw_chunk *c)
{
    size_t cp = jw_checkpoint_begin(c, 1);
    jw_pool(c->b, JW_SYMBOL, 4294967295ULL);
    jw_symbol(c->b, 1, JW_UTF8, "x");
    jw_checkpoint_end(c, cp);
}

static void pools_huge_frames(jw_chunk *c)
{
    size_t cp = jw_checkpoint_begin(c, 1);
    jw_pool(c->b, JW_STACKTRACE, 1);
    jw_varint(c->b, 1);
    jw_u8(c->b, 0);
    jw_varint(c->b, 1ULL << 40);
    jw_checkpoint_end(c, cp);
}

static void pools_huge_npools(jw_chunk *c)
{
    jw_checkpoint_end(c, jw_checkpoint_begin(c, 1ULL << 60));
}

static void pools_undefined_type(jw_chunk *c)
{
    size_t cp = jw_checkpoint_begin(c, 1);
    jw_pool(c->b, 4242, 1);
    jw_checkpoint_end(c, cp);
}

static void events_huge_array(jw_buf *b)
{
    size_t ev = jw_event_begin(b, JW_EXEC);
    jw_varint(b, 1000);
    jw_bytes(b, "\x01\x01\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 20); /* extraSpace */
    jw_varint(b, 1ULL << 50);                                          /* extraLongs count */
    jw_event_end(b, ev);
}

static void events_oversized(jw_buf *b)
{
    jw_varint(b, 1ULL << 30);
    jw_varint(b, JW_EXEC);
}

static void events_zero_size(jw_buf *b)
{
    jw_u8(b, 0);
}

static void test_bogus_counts_and_sizes(void **state)
{
    (void)state;
    static const struct {
        void (*pools)(jw_chunk *c);
        void (*events)(jw_buf *b);
        jp_err code;
        const char *msg;
    } cases[] = {
        {pools_huge_count, NULL, JP_ERR_LIMIT, "constant pool count 4294967295 exceeds limit"},
        {pools_huge_frames, NULL, JP_ERR_LIMIT, "array count 1099511627776 exceeds limit"},
        {pools_huge_npools, NULL, JP_ERR_LIMIT, "pool count"},
        {pools_undefined_type, NULL, JP_ERR_FORMAT, "undefined type id 4242"},
        {jw_std_pools_future, events_huge_array, JP_ERR_FORMAT, "malformed jdk.ExecutionSample"},
        {jw_std_pools_future, events_oversized, JP_ERR_FORMAT, "event size"},
        {jw_std_pools_future, events_zero_size, JP_ERR_FORMAT, "event size 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        jw_buf b;
        jw_init(&b);
        custom_chunk(&b, cases[i].pools, cases[i].events);
        result r;
        read_buf(&r, b.data, b.len, NULL);
        if (r.rc != cases[i].code || !strstr(r.rep.error.msg, cases[i].msg))
            fprintf(stderr, "case %zu: %d %s\n", i, r.rc, r.rep.error.msg);
        assert_int_equal(r.rc, cases[i].code);
        assert_non_null(strstr(r.rep.error.msg, cases[i].msg));
        assert_non_null(strstr(r.rep.error.msg, "t.jfr: chunk 1 @0x"));
        assert_true(r.rep.partial);
        result_free(&r);
        jw_free(&b);
    }
}

/* Pools with holes: stack 4 has a frame whose method is missing, thread 3
 * is missing, stack 5 is absent. */
static void pools_with_holes(jw_chunk *c)
{
    jw_std_pools(c, JW_FUTURE);
    size_t cp = jw_checkpoint_begin(c, 1);
    jw_pool(c->b, JW_STACKTRACE, 1);
    const uint64_t m[] = {77, 1}, t[] = {2, 1};
    jw_stack(c->b, JW_FUTURE, 4, false, 2, m, t);
    jw_checkpoint_end(c, cp);
}

static void events_with_holes(jw_buf *b)
{
    jw_ev_exec(b, JW_FUTURE, 1000, 1, 4);
    jw_ev_exec(b, JW_FUTURE, 1000, 3, 5);
    jw_ev_exec(b, JW_FUTURE, 1000, 0, 0);
}

static void test_broken_references_are_warnings(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    custom_chunk(&b, pools_with_holes, events_with_holes);
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    result r;
    read_buf(&r, b.data, b.len, &opt);
    assert_int_equal(r.rc, JP_OK);
    assert_false(r.rep.partial);
    assert_collapsed(r.p, JP_KIND_CPU,
                     "[unknown thread];[no stack] 1 10000000\n"
                     "[unknown thread];[unknown] 1 10000000\n"
                     "main;" APP "main;[unknown] 1 10000000\n"
                     "main;" APP "main;" APP "work;com.example.Util.leaf 1 10000000\n");
    assert_true(has_warning(&r.rep, "stack trace key 5 missing"));
    assert_true(has_warning(&r.rep, "method key 77 missing"));
    assert_true(has_warning(&r.rep, "thread key 3 missing"));
    assert_true(has_warning(&r.rep, "t.jfr: chunk 1: "));
    result_free(&r);
    jw_free(&b);
}

/* async-profiler writes "event" and "interval" (ns, 0 = its default). */
static void ap_chunk(jw_buf *b, const char *event, const char *interval, bool wall_event)
{
    jw_chunk c;
    jw_chunk_begin(&c, b, 0, 1, 1000, 1000000000);
    jw_std_metadata(&c, JW_JDK17);
    jw_ev_setting(b, 1000, 107, "event", event);
    jw_ev_exec(b, JW_JDK17, 1000, 1, 1);
    jw_ev_setting(b, 1000, JW_EXEC, "interval", interval);
    if (wall_event)
        jw_ev_wall(b, 1000, 1, 2, 2);
    jw_std_pools(&c, JW_JDK17);
    jw_chunk_end(&c, 1000);
}

static void test_async_profiler_periods(void **state)
{
    (void)state;
    static const struct {
        const char *event, *interval;
        bool wall_event;
        jp_kind exec_kind;
        int64_t period;
        bool assumed;
    } cases[] = {
        {"cpu", "5000000", false, JP_KIND_CPU, 5000000, false},
        {"cpu", "0", false, JP_KIND_CPU, 10000000, true},
        {"itimer", "2000000", false, JP_KIND_CPU, 2000000, false},
        {"wall", "20000000", true, JP_KIND_WALL, 20000000, false},
        {"wall", "0", false, JP_KIND_WALL, 50000000, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        jw_buf b;
        jw_init(&b);
        ap_chunk(&b, cases[i].event, cases[i].interval, cases[i].wall_event);
        result r;
        read_buf(&r, b.data, b.len, NULL);
        assert_int_equal(r.rc, JP_OK);
        jp_kind k = cases[i].exec_kind;
        const jp_kind_table *t = &r.p->kinds[k];
        assert_true(t->period_ns == cases[i].period);
        assert_int_equal(has_warning(&r.rep, "period assumed"), cases[i].assumed);
        uint64_t samples = 1 + (cases[i].wall_event ? 2 : 0);
        assert_int_equal(t->samples, samples);
        assert_true(t->value == samples * (uint64_t)cases[i].period);
        if (k == JP_KIND_WALL)
            assert_false(jp_profile_has_kind(r.p, JP_KIND_CPU));
        result_free(&r);
        jw_free(&b);
    }
    /* A later chunk without settings keeps the earlier ones. */
    jw_buf b;
    jw_init(&b);
    ap_chunk(&b, "wall", "30000000", false);
    jw_std_chunk(&b, 0, JW_JDK11, 2, 0);
    jw_chunk c;
    jw_chunk_begin(&c, &b, 0, 3, 1000, 1000000000);
    jw_std_metadata(&c, JW_JDK17);
    jw_ev_exec(&b, JW_JDK17, 1000, 1, 1);
    jw_std_pools(&c, JW_JDK17);
    jw_chunk_end(&c, 1000);
    result r;
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_OK);
    assert_int_equal(r.rep.chunks_read, 3);
    /* Chunk 2's JDK "period" replaced the async-profiler settings. */
    assert_int_equal(r.p->kinds[JP_KIND_WALL].samples, 1 + 3);
    assert_int_equal(r.p->kinds[JP_KIND_CPU].samples, 1);
    assert_true(r.p->kinds[JP_KIND_CPU].value == 20 * MS);
    result_free(&r);
    jw_free(&b);
}

static void test_large_type_ids_and_recursive_types(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_chunk c;
    jw_chunk_begin(&c, &b, 1, 1, 1000, 1000000000);
    jw_class classes[48];
    size_t n = jw_std_classes(JW_JDK17, classes);
    for (size_t i = 0; i < n; i++)
        if (classes[i].id == JW_EXEC)
            classes[i].id = 1000000;
    /* A struct that contains itself inline can never end. */
    classes[n++] = (jw_class){
        900, "test.Loop", NULL, 2, {{"x", JW_INT, false, false}, {"self", 900, false, false}}};
    jw_metadata(&c, classes, n);
    for (int i = 0; i < 3; i++) {
        size_t ev = jw_event_begin(&b, 1000000);
        jw_bytes(&b, "\x01\x01\x02\x01", 4);
        jw_event_end(&b, ev);
    }
    jw_std_pools(&c, JW_JDK17);
    jw_chunk_end(&c, 1000);
    result r;
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_OK);
    assert_int_equal(r.p->kinds[JP_KIND_CPU].events, 3);
    assert_collapsed(r.p, JP_KIND_CPU, APP "main;" APP "work 3 30000000\n");
    result_free(&r);
    /* Now a pool of the looping type. */
    b.len -= 0; /* rebuild with the extra pool */
    jw_free(&b);
    jw_init(&b);
    jw_chunk_begin(&c, &b, 1, 1, 1000, 1000000000);
    jw_metadata(&c, classes, n);
    size_t cp = jw_checkpoint_begin(&c, 1);
    jw_pool(&b, 900, 1);
    for (int i = 0; i < 200; i++)
        jw_varint(&b, 1);
    jw_checkpoint_end(&c, cp);
    jw_chunk_end(&c, 1000);
    read_buf(&r, b.data, b.len, NULL);
    assert_int_equal(r.rc, JP_ERR_LIMIT);
    assert_non_null(strstr(r.rep.error.msg, "nested deeper"));
    result_free(&r);
    jw_free(&b);
}

/* ---- the lead type's path (src/jfr/events.c) against the plans ---- */

/* An event with a one-byte size and type, as the JDK and async-profiler
 * write short events (jw_event_begin pads sizes to five bytes, which the
 * lead path leaves to the plans). */
static void put_short_event(jw_buf *b, uint64_t type, const jw_buf *fields)
{
    assert_true(type < 128 && 2 + fields->len < 128);
    jw_u8(b, (uint8_t)(2 + fields->len));
    jw_u8(b, (uint8_t)type);
    jw_bytes(b, fields->data, fields->len);
}

/* v in its shortest form, or now and then padded to any longer one, up to
 * nine bytes (the readers must take every form). */
static void put_any_int(jw_buf *b, uint64_t v, unsigned *seed)
{
    int n = 1;
    for (uint64_t x = v >> 7; x && n < 9; x >>= 7)
        n++;
    if (rand_r(seed) % 5 == 0)
        n += rand_r(seed) % (10 - n);
    jw_varint_pad(b, v, n);
}

typedef struct lead_mix {
    int exec_pct; /* share of execution samples, the rest are allocations;
                     -1: 95 % in the first half, 5 % in the second */
    size_t n;
    uint64_t alloc_events, alloc_bytes, exec_events;
} lead_mix;

/* A chunk of mostly one event type (pools first, so that the events run up
 * to the end of the buffer and the path's reads past an event meet it),
 * every integer in any of its forms; the totals it holds into m. With
 * `cut`, one allocation event in the middle ends before its last field. */
static void lead_chunk(jw_buf *b, lead_mix *m, unsigned seed, bool cut)
{
    jw_chunk c;
    jw_chunk_begin(&c, b, 1, 1000000000000000000LL, 1000, 1000000000);
    jw_std_metadata(&c, JW_JDK17);
    jw_std_pools(&c, JW_JDK17);
    jw_buf f;
    jw_init(&f);
    for (size_t i = 0; i < m->n; i++) {
        f.len = 0;
        unsigned r = (unsigned)rand_r(&seed) % 100;
        int exec_pct = m->exec_pct >= 0 ? m->exec_pct : i < m->n / 2 ? 95 : 5;
        uint64_t stack = 1 + (unsigned)rand_r(&seed) % 3;
        put_any_int(&f, 1000 + i * 977, &seed); /* startTime */
        put_any_int(&f, 1 + (unsigned)rand_r(&seed) % 2, &seed);
        put_any_int(&f, stack, &seed);
        if (r < (unsigned)exec_pct && !(cut && i == m->n / 2)) {
            put_any_int(&f, 1, &seed); /* state */
            put_short_event(b, JW_EXEC, &f);
            m->exec_events++;
            continue;
        }
        put_any_int(&f, 2, &seed); /* objectClass */
        /* up to five bytes minimal: the short and the long gathers */
        uint64_t size = (uint64_t)rand_r(&seed) >> (rand_r(&seed) % 31);
        uint64_t tlab = (uint64_t)rand_r(&seed) << (rand_r(&seed) % 9);
        put_any_int(&f, size, &seed);
        if (cut && i == m->n / 2) {
            put_short_event(b, JW_TLAB_IN, &f); /* tlabSize missing */
            continue;
        }
        if (r % 10 == 0) {
            put_short_event(b, JW_TLAB_OUT, &f);
            m->alloc_bytes += size;
        } else if (r % 10 == 1) {
            f.len = 0; /* jdk.ObjectAllocationSample: weight after the class */
            put_any_int(&f, 1000 + i * 977, &seed);
            put_any_int(&f, 2, &seed);
            put_any_int(&f, stack, &seed);
            put_any_int(&f, 2, &seed);
            put_any_int(&f, tlab, &seed);
            put_short_event(b, JW_ALLOC_SAMPLE, &f);
            m->alloc_bytes += tlab;
        } else {
            put_any_int(&f, tlab, &seed);
            put_short_event(b, JW_TLAB_IN, &f);
            m->alloc_bytes += tlab;
        }
        m->alloc_events++;
    }
    jw_free(&f);
    jw_chunk_end(&c, 1000000000);
}

static void test_lead_path_every_integer_form(void **state)
{
    (void)state;
    /* one type leads, the other does, both in turns, then a change of lead */
    static const int mixes[] = {3, 90, 50, -1};
    for (size_t k = 0; k < sizeof mixes / sizeof mixes[0]; k++) {
        for (unsigned seed = 1; seed <= 4; seed++) {
            lead_mix m = {.exec_pct = mixes[k], .n = 3000};
            jw_buf b;
            jw_init(&b);
            lead_chunk(&b, &m, seed * 7919 + (unsigned)k, false);
            jfr_options opt;
            jfr_options_init(&opt);
            result lead, plans;
            read_buf(&lead, b.data, b.len, &opt);
            opt.plans_only = true;
            read_buf(&plans, b.data, b.len, &opt);
            assert_int_equal(lead.rc, JP_OK);
            assert_int_equal(plans.rc, JP_OK);
            /* what was written, and the same profile both ways */
            const jp_kind_table *a = &lead.p->kinds[JP_KIND_ALLOC];
            assert_int_equal(a->samples, m.alloc_events);
            assert_true(a->value == m.alloc_bytes);
            assert_int_equal(lead.p->kinds[JP_KIND_CPU].samples, m.exec_events);
            assert_int_equal(lead.rep.events_read, plans.rep.events_read);
            for (jp_kind kind = 0; kind < JP_KIND_COUNT; kind++) {
                char *x = ut_collapsed(lead.p, kind), *y = ut_collapsed(plans.p, kind);
                assert_string_equal(x, y);
                free(x);
                free(y);
            }
            result_free(&lead);
            result_free(&plans);
            /* an event ending before its fields is damage, named, both ways */
            b.len = 0;
            m = (lead_mix){.exec_pct = mixes[k], .n = 3000};
            lead_chunk(&b, &m, seed, true);
            opt.plans_only = false;
            read_buf(&lead, b.data, b.len, &opt);
            opt.plans_only = true;
            read_buf(&plans, b.data, b.len, &opt);
            assert_int_equal(lead.rc, JP_ERR_FORMAT);
            assert_non_null(strstr(lead.rep.error.msg, "malformed jdk.ObjectAllocationInNewTLAB"));
            assert_string_equal(lead.rep.error.msg, plans.rep.error.msg);
            assert_true(lead.rep.partial);
            result_free(&lead);
            result_free(&plans);
            jw_free(&b);
        }
    }
}

static void test_read_file(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 1, JW_JDK17, 1000000000000000000LL, 6);
    char path[] = "/tmp/jprof-test-jfr-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
    close(fd);
    jp_profile *p = jp_profile_new();
    jfr_report rep;
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_file(path, NULL, p, &rep), JP_OK);
    assert_collapsed(p, JP_KIND_CPU, std_cpu6);
    assert_true(rep.bytes == b.len);
    /* Reading adds to a profile that already holds data. */
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_file(path, NULL, p, &rep), JP_OK);
    assert_int_equal(p->kinds[JP_KIND_CPU].samples, 12);
    jp_profile_free(p);
    unlink(path);
    p = jp_profile_new();
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_file(path, NULL, p, &rep), JP_ERR_IO);
    assert_non_null(strstr(rep.error.msg, path));
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_file("/tmp", NULL, p, &rep), JP_ERR_IO);
    jp_profile_free(p);
    jw_free(&b);
}

/* ---- the async-profiler fixtures (see their README) ---- */

static void test_fixtures(void **state)
{
    (void)state;
    char path[1024];
    /* The recordings ship with the project: missing is a failure. */
    if (access(ut_fixture("asprof-two-chunks.jfr", path, sizeof path), R_OK) != 0)
        fail_msg("fixture %s not readable", path);
    /* Event counts from `jfr summary` (tests/fixtures/jfr/README.md). */
    static const struct {
        const char *file;
        uint64_t cpu, alloc, lock, wall, park;
        uint32_t chunks;
    } cases[] = {
        {"asprof-cpu-alloc-lock.jfr", 991, 3004, 913, 0, 1008, 1},
        {"asprof-wall.jfr", 0, 0, 0, 2860, 0, 1},
        {"asprof-two-chunks.jfr", 991, 3004, 913, 2860, 1008, 2},
    };
    for (size_t i = 0; i < 3; i++) {
        jp_profile *p = jp_profile_new();
        jfr_report rep;
        jfr_report_init(&rep);
        jfr_options opt;
        jfr_options_init(&opt);
        opt.threads = true;
        assert_int_equal(jfr_read_file(ut_fixture(cases[i].file, path, sizeof path), &opt, p, &rep),
                         JP_OK);
        assert_int_equal(rep.chunks_read, cases[i].chunks);
        assert_int_equal(rep.major, 2);
        assert_int_equal(rep.minor, 0);
        assert_int_equal(p->kinds[JP_KIND_CPU].events, cases[i].cpu);
        assert_int_equal(p->kinds[JP_KIND_ALLOC].events, cases[i].alloc);
        assert_int_equal(p->kinds[JP_KIND_LOCK].events, cases[i].lock);
        assert_int_equal(p->kinds[JP_KIND_WALL].events, cases[i].wall);
        assert_int_equal(p->kinds[JP_KIND_PARK].events, cases[i].park);
        if (cases[i].cpu)
            assert_true(p->kinds[JP_KIND_CPU].period_ns == 10 * (int64_t)MS);
        if (cases[i].wall) {
            assert_true(p->kinds[JP_KIND_WALL].period_ns == 20 * (int64_t)MS);
            /* WallClockSample batches several samples into one event. */
            assert_true(p->kinds[JP_KIND_WALL].samples > cases[i].wall);
            assert_true(p->kinds[JP_KIND_WALL].value == p->kinds[JP_KIND_WALL].samples * 20 * MS);
        }
        /* No broken references in a healthy file. */
        for (uint32_t w = 0; w < rep.nwarnings; w++)
            assert_null(strstr(rep.warnings[w], "missing"));
        jp_profile_free(p);
    }
}

/* One torture case in a child: the nth allocation or file read fails.
 * Exit 10: nothing fired (n is past the last one), 20: a clean error. An
 * allocation that fails aborts by design (base/xalloc.h) after saying so. */
static void torture_child(long n, const char *path)
{
    jp_fail_set(n, NULL);
    jp_profile *p = jp_profile_new();
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    jfr_report rep;
    jfr_report_init(&rep);
    jp_err rc = jfr_read_file(path, &opt, p, &rep);
    bool fired = jp_fail_fired();
    jp_profile_free(p);
    if (!fired)
        _exit(10);
    _exit(rc != JP_OK && rep.error.msg[0] ? 20 : 21);
}

/* Torture (curl style) of the JFR reader: for N = 1, 2, ... the Nth
 * allocation or read fails, each in a child process, until none fires or
 * the time budget (5 s) runs out. Every case must end in a clear error or
 * the documented out-of-memory abort, never another signal. */
static void test_torture_reader(void **state)
{
    (void)state;
    char path[1024];
    ut_fixture("asprof-itimer.jfr", path, sizeof path);
    if (access(path, R_OK) != 0)
        fail_msg("fixture missing: %s", path);
    char errpath[] = "/tmp/jprof-torture.XXXXXX";
    int efd = mkstemp(errpath);
    assert_true(efd >= 0);
    unlink(errpath);
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long n, clean = 0, oom = 0;
    bool done = false;
    for (n = 1; !done; n += n < 400 ? 1 : 13) {
        assert_int_equal(ftruncate(efd, 0), 0);
        lseek(efd, 0, SEEK_SET);
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            dup2(efd, 2);
            torture_child(n, path);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 10) {
            done = true;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == 20) {
            clean++;
        } else if (WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) {
            char buf[256] = "";
            ssize_t k = pread(efd, buf, sizeof buf - 1, 0);
            buf[k > 0 ? k : 0] = '\0';
            if (!strstr(buf, "out of memory"))
                fail_msg("N=%ld: abort without the out-of-memory message: %s", n, buf);
            oom++;
        } else {
            fail_msg("N=%ld: the reader ended with status 0x%x (a crash, or an error it hid)", n,
                     st);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec >= 5)
            break;
    }
    close(efd);
    print_message("torture: %ld failure points (%s): %ld clean errors, %ld out-of-memory aborts\n",
                  clean + oom, done ? "every one" : "time budget reached", clean, oom);
    assert_true(clean >= 1 && oom >= 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_std_chunk_every_format),
        cmocka_unit_test(test_torture_reader),
        cmocka_unit_test(test_threads_and_kind_mask),
        cmocka_unit_test(test_multi_chunk),
        cmocka_unit_test(test_keys_from_previous_chunk),
        cmocka_unit_test(test_time_filter),
        cmocka_unit_test(test_truncated_anywhere),
        cmocka_unit_test(test_bad_magic_and_tiny_inputs),
        cmocka_unit_test(test_unfinished_and_impossible_headers),
        cmocka_unit_test(test_checkpoint_chain),
        cmocka_unit_test(test_bogus_counts_and_sizes),
        cmocka_unit_test(test_broken_references_are_warnings),
        cmocka_unit_test(test_async_profiler_periods),
        cmocka_unit_test(test_large_type_ids_and_recursive_types),
        cmocka_unit_test(test_lead_path_every_integer_form),
        cmocka_unit_test(test_read_file),
        cmocka_unit_test(test_fixtures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
