/* test_otlp.c - the formats other profilers send and read: the protobuf
 * wire format (src/wire/protobuf.c), gzip, the foreign names (sample types,
 * frame names), OpenTelemetry profiles in and out (src/wire/otlp_*.c), pprof
 * read back, Pyroscope's names and multipart bodies: bounds and refusals on
 * hand-made bytes, a
 * round trip, and the files async-profiler wrote (the .otlp files of tests/fixtures/jfr)
 * against jprof's own reading of the JFR they came from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jfr/jfr.h"
#include "model/frame_text.h"
#include "wire/gzip.h"
#include "wire/otlp_decode.h"
#include "wire/otlp_encode.h"
#include "wire/multipart.h"
#include "wire/otlp_proto.h"
#include "wire/pprof.h"
#include "wire/pprof_decode.h"
#include "wire/protobuf.h"
#include "wire/pyroscope.h"
#include "wire/sample_type.h"

/* ---- protobuf ---- */

static jp_err read_all(const uint8_t *b, size_t n, jp_pb_field *out, size_t *nout, jp_error *e)
{
    jp_pb_reader r;
    jp_pb_reader_init(&r, b, n, "Test");
    bool more;
    jp_err rc;
    *nout = 0;
    while (!(rc = jp_pb_next(&r, &out[*nout], &more, e)) && more)
        (*nout)++;
    return rc;
}

