/* Unit tests of the JFR reader's building blocks: varints, strings,
 * metadata, frame naming, setting parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jfr/chunk.h"
#include "jfr/frame_name.h"
#include "jfr/input.h"
#include "jfr/meta.h"
#include "jfr_writer.h"

static uint64_t read_one(const uint8_t *p, size_t n, bool *ok, size_t *used)
{
    const uint8_t *q = p;
    uint64_t v = 0;
    *ok = jfr_varint(&q, p + n, &v);
    *used = (size_t)(q - p);
    const uint8_t *r = p;
    bool ok2 = jfr_varint_skip(&r, p + n);
    assert_int_equal(ok2, *ok);
    assert_ptr_equal(r, q);
    return v;
}

static void test_varint_minimal_and_padded(void **state)
{
    (void)state;
    static const uint64_t values[] = {0,
                                      1,
                                      127,
                                      128,
                                      300,
                                      16383,
                                      16384,
                                      0xffffffffULL,
                                      1ULL << 49,
                                      1ULL << 56,
                                      UINT64_MAX - 1,
                                      UINT64_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        jw_buf b;
        jw_init(&b);
        jw_varint(&b, values[i]);
        bool ok;
        size_t used;
        assert_true(read_one(b.data, b.len, &ok, &used) == values[i]);
        assert_true(ok);
        assert_int_equal(used, b.len);
        /* Every padded length that can hold the value decodes the same. */
        for (int n = 1; n <= 9; n++) {
            if (n < 9 && n * 7 < 64 && (values[i] >> (n * 7)))
                continue;
            jw_buf p;
            jw_init(&p);
            jw_varint_pad(&p, values[i], n);
            assert_int_equal(p.len, (size_t)n);
            assert_true(read_one(p.data, p.len, &ok, &used) == values[i]);
            assert_true(ok);
            assert_int_equal(used, (size_t)n);
            jw_free(&p);
        }
        jw_free(&b);
    }
}

static void test_varint_ninth_byte_and_overrun(void **state)
{
    (void)state;
    /* Eight continuation bytes, then a 9th byte whose top bit is data. */
    const uint8_t max[9] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    bool ok;
    size_t used;
    assert_true(read_one(max, 9, &ok, &used) == UINT64_MAX);
    assert_true(ok);
    assert_int_equal(used, 9);
    const uint8_t top[9] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};
    assert_true(read_one(top, 9, &ok, &used) == 1ULL << 63);
    /* A continuation bit on the last readable byte is an overrun. */
    for (size_t n = 0; n < 9; n++) {
        read_one(max, n, &ok, &used);
        assert_false(ok);
    }
    const uint8_t one[1] = {0x80};
    read_one(one, 1, &ok, &used);
    assert_false(ok);
    read_one(one, 0, &ok, &used);
    assert_false(ok);
}

/* jfr_varints_skip_n against a loop of jfr_varint_skip, on bytes where runs
 * of continuation bytes of every length (nine-byte integers, integers that
 * straddle words, an overrun at the end) are common. */
static void test_varints_skip_n(void **state)
{
    (void)state;
    uint64_t x = 0x9e3779b97f4a7c15ULL;
    uint8_t buf[64];
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(round % 41);
        int bias = round % 4; /* 0: short integers, 3: mostly continuation bytes */
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            uint8_t b = (uint8_t)(x >> 24);
            buf[i] = (int)(x >> 40 & 3) < bias ? (uint8_t)(b | 0x80) : b;
        }
        for (uint64_t count = 0; count <= len + 1; count++) {
            const uint8_t *want = buf;
            bool ok = true;
            for (uint64_t k = 0; k < count && ok; k++)
                ok = jfr_varint_skip(&want, buf + len);
            const uint8_t *got = buf;
            assert_int_equal(jfr_varints_skip_n(&got, buf + len, count), ok);
            assert_ptr_equal(got, ok ? want : buf);
        }
    }
}