static void test_pb_reader(void **state)
{
    (void)state;
    jp_pb_field f[8];
    size_t n;
    jp_error e;
    jp_error_init(&e);
    const uint8_t ok[] = {0x08, 0x96, 0x01, 0x12, 0x02, 'h', 'i', 0x19, 1, 0,    0, 0,
                          0,    0,    0,    0x80, 0x25, 2,   0,   0,    0, 0x28, 0};
    assert_int_equal(read_all(ok, sizeof ok, f, &n, &e), JP_OK);
    assert_int_equal(n, 5);
    assert_int_equal(f[0].num, 1);
    assert_int_equal(f[0].v, 150);
    assert_int_equal(f[1].wire, JP_PB_LEN);
    assert_int_equal(f[1].len, 2);
    assert_memory_equal(f[1].data, "hi", 2);
    assert_int_equal(f[2].v, 0x8000000000000001ULL);
    assert_int_equal(f[3].v, 2);
    assert_int_equal(f[4].num, 5);
    assert_int_equal(f[4].off, 21);

    const uint8_t trunc[] = {0x08, 0x01, 0x12, 0x05, 'h'};
    assert_int_equal(read_all(trunc, sizeof trunc, f, &n, &e), JP_ERR_TRUNCATED);
    assert_non_null(strstr(e.msg, "@2: field 2: length 5 runs past the end"));
    const uint8_t longv[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
                             0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    assert_int_equal(read_all(longv, sizeof longv, f, &n, &e), JP_ERR_FORMAT);
    const uint8_t over64[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    assert_int_equal(read_all(over64, sizeof over64, f, &n, &e), JP_ERR_FORMAT);
    const uint8_t zero[] = {0x00, 0x01};
    assert_int_equal(read_all(zero, sizeof zero, f, &n, &e), JP_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "field number 0"));
    const uint8_t group[] = {0x0b, 0x0c};
    assert_int_equal(read_all(group, sizeof group, f, &n, &e), JP_ERR_FORMAT);
    assert_non_null(strstr(e.msg, "wire type 3"));
    const uint8_t fixed_short[] = {0x19, 1, 2, 3};
    assert_int_equal(read_all(fixed_short, sizeof fixed_short, f, &n, &e), JP_ERR_TRUNCATED);

    /* repeated scalars: packed and one per field */
    const uint8_t packed[] = {0x0a, 0x03, 0x01, 0x96, 0x01, 0x08, 0x07, 0x12, 0x03, 1, 2, 3};
    assert_int_equal(read_all(packed, sizeof packed, f, &n, &e), JP_OK);
    jp_pb_reader r;
    jp_pb_reader_init(&r, packed, sizeof packed, "Test");
    jp_pb_values it;
    uint64_t v, got[4];
    size_t k = 0;
    bool more;
    assert_int_equal(jp_pb_values_init(&it, &r, &f[0], 0, &e), JP_OK);
    while (jp_pb_values_next(&it, &v, &more, &e) == JP_OK && more)
        got[k++] = v;
    assert_int_equal(k, 2);
    assert_int_equal(got[1], 150);
    assert_int_equal(jp_pb_values_init(&it, &r, &f[1], 0, &e), JP_OK);
    assert_int_equal(jp_pb_values_next(&it, &v, &more, &e), JP_OK);
    assert_true(more);
    assert_int_equal(v, 7);
    assert_int_equal(jp_pb_values_init(&it, &r, &f[2], 8, &e), JP_ERR_FORMAT);
    assert_int_equal(jp_pb_values_init(&it, &r, &f[1], 8, &e), JP_ERR_FORMAT);
}

static void test_pb_writer(void **state)
{
    (void)state;
    jp_strbuf b, m;
    jp_strbuf_init(&b, 0);
    jp_strbuf_init(&m, 0);
    assert_int_equal(jp_pb_put_uint(&m, 1, 300), JP_OK);
    assert_int_equal(jp_pb_put_bytes(&m, 2, "abc", 3), JP_OK);
    assert_int_equal(jp_pb_put_message(&b, 7, &m), JP_OK);
    assert_int_equal(m.len, 0);
    assert_int_equal(jp_pb_put_fixed64(&b, 3, 0x0102030405060708ULL), JP_OK);
    jp_pb_field f[4];
    size_t n;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(read_all((const uint8_t *)b.data, b.len, f, &n, &e), JP_OK);
    assert_int_equal(n, 2);
    assert_int_equal(f[0].num, 7);
    assert_int_equal(f[1].v, 0x0102030405060708ULL);
    jp_pb_field g[4];
    assert_int_equal(read_all(f[0].data, f[0].len, g, &n, &e), JP_OK);
    assert_int_equal(n, 2);
    assert_int_equal(g[0].v, 300);
    assert_memory_equal(g[1].data, "abc", 3);
    jp_strbuf_cleanup(&b);
    jp_strbuf_cleanup(&m);
}

/* ---- gzip ---- */

static void test_gzip(void **state)
{
    (void)state;
    jp_strbuf z;
    jp_strbuf_init(&z, 0);
    jp_error e;
    jp_error_init(&e);
    static char big[1 << 20];
    memset(big, 'a', sizeof big);
    assert_int_equal(jp_gzip_append(big, sizeof big, &z, &e), JP_OK);
    size_t one = z.len;
    assert_int_equal(jp_gzip_append("tail", 4, &z, &e), JP_OK); /* a second member */
    assert_true(jp_gzip_is(z.data, z.len));
    uint8_t *out;
    size_t n;
    assert_int_equal(jp_gzip_decompress(z.data, z.len, 2u << 20, &out, &n, &e), JP_OK);
    assert_int_equal(n, sizeof big + 4);
    assert_memory_equal(out + sizeof big, "tail", 4);
    free(out);
    /* a bomb stops at the cap; a cut member and garbage are refused */
    assert_int_equal(jp_gzip_decompress(z.data, one, 1000, &out, &n, &e), JP_ERR_LIMIT);
    assert_non_null(strstr(e.msg, "limit of 1000 bytes"));
    assert_int_equal(jp_gzip_decompress(z.data, one / 2, 2u << 20, &out, &n, &e), JP_ERR_TRUNCATED);
    assert_int_equal(jp_gzip_decompress("\x1f\x8bxxxxxxxxxx", 12, 100, &out, &n, &e),
                     JP_ERR_FORMAT);
    assert_int_equal(jp_gzip_decompress("", 0, 100, &out, &n, &e), JP_ERR_TRUNCATED);
    jp_strbuf_cleanup(&z);
}

/* ---- foreign names ---- */

static void norm_is(const char *in, const char *want, jp_frame_kind kind)
{
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    jp_frame_kind k = jp_frame_text_normalize(in, strlen(in), &b);
    assert_string_equal(jp_strbuf_str(&b), want);
    assert_int_equal(k, kind);
    jp_strbuf_cleanup(&b);
}

static void test_frame_text(void **state)
{
    (void)state;
    norm_is("java/lang/Thread.run", "java.lang.Thread.run", JP_FRAME_UNKNOWN);
    norm_is("shop/JprofWorkload$$Lambda$4.0x00007f4444003a58.run", "shop.JprofWorkload$$Lambda.run",
            JP_FRAME_UNKNOWN);
    norm_is("shop.JprofWorkload$$Lambda$4.0x00007f4444003a58.run", "shop.JprofWorkload$$Lambda.run",
            JP_FRAME_UNKNOWN);
    norm_is("a/B$$Lambda$14/0x0000000800c03000.<init>", "a.B$$Lambda.<init>", JP_FRAME_UNKNOWN);
    norm_is("java.lang.Thread.run", "java.lang.Thread.run", JP_FRAME_UNKNOWN);
    norm_is("shop/Crypto.hashLoop_[j]", "shop.Crypto.hashLoop", JP_FRAME_JIT);
    norm_is("do_syscall_64_[k]", "do_syscall_64", JP_FRAME_KERNEL);
    norm_is("JavaThread::run()", "JavaThread::run()", JP_FRAME_UNKNOWN);
    norm_is("/usr/lib/libc.so.6", "/usr/lib/libc.so.6", JP_FRAME_UNKNOWN);
    norm_is("libc.so.6", "libc.so.6", JP_FRAME_UNKNOWN);
    norm_is("[vdso]", "[vdso]", JP_FRAME_UNKNOWN);
    norm_is("", "[unknown]", JP_FRAME_UNKNOWN);
}

static void test_sample_types(void **state)
{
    (void)state;
    jp_sample_type st;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_sample_type_map("cpu", 3, "count", 5, &st, &e), JP_OK);
    assert_true(st.kind == JP_KIND_CPU && st.is_count);
    assert_int_equal(jp_sample_type_map("ITIMER", 6, "ns", 2, &st, &e), JP_OK);
    assert_true(st.kind == JP_KIND_CPU && !st.is_count && st.scale == 1);
    assert_int_equal(jp_sample_type_map("wall", 4, "milliseconds", 12, &st, &e), JP_OK);
    assert_true(st.kind == JP_KIND_WALL && st.scale == 1000000);
    assert_int_equal(jp_sample_type_map("allocations", 11, "bytes", 5, &st, &e), JP_OK);
    assert_true(st.kind == JP_KIND_ALLOC && !st.is_count);
    assert_int_equal(jp_sample_type_map("locks", 5, "nanoseconds", 11, &st, &e), JP_OK);
    assert_int_equal(st.kind, JP_KIND_LOCK);
    assert_int_equal(jp_sample_type_map("inuse_space", 11, "bytes", 5, &st, &e), JP_OK);
    assert_int_equal(st.kind, JP_KIND_LIVE);
    assert_int_equal(jp_sample_type_map("cache-misses", 12, "events", 6, &st, &e),
                     JP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.msg, "'cache-misses'"));
    assert_int_equal(jp_sample_type_map("cpu", 3, "bytes", 5, &st, &e), JP_ERR_UNSUPPORTED);
    assert_non_null(strstr(e.msg, "unit 'bytes' does not fit the cpu kind"));
}

/* ---- OTLP ---- */

/* One kind of a profile as sorted "frames;...\tSAMPLES\tVALUE" lines, cells
 * of the same stack added up (threads left out unless `threads`). */
typedef struct agg_line {
    char *key;
    uint64_t s, v;
} agg_line;

static int agg_cmp(const void *a, const void *b)
{
    return strcmp(((const agg_line *)a)->key, ((const agg_line *)b)->key);
}

static char *aggregate(const jp_profile *p, uint32_t kinds, bool threads)
{
    size_t n = 0, cap = 16;
    agg_line *ls = malloc(cap * sizeof *ls);
    jp_strbuf k;
    jp_strbuf_init(&k, 0);
    for (int kind = 0; kind < JP_KIND_COUNT; kind++) {
        if (!(kinds & (1u << kind)))
            continue;
        for (size_t i = 0; i < p->kinds[kind].count; i++) {
            const jp_sample *c = &p->kinds[kind].cells[i];
            jp_strbuf_reset(&k);
            size_t len;
            if (threads && c->thread != JP_NO_THREAD) {
                const char *t = jp_profile_frame_name(p, c->thread, &len);
                jp_strbuf_printf(&k, "%.*s;", (int)len, t);
            }
            const uint32_t *fr = jp_profile_stack_frames(p, c->stack);
            for (uint32_t d = 0; d < p->stacks[c->stack].depth; d++) {
                const char *name = jp_profile_frame_name(p, fr[d], &len);
                jp_strbuf_printf(&k, "%s%.*s", d ? ";" : "", (int)len, name);
            }
            if (n == cap)
                ls = realloc(ls, (cap *= 2) * sizeof *ls);
            ls[n++] = (agg_line){strdup(jp_strbuf_str(&k)), c->samples, c->value};
        }
    }
    qsort(ls, n, sizeof *ls, agg_cmp);
    jp_strbuf out;
    jp_strbuf_init(&out, 0);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && !strcmp(ls[i].key, ls[i + 1].key)) {
            ls[i + 1].s += ls[i].s;
            ls[i + 1].v += ls[i].v;
        } else {
            jp_strbuf_printf(&out, "%s\t%llu\t%llu\n", ls[i].key, (unsigned long long)ls[i].s,
                             (unsigned long long)ls[i].v);
        }
        free(ls[i].key);
    }
    free(ls);
    jp_strbuf_cleanup(&k);
    char *s = jp_strbuf_take(&out);
    return s ? s : strdup("");
}

static jp_profile *sample_profile(void)
{
    jp_profile *p = jp_profile_new();
    uint32_t a = jp_profile_frame(p, "app.Main.run", 12, JP_FRAME_JIT);
    uint32_t b = jp_profile_frame(p, "app.Tax.compute", 15, JP_FRAME_INTERPRETED);
    uint32_t c = jp_profile_frame(p, "__vdso_clock_gettime", 20, JP_FRAME_NATIVE);
    uint32_t d = jp_profile_frame(p, "do_syscall_64", 13, JP_FRAME_KERNEL);
    uint32_t t1 = jp_profile_thread(p, "worker-1", 8), t2 = jp_profile_thread(p, "main", 4);
    uint32_t s1f[] = {a, b}, s2f[] = {a, c, d};
    uint32_t s1 = jp_profile_stack(p, s1f, 2, false), s2 = jp_profile_stack(p, s2f, 3, false);
    jp_profile_add(p, JP_KIND_CPU, s1, t1, 7, 7, 70000000);
    jp_profile_add(p, JP_KIND_CPU, s1, t2, 2, 2, 20000000);
    jp_profile_add(p, JP_KIND_CPU, s2, JP_NO_THREAD, 3, 3, 30000000);
    jp_profile_add(p, JP_KIND_ALLOC, s2, t1, 5, 5, 4096);
    p->kinds[JP_KIND_CPU].period_ns = 10000000;
    p->start_ns = 1795572748000000000LL;
    p->end_ns = p->start_ns + 5000000000LL;
    return p;
}

static void decode_ok(const void *data, size_t len, const jp_batch_target *defaults,
                      jp_otlp_result *r)
{
    jp_otlp_limits lim;
    jp_otlp_limits_default(&lim, NULL);
    jp_error e;
    jp_error_init(&e);
    jp_otlp_result_init(r);
    jp_err rc = jp_otlp_decode(data, len, &lim, defaults, r, &e);
    if (rc)
        fail_msg("decode: %s", e.msg);
}