/* Decodes one wire string to text through the reader's own functions. */
static bool decode_str(const jw_buf *b, jfr_str *s, jp_strbuf *out)
{
    const uint8_t *p = b->data;
    if (!jfr_str_read(&p, b->data + b->len, s))
        return false;
    const uint8_t *q = b->data;
    assert_true(jfr_str_skip(&q, b->data + b->len));
    assert_ptr_equal(p, q);
    assert_ptr_equal(p, b->data + b->len);
    jp_strbuf_reset(out);
    jfr_text_append(out, s);
    return true;
}

static void test_string_encodings(void **state)
{
    (void)state;
    jp_strbuf out;
    jp_strbuf_init(&out, 0);
    jfr_str s;
    jw_buf b;
    static const char *const texts[] = {"java/lang/String", "caf\xc3\xa9 \xc3\xbf", "",
                                        "x\xf0\x9f\x98\x80y \xe2\x82\xac"};
    static const int encs[] = {JW_UTF8, JW_CHARS, JW_LATIN1};
    for (size_t t = 0; t < 4; t++) {
        for (size_t e = 0; e < 3; e++) {
            if (encs[e] == JW_LATIN1 && t == 3)
                continue; /* not representable in Latin-1 */
            jw_init(&b);
            jw_str(&b, encs[e], texts[t]);
            assert_true(decode_str(&b, &s, &out));
            assert_int_equal(s.enc, encs[e]);
            assert_int_equal(out.len, strlen(texts[t]));
            assert_memory_equal(out.len ? out.data : "", texts[t], strlen(texts[t]));
            jw_free(&b);
        }
    }
    jw_init(&b);
    jw_str_null(&b);
    assert_true(decode_str(&b, &s, &out));
    assert_int_equal(s.enc, JFR_STR_NULL);
    jw_free(&b);
    jw_init(&b);
    jw_str_empty(&b);
    assert_true(decode_str(&b, &s, &out));
    assert_int_equal(s.enc, JFR_STR_EMPTY);
    assert_int_equal(out.len, 0);
    jw_free(&b);
    jw_init(&b);
    jw_str_pool(&b, 123456789);
    assert_true(decode_str(&b, &s, &out));
    assert_int_equal(s.enc, JFR_STR_POOL);
    assert_true(s.n == 123456789);
    jw_free(&b);
    jp_strbuf_cleanup(&out);
}

static void test_string_lone_surrogates_and_overruns(void **state)
{
    (void)state;
    jp_strbuf out;
    jp_strbuf_init(&out, 0);
    jfr_str s;
    /* 'a', a lone high surrogate followed by 'b', a lone low surrogate. */
    jw_buf b;
    jw_init(&b);
    jw_u8(&b, JW_CHARS);
    jw_varint(&b, 4);
    jw_varint(&b, 'a');
    jw_varint(&b, 0xd800);
    jw_varint(&b, 'b');
    jw_varint(&b, 0xdc00);
    assert_true(decode_str(&b, &s, &out));
    assert_string_equal(out.data, "a\xef\xbf\xbd"
                                  "b\xef\xbf\xbd");
    jw_free(&b);
    /* Every encoding with a payload fails cleanly when cut anywhere. */
    static const int encs[] = {JW_UTF8, JW_CHARS, JW_LATIN1, JW_POOL};
    for (size_t e = 0; e < 4; e++) {
        jw_init(&b);
        if (encs[e] == JW_POOL)
            jw_str_pool(&b, 1ULL << 40);
        else
            jw_str(&b, encs[e], "hello");
        for (size_t n = 0; n < b.len; n++) {
            const uint8_t *p = b.data;
            assert_false(jfr_str_read(&p, b.data + n, &s));
            assert_ptr_equal(p, b.data);
            p = b.data;
            assert_false(jfr_str_skip(&p, b.data + n));
        }
        jw_free(&b);
    }
    /* Unknown tag. */
    const uint8_t bad[2] = {9, 0};
    const uint8_t *p = bad;
    assert_false(jfr_str_read(&p, bad + 2, &s));
    /* A char array whose count exceeds the bytes left. */
    const uint8_t big[4] = {JW_CHARS, 0xff, 0x7f, 'a'};
    p = big;
    assert_false(jfr_str_read(&p, big + 4, &s));
    jp_strbuf_cleanup(&out);
}

static jp_err parse_meta(const jw_buf *b, const jw_chunk *c, jfr_meta *m, jp_error *err)
{
    jfr_where w = {.base = b->data, .name = "t.jfr", .chunk = 1, .err = err};
    jfr_meta_init(m);
    return jfr_meta_parse(m, b->data + c->start + c->meta_off, b->data + b->len, &w);
}

static void test_metadata_parse(void **state)
{
    (void)state;
    static const int encs[] = {JW_UTF8, JW_CHARS, JW_LATIN1};
    for (size_t e = 0; e < 3; e++) {
        jw_buf b;
        jw_init(&b);
        jw_chunk c;
        jw_chunk_begin(&c, &b, 1, 0, 0, 1000000000);
        c.meta_enc = encs[e];
        jw_std_metadata(&c, JW_FUTURE);
        jfr_meta m;
        jp_error err;
        jp_error_init(&err);
        assert_int_equal(parse_meta(&b, &c, &m, &err), JP_OK);
        uint32_t ex = jfr_meta_class(&m, "jdk.ExecutionSample");
        assert_int_not_equal(ex, JFR_NONE);
        assert_true(m.classes[ex].id == JW_EXEC);
        assert_int_equal(m.classes[ex].nfields, 9);
        uint32_t st = jfr_meta_field(&m, ex, "stackTrace");
        assert_int_equal(st, m.classes[ex].field0 + 6);
        assert_true(m.fields[st].cpool);
        assert_false(m.fields[st].array);
        assert_int_equal(m.fields[st].cls, jfr_meta_class(&m, "jdk.types.StackTrace"));
        uint32_t names = jfr_meta_field(&m, ex, "extraNames");
        assert_true(m.fields[names].array);
        assert_int_equal(m.classes[m.fields[names].cls].prim, JFR_P_STRING);
        assert_int_equal(m.classes[jfr_meta_class(&m, "long")].prim, JFR_P_VARINT);
        assert_int_equal(m.classes[jfr_meta_class(&m, "boolean")].prim, JFR_P_BYTE);
        assert_int_equal(m.classes[jfr_meta_class(&m, "float")].prim, JFR_P_F32);
        assert_int_equal(m.classes[jfr_meta_class(&m, "double")].prim, JFR_P_F64);
        assert_int_equal(m.classes[jfr_meta_class(&m, "jdk.types.VirtualSpace")].prim,
                         JFR_P_STRUCT);
        assert_int_equal(jfr_meta_class_by_id(&m, JW_SYMBOL),
                         jfr_meta_class(&m, "jdk.types.Symbol"));
        assert_int_equal(jfr_meta_class(&m, "no.such.Type"), JFR_NONE);
        jfr_meta_cleanup(&m);
        jw_free(&b);
    }
}