static void test_otlp_round_trip(void **state)
{
    (void)state;
    jp_profile *p = sample_profile();
    jp_batch_target t = {.ns = "shop",
                         .service = "checkout",
                         .pod = "checkout-7d9f",
                         .container = "app",
                         .pid = 4242};
    jp_strbuf out;
    jp_strbuf_init(&out, 0);
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_otlp_encode(p, 1u << JP_KIND_WALL, true, &t, &out, &e), JP_ERR_NOT_FOUND);
    assert_int_equal(jp_otlp_encode(p, ~0u, true, &t, &out, &e), JP_OK);
    jp_otlp_result r;
    decode_ok(out.data, out.len, NULL, &r);
    assert_int_equal(r.ntargets, 1);
    assert_int_equal(r.profiles, 4); /* (count, value) per kind */
    assert_string_equal(r.scope ? r.scope : "", "jprof " PACKAGE_VERSION);
    const jp_otlp_target *got = &r.targets[0];
    assert_string_equal(got->target.ns, "shop");
    assert_string_equal(got->target.service, "checkout");
    assert_string_equal(got->target.pod, "checkout-7d9f");
    assert_string_equal(got->target.container, "app");
    assert_int_equal(got->target.pid, 4242);
    assert_int_equal(got->start_ns, p->start_ns);
    assert_int_equal(got->end_ns, p->end_ns);
    const jp_profile *q = got->profile;
    assert_int_equal(q->kinds[JP_KIND_CPU].period_ns, 10000000);
    for (int k = JP_KIND_CPU; k <= JP_KIND_ALLOC; k++) {
        char *a = aggregate(p, 1u << k, true), *b = aggregate(q, 1u << k, true);
        assert_string_equal(a, b);
        free(a);
        free(b);
    }
    /* frame kinds travel as profile.frame.type (jvm, native, kernel) */
    for (uint32_t f = 0; f < q->nframes; f++) {
        size_t len;
        const char *n = jp_profile_frame_name(q, f, &len);
        jp_frame_kind k = jp_frame_primary_kind(&q->frames[f]);
        if (len == 13 && !memcmp(n, "do_syscall_64", 13))
            assert_int_equal(k, JP_FRAME_KERNEL);
        else if (len == 20 && !memcmp(n, "__vdso_clock_gettime", 20))
            assert_int_equal(k, JP_FRAME_NATIVE);
        else if (len == 12 && !memcmp(n, "app.Main.run", 12))
            assert_int_equal(k, JP_FRAME_JIT);
    }
    jp_otlp_result_cleanup(&r);
    /* without threads or a target: the defaults name it */
    jp_strbuf_reset(&out);
    assert_int_equal(jp_otlp_encode(p, 1u << JP_KIND_CPU, false, NULL, &out, &e), JP_OK);
    jp_batch_target df = {.ns = "batch", .service = "nightly"};
    decode_ok(out.data, out.len, &df, &r);
    assert_string_equal(r.targets[0].target.ns, "batch");
    assert_string_equal(r.targets[0].target.service, "nightly");
    assert_string_equal(r.targets[0].target.pod, "upload");
    char *a = aggregate(p, 1u << JP_KIND_CPU, false);
    char *b = aggregate(r.targets[0].profile, 1u << JP_KIND_CPU, false);
    assert_string_equal(a, b);
    assert_int_equal(r.targets[0].profile->kinds[JP_KIND_CPU].cells[0].thread, JP_NO_THREAD);
    free(a);
    free(b);
    jp_otlp_result_cleanup(&r);
    jp_strbuf_cleanup(&out);
    jp_profile_free(p);
}