static void test_metadata_rejects_damage(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    jw_chunk c;
    jw_chunk_begin(&c, &b, 1, 0, 0, 1000000000);
    jw_std_metadata(&c, JW_JDK17);
    jfr_meta m;
    jp_error err;
    /* Cut anywhere inside: an error, never a crash. */
    size_t start = c.start + c.meta_off;
    size_t full = b.len;
    for (size_t n = start; n < full; n += 7) {
        b.len = n;
        jp_error_init(&err);
        assert_int_not_equal(parse_meta(&b, &c, &m, &err), JP_OK);
        assert_non_null(strstr(err.msg, "t.jfr: chunk 1 @0x"));
        jfr_meta_cleanup(&m);
    }
    b.len = full;
    /* A string count far beyond the event. */
    jw_buf bad;
    jw_init(&bad);
    size_t ev0 = jw_event_begin(&bad, 0);
    jw_bytes(&bad, "\0\0\x01", 3); /* start, duration, metadata id */
    jw_varint_pad(&bad, 0xffffffff, 5);
    jw_bytes(&bad, "\0\0\0\0\0\0", 6);
    jw_event_end(&bad, ev0);
    jw_chunk c2 = {.start = 0, .meta_off = 0};
    jp_error_init(&err);
    assert_int_equal(parse_meta(&bad, &c2, &m, &err), JP_ERR_LIMIT);
    assert_non_null(strstr(err.msg, "exceeds limit"));
    jfr_meta_cleanup(&m);
    jw_free(&bad);
    /* Elements nested deeper than the cap. */
    jw_init(&bad);
    size_t ev = jw_event_begin(&bad, 0);
    jw_bytes(&bad, "\0\0\x01", 3);
    jw_varint(&bad, 1);
    jw_str_utf8(&bad, "x");
    for (int i = 0; i < 100; i++)
        jw_bytes(&bad, "\x00\x00\x01", 3); /* name 0, no attributes, one child */
    jw_bytes(&bad, "\x00\x00\x00", 3);
    jw_event_end(&bad, ev);
    jp_error_init(&err);
    assert_int_equal(parse_meta(&bad, &c2, &m, &err), JP_ERR_LIMIT);
    assert_non_null(strstr(err.msg, "nested deeper"));
    jfr_meta_cleanup(&m);
    jw_free(&bad);
    jw_free(&b);
}

static void check_name_desc(jp_frame_kind kind, const char *cls, const char *method,
                            const char *desc, const char *want)
{
    jp_strbuf out;
    jp_strbuf_init(&out, 0);
    jfr_frame_name(&out, kind, cls, cls ? strlen(cls) : 0, cls != NULL, method,
                   method ? strlen(method) : 0, method != NULL, desc, desc ? strlen(desc) : 0);
    assert_string_equal(out.data, want);
    jp_strbuf_cleanup(&out);
}

static void check_name(jp_frame_kind kind, const char *cls, const char *method, const char *want)
{
    check_name_desc(kind, cls, method, NULL, want);
}

static void test_frame_names(void **state)
{
    (void)state;
    check_name(JP_FRAME_JIT, "com/example/App", "main", "com.example.App.main");
    check_name(JP_FRAME_INTERPRETED, "App", "main", "App.main");
    check_name(JP_FRAME_INLINED, "a/b/C$Inner", "<init>", "a.b.C$Inner.<init>");
    check_name(JP_FRAME_C1, "java/lang/Object", "hashCode", "java.lang.Object.hashCode");
    check_name(JP_FRAME_UNKNOWN, "x/Y", "z", "x.Y.z");
    /* Hidden classes and lambdas lose their per-run address and counter, in
     * every dialect: JDK 17 (+0x../id), JDK 21+ (/0x..), async-profiler (.0x..) */
    check_name(JP_FRAME_JIT, "a/Work$$Lambda$14/0x0000000800c03000", "run", "a.Work$$Lambda.run");
    check_name(JP_FRAME_JIT, "Work$$Lambda$83+0x00007f54b4007a08/715521683", "run",
               "Work$$Lambda.run");
    check_name(JP_FRAME_INTERPRETED, "Shop$$Lambda$1.0x00007f3ed4000a08", "run",
               "Shop$$Lambda.run");
    check_name(JP_FRAME_JIT, "Work$$Lambda/0x000071c3a8001000", "get", "Work$$Lambda.get");
    check_name(JP_FRAME_JIT, "java/lang/invoke/LambdaForm$MH/0x0000000800c01400", "invoke",
               "java.lang.invoke.LambdaForm$MH.invoke");
    /* Not hidden: ordinary names with '$' and digits stay as they are. */
    check_name(JP_FRAME_JIT, "a/Outer$1", "run", "a.Outer$1.run");
    check_name(JP_FRAME_JIT, "a/My$$Lambda$Holder", "m", "a.My$$Lambda$Holder.m");
    /* The JDK's Native frames are Java native methods, with a real descriptor. */
    check_name_desc(JP_FRAME_NATIVE, "java/lang/Thread", "sleep0", "(J)V",
                    "java.lang.Thread.sleep0");
    check_name(JP_FRAME_NATIVE, "java/lang/Thread", "sleep0", "java.lang.Thread.sleep0");
    /* async-profiler's native frames: the library (whatever its name) or
     * nothing as the class, and a made-up descriptor. */
    check_name_desc(JP_FRAME_NATIVE, "libc.so.6", "__futex_abstimed_wait_common", "()L;",
                    "__futex_abstimed_wait_common");
    check_name_desc(JP_FRAME_NATIVE, "vdso", "__vdso_clock_gettime", "()L;",
                    "__vdso_clock_gettime");
    check_name_desc(JP_FRAME_NATIVE, "linux-vdso.so.1", "__vdso_gettimeofday", "()L;",
                    "__vdso_gettimeofday");
    check_name_desc(JP_FRAME_NATIVE, "[vdso]", "clock_gettime", "()L;", "clock_gettime");
    check_name_desc(JP_FRAME_NATIVE, "libjprof_app", "f", "(Lk;)L;", "f");
    check_name(JP_FRAME_NATIVE, "", "start_thread", "start_thread");
    check_name(JP_FRAME_CPP, "libjvm.so", "JavaThread::run", "JavaThread::run");
    check_name(JP_FRAME_CPP, "com/example/App", "x", "x");
    check_name(JP_FRAME_KERNEL, "", "do_syscall_64", "do_syscall_64");
    check_name(JP_FRAME_JIT, NULL, "bare", "bare");
    check_name(JP_FRAME_JIT, "", "bare", "bare");
    check_name(JP_FRAME_JIT, "a/B", NULL, "[unknown]");
    check_name(JP_FRAME_JIT, NULL, NULL, "[unknown]");
    /* The kind and the descriptor decide, never the class's spelling: a ".so"
     * or a '[' in a Java class name is just a name. */
    check_name(JP_FRAME_JIT, "org/x.so/Y", "m", "org.x.so.Y.m");
    check_name_desc(JP_FRAME_JIT, "org/x/Y", "m", "()L;", "org.x.Y.m");
    check_name_desc(JP_FRAME_NATIVE, "org/x.so/Y", "m", "()V", "org.x.so.Y.m");
    assert_true(jfr_frame_is_bare(JP_FRAME_NATIVE, 9, true, "()L;", 4));
    assert_false(jfr_frame_is_bare(JP_FRAME_NATIVE, 9, true, "(J)V", 4));
    assert_false(jfr_frame_is_bare(JP_FRAME_NATIVE, 16, true, NULL, 0));
}

static void test_timespan(void **state)
{
    (void)state;
    int64_t ns;
    assert_true(jfr_timespan_parse("20 ms", &ns));
    assert_true(ns == 20000000);
    assert_true(jfr_timespan_parse("10ms", &ns));
    assert_true(ns == 10000000);
    assert_true(jfr_timespan_parse("1 s", &ns));
    assert_true(ns == 1000000000);
    assert_true(jfr_timespan_parse("500 us", &ns));
    assert_true(ns == 500000);
    assert_true(jfr_timespan_parse("1.5 s", &ns));
    assert_true(ns == 1500000000);
    assert_true(jfr_timespan_parse("7 ns", &ns));
    assert_true(ns == 7);
    assert_false(jfr_timespan_parse("beginChunk", &ns));
    assert_false(jfr_timespan_parse("20", &ns));
    assert_false(jfr_timespan_parse("20 parsecs", &ns));
    assert_false(jfr_timespan_parse("", &ns));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_varint_minimal_and_padded),
        cmocka_unit_test(test_varint_ninth_byte_and_overrun),
        cmocka_unit_test(test_varints_skip_n),
        cmocka_unit_test(test_string_encodings),
        cmocka_unit_test(test_string_lone_surrogates_and_overruns),
        cmocka_unit_test(test_metadata_parse),
        cmocka_unit_test(test_metadata_rejects_damage),
        cmocka_unit_test(test_frame_names),
        cmocka_unit_test(test_timespan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