static uint8_t *slurp(const char *name, size_t *len)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", JPROF_FIXTURE_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot open", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    uint8_t *b = malloc((size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

static jp_profile *read_jfr(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", JPROF_FIXTURE_DIR, name);
    jp_profile *p = jp_profile_new();
    jfr_options o;
    jfr_options_init(&o);
    o.threads = true;
    jfr_report rep;
    jfr_report_init(&rep);
    if (jfr_read_file(path, &o, p, &rep) != JP_OK)
        fail_msg("%s: %s", path, rep.error.msg);
    return p;
}

/* async-profiler's jfrconv from a fixture: the same tree as jprof reads
 * from the JFR, samples and values, kind by kind. */
static void jfrconv_is(const char *otlp, jp_kind kind, uint32_t jfr_kinds, bool values,
                       bool samples)
{
    size_t len;
    uint8_t *b = slurp(otlp, &len);
    jp_otlp_result r;
    decode_ok(b, len, NULL, &r);
    assert_int_equal(r.ntargets, 1);
    jp_profile *j = read_jfr("asprof-cpu-alloc-lock.jfr");
    char *want = aggregate(j, jfr_kinds, false);
    char *got = aggregate(r.targets[0].profile, 1u << kind, false);
    /* lines: key \t samples \t value */
    char *w = want, *g = got;
    size_t lines = 0;
    while (*w && *g) {
        char *we = strchr(w, '\n'), *ge = strchr(g, '\n');
        char *wt = strchr(w, '\t'), *gt = strchr(g, '\t');
        assert_true(wt - w == gt - g && !memcmp(w, g, (size_t)(wt - w)));
        unsigned long long ws, wv, gs, gv;
        assert_int_equal(sscanf(wt, "\t%llu\t%llu", &ws, &wv), 2);
        assert_int_equal(sscanf(gt, "\t%llu\t%llu", &gs, &gv), 2);
        if (samples)
            assert_int_equal(ws, gs);
        if (values)
            assert_int_equal(wv, gv);
        w = we + 1;
        g = ge + 1;
        lines++;
    }
    assert_true(!*w && !*g);
    assert_true(lines >= 2);
    free(want);
    free(got);
    jp_profile_free(j);
    jp_otlp_result_cleanup(&r);
    free(b);
}

static void test_otlp_jfrconv_fixtures(void **state)
{
    (void)state;
    /* cpu counted: samples exact, value = samples x the 10 ms period */
    jfrconv_is("asprof-cpu-alloc-lock.cpu.otlp", JP_KIND_CPU, 1u << JP_KIND_CPU, true, true);
    jfrconv_is("asprof-cpu-alloc-lock.alloc.otlp", JP_KIND_ALLOC, 1u << JP_KIND_ALLOC, true, true);
    /* async-profiler's lock profile holds the monitor waits and the parks */
    jfrconv_is("asprof-cpu-alloc-lock.lock.otlp", JP_KIND_LOCK,
               (1u << JP_KIND_LOCK) | (1u << JP_KIND_PARK), true, true);
}

/* The agent's own OTLP of a stopped session against its collapsed dump of
 * the same session (thread first, frames named as jprof names them). */
static void test_otlp_agent_fixture(void **state)
{
    (void)state;
    size_t len, clen;
    uint8_t *b = slurp("asprof-agent-cpu-threads.otlp", &len);
    char *col = (char *)slurp("asprof-agent-cpu-threads.collapsed", &clen);
    col[clen] = '\0';
    jp_otlp_result r;
    decode_ok(b, len, NULL, &r);
    jp_profile *want = jp_profile_new();
    jp_strbuf name;
    jp_strbuf_init(&name, 0);
    uint32_t fr[512];
    char *save = NULL;
    for (char *line = strtok_r(col, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sp = strrchr(line, ' ');
        assert_non_null(sp);
        *sp = '\0';
        unsigned long long n = strtoull(sp + 1, NULL, 10);
        char *tid = strstr(line, " tid=");
        char *semi = strchr(line, ';');
        assert_true(line[0] == '[' && tid && semi && tid < semi);
        uint32_t th = jp_profile_thread(want, line + 1, (size_t)(tid - line - 1));
        size_t depth = 0;
        for (char *f = semi + 1; f && depth < 512;) {
            char *e = strchr(f, ';');
            jp_frame_kind k = jp_frame_text_normalize(f, e ? (size_t)(e - f) : strlen(f), &name);
            fr[depth++] = jp_profile_frame(want, name.data, name.len, k);
            f = e ? e + 1 : NULL;
        }
        uint32_t st = jp_profile_stack(want, fr, depth, false);
        jp_profile_add(want, JP_KIND_CPU, st, th, n, n, n * 10000000ULL);
    }
    char *a = aggregate(want, 1u << JP_KIND_CPU, true);
    char *g = aggregate(r.targets[0].profile, 1u << JP_KIND_CPU, true);
    assert_string_equal(a, g);
    assert_int_equal(r.targets[0].profile->kinds[JP_KIND_CPU].period_ns, 10000000);
    free(a);
    free(g);
    jp_strbuf_cleanup(&name);
    jp_profile_free(want);
    jp_otlp_result_cleanup(&r);
    free(col);
    free(b);
}

/* ---- hand-made messages: identity, shapes, refusals ---- */

typedef struct mk_opts {
    const char *type;   /* the sample type of both profiles */
    bool count, value;  /* which profiles: (type, count), (type, nanoseconds) */
    bool value_first;   /* the value profile comes first */
    int64_t neg;        /* a value to put in the first sample instead of 3 */
    uint64_t stack;     /* the samples' stack index (1) */
    const char *thread; /* the thread name ("t1"), bytes as given */
} mk_opts;

static void mk_str(jp_strbuf *d, const char *s)
{
    jp_pb_put_bytes(d, OTLP_DICT_STRING, s, strlen(s));
}

static void mk_dictionary(jp_strbuf *out, const mk_opts *o)
{
    jp_strbuf d, m, l;
    jp_strbuf_init(&d, 0);
    jp_strbuf_init(&m, 0);
    jp_strbuf_init(&l, 0);
    const char *strs[] = {"",
                          "",
                          "count",
                          "nanoseconds",
                          "f/Main.run",
                          "f/Main.work",
                          "thread.name",
                          "",
                          "k8s.pod.name",
                          "pod-b"};
    strs[1] = o->type;
    strs[7] = o->thread ? o->thread : "t1";
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        mk_str(&d, strs[i]);
    for (int i = 0; i < 3; i++) { /* functions [0] {}, [1] run, [2] work */
        if (i)
            jp_pb_put_uint(&m, OTLP_FUNCTION_NAME, 3 + (unsigned)i);
        jp_pb_put_message(&d, OTLP_DICT_FUNCTION, &m);
    }
    for (int i = 0; i < 3; i++) { /* locations [i] -> function i */
        if (i) {
            jp_pb_put_uint(&l, OTLP_LINE_FUNCTION, (unsigned)i);
            jp_pb_put_message(&m, OTLP_LOCATION_LINES, &l);
        }
        jp_pb_put_message(&d, OTLP_DICT_LOCATION, &m);
    }
    jp_pb_put_message(&d, OTLP_DICT_STACK, &m);
    jp_strbuf_put_varint(&l, 2); /* leaf first: work, run */
    jp_strbuf_put_varint(&l, 1);
    jp_pb_put_message(&m, OTLP_STACK_LOCATIONS, &l);
    jp_pb_put_message(&d, OTLP_DICT_STACK, &m);
    jp_pb_put_message(&d, OTLP_DICT_ATTRIBUTE, &m);
    for (int i = 0; i < 2; i++) { /* [1] thread.name=t1, [2] k8s.pod.name=pod-b */
        jp_pb_put_uint(&m, OTLP_KVU_KEY, i ? 8 : 6);
        jp_pb_put_uint(&l, OTLP_ANY_STRING_STRINDEX, i ? 9 : 7);
        jp_pb_put_message(&m, OTLP_KVU_VALUE, &l);
        jp_pb_put_message(&d, OTLP_DICT_ATTRIBUTE, &m);
    }
    jp_pb_put_message(out, OTLP_DATA_DICTIONARY, &d);
    jp_strbuf_cleanup(&d);
    jp_strbuf_cleanup(&m);
    jp_strbuf_cleanup(&l);
}

/* One profile: (type, count) with values 3 and 2, or (type, ns) with 30
 * and 20 and a period of 10 ns; the second sample is pod-b's. */
static void mk_profile(jp_strbuf *scope, const mk_opts *o, bool value)
{
    jp_strbuf p, m, l;
    jp_strbuf_init(&p, 0);
    jp_strbuf_init(&m, 0);
    jp_strbuf_init(&l, 0);
    jp_pb_put_uint(&m, OTLP_VT_TYPE, 1);
    jp_pb_put_uint(&m, OTLP_VT_UNIT, value ? 3 : 2);
    jp_pb_put_message(&p, OTLP_PROFILE_SAMPLE_TYPE, &m);
    jp_pb_put_uint(&m, OTLP_VT_TYPE, 1);
    jp_pb_put_uint(&m, OTLP_VT_UNIT, 3);
    jp_pb_put_message(&p, OTLP_PROFILE_PERIOD_TYPE, &m);
    jp_pb_put_uint(&p, OTLP_PROFILE_PERIOD, 10);
    for (int i = 0; i < 2; i++) {
        jp_pb_put_uint(&m, OTLP_SAMPLE_STACK, o->stack ? o->stack : 1);
        jp_strbuf_put_varint(&l, 1);
        if (i)
            jp_strbuf_put_varint(&l, 2);
        jp_pb_put_message(&m, OTLP_SAMPLE_ATTRIBUTES, &l);
        int64_t v = (i ? 2 : (o->neg ? o->neg : 3)) * (value ? 10 : 1);
        jp_pb_put_uint(&m, OTLP_SAMPLE_VALUES, (uint64_t)v);
        jp_pb_put_message(&p, OTLP_PROFILE_SAMPLES, &m);
    }
    jp_pb_put_message(scope, OTLP_SP_PROFILES, &p);
    jp_strbuf_cleanup(&p);
    jp_strbuf_cleanup(&m);
    jp_strbuf_cleanup(&l);
}

static void mk_kv(jp_strbuf *res, const char *key, const char *sval, int64_t ival)
{
    jp_strbuf kv, any;
    jp_strbuf_init(&kv, 0);
    jp_strbuf_init(&any, 0);
    jp_pb_put_bytes(&kv, OTLP_KV_KEY, key, strlen(key));
    if (sval)
        jp_pb_put_bytes(&any, OTLP_ANY_STRING, sval, strlen(sval));
    else
        jp_pb_put_uint(&any, OTLP_ANY_INT, (uint64_t)ival);
    jp_pb_put_message(&kv, OTLP_KV_VALUE, &any);
    jp_pb_put_message(res, OTLP_RESOURCE_ATTRIBUTES, &kv);
    jp_strbuf_cleanup(&kv);
    jp_strbuf_cleanup(&any);
}

static void mk_message(jp_strbuf *out, const mk_opts *o)
{
    jp_strbuf res, scope, rp;
    jp_strbuf_init(&res, 0);
    jp_strbuf_init(&scope, 0);
    jp_strbuf_init(&rp, 0);
    jp_strbuf_reset(out);
    mk_kv(&res, "service.name", "svc", 0);
    mk_kv(&res, "k8s.namespace.name", "ns1", 0);
    mk_kv(&res, "host.name", "h1", 0);
    mk_kv(&res, "process.pid", NULL, 77);
    jp_pb_put_message(&rp, OTLP_RP_RESOURCE, &res);
    if (o->value && o->value_first)
        mk_profile(&scope, o, true);
    if (o->count)
        mk_profile(&scope, o, false);
    if (o->value && !o->value_first)
        mk_profile(&scope, o, true);
    jp_pb_put_message(&rp, OTLP_RP_SCOPE_PROFILES, &scope);
    jp_pb_put_message(out, OTLP_DATA_RESOURCE_PROFILES, &rp);
    mk_dictionary(out, o); /* after the profiles, as jfrconv writes it */
    jp_strbuf_cleanup(&res);
    jp_strbuf_cleanup(&scope);
    jp_strbuf_cleanup(&rp);
}

static const jp_sample *only_cell(const jp_otlp_target *t)
{
    const jp_kind_table *k = &t->profile->kinds[JP_KIND_CPU];
    assert_int_equal(k->count, 1);
    return &k->cells[0];
}

static void test_otlp_identity_and_shapes(void **state)
{
    (void)state;
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    for (int order = 0; order < 2; order++) {
        mk_opts o = {.type = "cpu", .count = true, .value = true, .value_first = order};
        mk_message(&b, &o);
        jp_otlp_result r;
        decode_ok(b.data, b.len, NULL, &r);
        assert_int_equal(r.ntargets, 2);
        const jp_otlp_target *a = &r.targets[0], *c = &r.targets[1];
        assert_string_equal(a->target.ns, "ns1");
        assert_string_equal(a->target.service, "svc");
        assert_string_equal(a->target.pod, "h1:77"); /* host.name:process.pid */
        assert_string_equal(a->target.node, "h1");
        assert_int_equal(a->target.pid, 77);
        assert_string_equal(c->target.pod, "pod-b"); /* a sample's attribute wins */
        assert_int_equal(only_cell(a)->samples, 3);
        assert_int_equal(only_cell(a)->value, 30);
        assert_int_equal(only_cell(c)->samples, 2);
        assert_int_equal(only_cell(c)->value, 20);
        size_t len;
        const char *tn = jp_profile_frame_name(a->profile, only_cell(a)->thread, &len);
        assert_int_equal(len, 2);
        assert_memory_equal(tn, "t1", 2);
        char *agg = aggregate(a->profile, 1u << JP_KIND_CPU, false);
        assert_string_equal(agg, "f.Main.run;f.Main.work\t3\t30\n");
        free(agg);
        jp_otlp_result_cleanup(&r);
    }
    /* a count profile alone: value = samples x period (the period's unit is ns) */
    mk_opts o = {.type = "itimer", .count = true};
    mk_message(&b, &o);
    jp_otlp_result r;
    decode_ok(b.data, b.len, NULL, &r);
    assert_int_equal(only_cell(&r.targets[0])->value, 30);
    assert_int_equal(r.targets[0].profile->kinds[JP_KIND_CPU].period_ns, 10);
    jp_otlp_result_cleanup(&r);
    /* a value profile alone: samples = value / period */
    o = (mk_opts){.type = "cpu", .value = true};
    mk_message(&b, &o);
    decode_ok(b.data, b.len, NULL, &r);
    assert_int_equal(only_cell(&r.targets[0])->samples, 3);
    assert_int_equal(only_cell(&r.targets[0])->value, 30);
    jp_otlp_result_cleanup(&r);
    /* async-profiler's "[NAME tid=N]" thread names lose the brackets and tid */
    o = (mk_opts){.type = "cpu", .count = true, .thread = "[worker-1 tid=4242]"};
    mk_message(&b, &o);
    decode_ok(b.data, b.len, NULL, &r);
    size_t len;
    const char *tn =
        jp_profile_frame_name(r.targets[0].profile, only_cell(&r.targets[0])->thread, &len);
    assert_int_equal(len, 8);
    assert_memory_equal(tn, "worker-1", 8);
    jp_otlp_result_cleanup(&r);
    jp_strbuf_cleanup(&b);
}

static jp_err decode_err(const jp_strbuf *b, const jp_otlp_limits *lim, jp_error *e)
{
    jp_otlp_result r;
    jp_otlp_result_init(&r);
    jp_error_init(e);
    jp_err rc = jp_otlp_decode((const uint8_t *)b->data, b->len, lim, NULL, &r, e);
    jp_otlp_result_cleanup(&r);
    if (rc)
        assert_true(e->msg[0] != '\0'); /* a refusal says why */
    return rc;
}

/* The message in b is refused with rc, its message containing want. */
static void refused(const jp_strbuf *b, const jp_otlp_limits *lim, jp_err rc, const char *want)
{
    jp_error e;
    assert_int_equal(decode_err(b, lim, &e), rc);
    if (!strstr(e.msg, want))
        fail_msg("'%s' is not in '%s'", want, e.msg);
}

static void test_otlp_refusals(void **state)
{
    (void)state;
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    jp_otlp_limits lim;
    jp_otlp_limits_default(&lim, NULL);
    mk_opts o = {.type = "cache-misses", .count = true};
    mk_message(&b, &o);
    refused(&b, &lim, JP_ERR_UNSUPPORTED, "'cache-misses'");
    o = (mk_opts){.type = "cpu", .count = true, .stack = 9};
    mk_message(&b, &o);
    refused(&b, &lim, JP_ERR_FORMAT, "index 9 into stack_table is out of range");
    o = (mk_opts){.type = "cpu", .count = true, .neg = -5};
    mk_message(&b, &o);
    refused(&b, &lim, JP_ERR_FORMAT, "negative value -5");
    o = (mk_opts){.type = "cpu", .count = true, .thread = "bad\xff"};
    mk_message(&b, &o);
    refused(&b, &lim, JP_ERR_FORMAT, "not valid UTF-8");
    o = (mk_opts){.type = "cpu", .count = true};
    mk_message(&b, &o); /* 2 targets (pod-b's sample), 2 samples on the 2 frames run -> work */
    jp_otlp_limits tight = lim;
    tight.max_targets = 1;
    refused(&b, &tight, JP_ERR_LIMIT, "more than 1 targets");
    tight = lim;
    tight.batch.max_depth = 1;
    refused(&b, &tight, JP_ERR_LIMIT, "");
    tight = lim;
    tight.max_table = 4;
    refused(&b, &tight, JP_ERR_LIMIT, "string_table has more than 4 entries");
    tight = lim;
    tight.max_samples = 1;
    refused(&b, &tight, JP_ERR_LIMIT, "more than 1 samples");
    tight = lim;
    tight.batch.max_frames = 1;
    refused(&b, &tight, JP_ERR_LIMIT, "more than 1 distinct frames");
    /* every cut of a valid message is refused or read, never more */
    jp_error e;
    for (size_t cut = 0; cut < b.len; cut++) {
        jp_strbuf c = {.data = b.data, .len = cut};
        jp_err rc = decode_err(&c, &lim, &e);
        assert_true(rc == JP_OK || rc == JP_ERR_FORMAT || rc == JP_ERR_TRUNCATED);
    }
    jp_strbuf_cleanup(&b);
}

/* ---- pprof read back, Pyroscope's names, multipart ---- */

static void test_pprof_read_back(void **state)
{
    (void)state;
    jp_profile *p = sample_profile();
    jp_otlp_limits lim;
    jp_otlp_limits_default(&lim, NULL);
    jp_error e;
    jp_error_init(&e);
    for (int k = JP_KIND_CPU; k <= JP_KIND_ALLOC; k += JP_KIND_ALLOC - JP_KIND_CPU) {
        jp_strbuf gz;
        jp_strbuf_init(&gz, 0);
        assert_int_equal(jp_pprof_encode(p, (jp_kind)k, true, &gz, &e), JP_OK);
        jp_profile *q = jp_profile_new();
        assert_int_equal(jp_pprof_decode((const uint8_t *)gz.data, gz.len, &lim, 1u << 20, q, &e),
                         JP_OK);
        char *a = aggregate(p, 1u << k, true), *b = aggregate(q, 1u << k, true);
        assert_string_equal(a, b); /* ("samples", "count") counts the file's own kind */
        assert_int_equal(q->start_ns, p->start_ns);
        free(a);
        free(b);
        /* a cut profile is refused, never read past its end */
        assert_int_not_equal(
            jp_pprof_decode((const uint8_t *)gz.data, gz.len / 2, &lim, 1u << 20, q, &e), JP_OK);
        jp_profile_free(q);
        jp_strbuf_cleanup(&gz);
    }
    jp_profile_free(p);
}

static void test_pyroscope_name(void **state)
{
    (void)state;
    jp_batch_target t;
    memset(&t, 0, sizeof t);
    const char *hint;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(
        jp_pyroscope_name("shop.app.cpu{service_name=checkout,namespace=shop,pod=c-1,hostname=h1,"
                          "process.runtime.name=OpenJDK,process.runtime.version=17.0.9}",
                          NULL, 4096, &t, &hint, &e),
        JP_OK);
    assert_string_equal(hint, "cpu");
    assert_string_equal(t.service, "checkout");
    assert_string_equal(t.ns, "shop");
    assert_string_equal(t.pod, "c-1");
    assert_string_equal(t.node, "h1");
    assert_string_equal(t.jvm, "OpenJDK 17.0.9");
    jp_batch_target_cleanup(&t);
    assert_int_equal(jp_pyroscope_name("my.app", "batch", 4096, &t, &hint, &e), JP_OK);
    assert_string_equal(t.service, "my.app");
    assert_string_equal(t.ns, "batch");
    assert_string_equal(t.pod, "upload");
    jp_batch_target_cleanup(&t);
    assert_int_equal(jp_pyroscope_name("app{novalue}", NULL, 4096, &t, &hint, &e), JP_ERR_FORMAT);
    jp_batch_target_cleanup(&t);
    assert_int_equal(jp_pyroscope_name("app{a=b", NULL, 4096, &t, &hint, &e), JP_ERR_FORMAT);
    jp_batch_target_cleanup(&t);
    assert_int_equal(jp_pyroscope_name("", NULL, 4096, &t, &hint, &e), JP_ERR_FORMAT);
}

static void test_multipart(void **state)
{
    (void)state;
    char b[80];
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(
        jp_multipart_boundary("multipart/form-data; boundary=\"x y\"", b, sizeof b, &e), JP_OK);
    assert_string_equal(b, "x y");
    assert_int_equal(
        jp_multipart_boundary("multipart/form-data; charset=utf-8; boundary=ab", b, sizeof b, &e),
        JP_OK);
    assert_string_equal(b, "ab");
    assert_int_equal(jp_multipart_boundary("application/octet-stream", b, sizeof b, &e),
                     JP_ERR_NOT_FOUND);
    const char body[] =
        "--ab\r\nContent-Disposition: form-data; name=\"jfr\"; filename=\"jfr\"\r\n"
        "Content-Length: 5\r\n\r\nFLR\r\n\r\n--ab\r\nContent-Disposition: form-data; "
        "name=labels\r\nContent-Type: application/x-protobuf\r\n\r\n\r\n--ab--\r\n";
    jp_mp_part parts[4];
    size_t n;
    assert_int_equal(
        jp_multipart_parse((const uint8_t *)body, sizeof body - 1, "ab", parts, 4, &n, &e), JP_OK);
    assert_int_equal(n, 2);
    const jp_mp_part *jfr = jp_multipart_find(parts, n, "jfr");
    assert_non_null(jfr);
    assert_int_equal(jfr->len, 5);
    assert_memory_equal(jfr->data, "FLR\r\n", 5);
    const jp_mp_part *labels = jp_multipart_find(parts, n, "labels");
    assert_non_null(labels);
    assert_int_equal(labels->len, 0);
    assert_int_equal(labels->ctype_len, 22);
    assert_int_equal(
        jp_multipart_parse((const uint8_t *)body, sizeof body - 1, "ab", parts, 1, &n, &e),
        JP_ERR_LIMIT);
    assert_int_equal(jp_multipart_parse((const uint8_t *)body, 60, "ab", parts, 4, &n, &e),
                     JP_ERR_FORMAT);
    assert_int_equal(
        jp_multipart_parse((const uint8_t *)body, sizeof body - 1, "zz", parts, 4, &n, &e),
        JP_ERR_FORMAT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pb_reader),
        cmocka_unit_test(test_pb_writer),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_frame_text),
        cmocka_unit_test(test_sample_types),
        cmocka_unit_test(test_otlp_round_trip),
        cmocka_unit_test(test_otlp_jfrconv_fixtures),
        cmocka_unit_test(test_otlp_agent_fixture),
        cmocka_unit_test(test_otlp_identity_and_shapes),
        cmocka_unit_test(test_otlp_refusals),
        cmocka_unit_test(test_pprof_read_back),
        cmocka_unit_test(test_pyroscope_name),
        cmocka_unit_test(test_multipart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
