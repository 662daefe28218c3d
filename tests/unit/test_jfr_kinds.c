/* Unit tests of the newer kinds and the parallel reader: --state parsing,
 * malloc/free pairing (order, re-use of an address, unknown frees, the tail
 * rule, chunk by chunk), event counts per kind of the async-profiler fixtures,
 * the same profile from every number of jobs, and where the parallel reader
 * guesses that events start. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/failinj.h"
#include "jfr/agg.h"
#include "jfr/chunk.h"
#include "jfr/jfr.h"
#include "jfr/leak.h"
#include "jfr/meta.h"
#include "jfr/split.h"
#include "jfr_test_util.h"

static void test_states_parse(void **state)
{
    (void)state;
    jfr_options o;
    jfr_options_init(&o);
    jp_error err;
    jp_error_init(&err);
    assert_true(jfr_states_parse(&o, "runnable, State_Sleeping,STATE_DEFAULT", &err));
    assert_int_equal(o.nstates, 3);
    assert_string_equal(o.states[0], "STATE_RUNNABLE");
    assert_string_equal(o.states[1], "STATE_SLEEPING");
    assert_string_equal(o.states[2], "STATE_DEFAULT");
    assert_false(jfr_states_parse(&o, "", &err));
    assert_false(jfr_states_parse(&o, "RUNNABLE,,SLEEPING", &err));
    assert_false(jfr_states_parse(&o, "A,B,C,D,E,F,G,H,I", &err));
    assert_false(jfr_states_parse(&o, "AN_EXTREMELY_LONG_THREAD_STATE_NAME", &err));
    assert_non_null(strstr(err.msg, "AN_EXTREMELY"));
}

/* One stack per malloc so the profile tells which ones leaked. */
static uint32_t stack_named(jp_profile *p, const char *name)
{
    uint32_t f = jp_profile_frame(p, name, strlen(name), JP_FRAME_NATIVE);
    return jp_profile_stack(p, &f, 1, false);
}

static void test_leak_pairing(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    uint32_t a = stack_named(p, "a"), b = stack_named(p, "b"), c = stack_named(p, "c"),
             d = stack_named(p, "d"), e = stack_named(p, "e");
    jfr_leak l;
    jfr_leak_init(&l);
    jfr_leak_chunk k;
    jfr_leak_chunk_init(&k);
    /* File order is not time order: the free of 0x10 comes first in the
     * file but after its malloc in time. */
    jfr_leak_chunk_add(&k, 200, 0x10, 0, 0, JP_NO_THREAD, true);
    jfr_leak_chunk_add(&k, 100, 0x10, 8, a, JP_NO_THREAD, false);
    /* 0x20 is malloc'ed twice: the second one replaces the first. */
    jfr_leak_chunk_add(&k, 110, 0x20, 16, b, JP_NO_THREAD, false);
    jfr_leak_chunk_add(&k, 120, 0x20, 32, c, JP_NO_THREAD, false);
    /* A free of an address never seen is no error. */
    jfr_leak_chunk_add(&k, 130, 0x99, 0, 0, JP_NO_THREAD, true);
    jfr_leak_chunk_reduce(&k);
    jfr_leak_apply(&l, &k, NULL, NULL);
    jfr_leak_chunk_cleanup(&k);
    /* Chunk 2: frees 0x20 of chunk 1, leaks 0x30 (old) and 0x40 (young). */
    jfr_leak_chunk_init(&k);
    jfr_leak_chunk_add(&k, 300, 0x20, 0, 0, JP_NO_THREAD, true);
    jfr_leak_chunk_add(&k, 150, 0x30, 64, d, JP_NO_THREAD, false);
    jfr_leak_chunk_add(&k, 1000, 0x40, 128, e, JP_NO_THREAD, false);
    jfr_leak_chunk_reduce(&k);
    jfr_leak_apply(&l, &k, NULL, NULL);
    jfr_leak_chunk_cleanup(&k);
    /* Span 100..1000: tail 0.1 cuts at 910, so only d leaks. */
    assert_int_equal(jfr_leak_finish(&l, p, 0.1), 1);
    char *got = ut_collapsed(p, JP_KIND_NATIVEMEM);
    assert_string_equal(got, "d 1 64\n");
    free(got);
    /* Tail 0: everything still alive (a fresh profile, its stacks made in
     * the same order so the indexes the leaks hold mean the same). */
    jp_profile_free(p);
    p = jp_profile_new();
    const char *const names[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(stack_named(p, names[i]), i);
    assert_int_equal(jfr_leak_finish(&l, p, 0), 2);
    got = ut_collapsed(p, JP_KIND_NATIVEMEM);
    assert_string_equal(got, "d 1 64\ne 1 128\n");
    free(got);
    jfr_leak_cleanup(&l);
    jp_profile_free(p);
}

static jp_profile *read_fixture(const char *name, const jfr_options *opt)
{
    char path[1024];
    jp_profile *p = jp_profile_new();
    jfr_report rep;
    jfr_report_init(&rep);
    if (access(ut_fixture(name, path, sizeof path), R_OK) != 0)
        fail_msg("fixture %s not readable", path);
    assert_int_equal(jfr_read_file(path, opt, p, &rep), JP_OK);
    for (uint32_t w = 0; w < rep.nwarnings; w++)
        assert_null(strstr(rep.warnings[w], "missing"));
    return p;
}

/* Event counts from `jfr summary` and the thread states `jfr print` shows
 * (tests/fixtures/jfr/README.md). */
static void test_fixture_kinds(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        uint64_t n[JP_KIND_COUNT];
    } cases[] = {
        {"asprof2-cpu-wall.jfr", {[JP_KIND_CPU] = 776, [JP_KIND_WALL] = 1316 + 5116}},
        {"asprof-nativemem.jfr", {[JP_KIND_NATIVEMEM] = 1361}},
        {"asprof-live.jfr", {[JP_KIND_LIVE] = 309, [JP_KIND_ALLOC] = 2147}},
        {"asprof-nativelock.jfr", {[JP_KIND_NATIVELOCK] = 161}},
        {"asprof-all.jfr",
         {[JP_KIND_CPU] = 328,
          [JP_KIND_NATIVEMEM] = 1409,
          [JP_KIND_LIVE] = 56,
          [JP_KIND_ALLOC] = 56,
          [JP_KIND_NATIVELOCK] = 36}},
        /* async-profiler 4.x cpu samples are all STATE_DEFAULT: still cpu. */
        {"asprof-cpu-alloc-lock.jfr",
         {[JP_KIND_CPU] = 991,
          [JP_KIND_ALLOC] = 3004,
          [JP_KIND_LOCK] = 913,
          [JP_KIND_PARK] = 1008}},
    };
    jfr_options opt;
    jfr_options_init(&opt);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        jp_profile *p = read_fixture(cases[i].file, &opt);
        for (int k = 0; k < JP_KIND_COUNT; k++) {
            if (p->kinds[k].events != cases[i].n[k])
                fail_msg("%s: %s has %llu events, want %llu", cases[i].file,
                         jp_kind_name((jp_kind)k), (unsigned long long)p->kinds[k].events,
                         (unsigned long long)cases[i].n[k]);
        }
        jp_profile_free(p);
    }
    /* The mixed 2.x file: cpu every 10 ms, wall every 20 ms; --state on both. */
    jp_profile *p = read_fixture("asprof2-cpu-wall.jfr", &opt);
    assert_true(p->kinds[JP_KIND_CPU].period_ns == 10000000);
    assert_true(p->kinds[JP_KIND_WALL].period_ns == 20000000);
    assert_true(p->kinds[JP_KIND_WALL].value == 6432ULL * 20000000);
    jp_profile_free(p);
    jp_error err;
    assert_true(jfr_states_parse(&opt, "RUNNABLE", &err));
    p = read_fixture("asprof2-cpu-wall.jfr", &opt);
    assert_int_equal(p->kinds[JP_KIND_WALL].events, 1316);
    assert_int_equal(p->kinds[JP_KIND_CPU].events, 0);
    jp_profile_free(p);
    assert_true(jfr_states_parse(&opt, "default,sleeping", &err));
    p = read_fixture("asprof2-cpu-wall.jfr", &opt);
    assert_int_equal(p->kinds[JP_KIND_WALL].events, 5116);
    assert_int_equal(p->kinds[JP_KIND_CPU].events, 776);
    jp_profile_free(p);
}

/* A JFR varint (LEB128, the 9th byte whole) at p; 0 when it runs past end. */
static uint64_t ut_varint(const uint8_t *p, const uint8_t *end)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 9 && p + i < end; i++) {
        if (i == 8)
            return v | (uint64_t)p[i] << 56;
        v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
        if (!(p[i] & 0x80))
            return v;
    }
    return 0;
}

/* The bytes of the one-chunk fixture (caller frees), and its header's
 * big-endian fields. */
static uint8_t *one_chunk_fixture(size_t *len)
{
    char path[1024];
    FILE *f = fopen(ut_fixture("asprof-cpu-alloc-lock.jfr", path, sizeof path), "rb");
    assert_non_null(f);
    size_t cap = 1 << 20;
    uint8_t *data = malloc(cap);
    assert_non_null(data);
    *len = fread(data, 1, cap, f);
    fclose(f);
    assert_true(*len > 68 && *len < cap);
    return data;
}

/* Writes data to dir (a mkdtemp template, made here)/in.jfr, named in path. */
static void write_temp(char *dir, char *path, size_t cap, const uint8_t *data, size_t len)
{
    assert_non_null(mkdtemp(dir));
    snprintf(path, cap, "%s/in.jfr", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static uint64_t be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

/* A file read on threads whose first piece ends exactly where an event
 * ends: no bytes are carried into the next piece, and the carry buffer,
 * never used before, was padded through a NULL pointer (SIGSEGV; a JDK 25
 * recording in a CI run had such an event boundary 256 KiB into its
 * chunk). Pieces are cut at every such boundary here; the profile must be
 * the one-thread one. */
static void test_piece_ends_on_event(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = one_chunk_fixture(&len);
    assert_true(be64(data + 8) == len); /* one chunk */
    jfr_options opt;
    jfr_options_init(&opt);
    jp_profile *p = read_fixture("asprof-cpu-alloc-lock.jfr", &opt);
    char *want = ut_collapsed(p, JP_KIND_ALLOC);
    jp_profile_free(p);
    size_t tried = 0;
    for (size_t at = 68; at < len && tried < 40;) {
        uint64_t n = ut_varint(data + at, data + len);
        assert_true(n > 0 && n <= len - at);
        at += (size_t)n;
        size_t block = at - 68;
        if (block < 512 || 2 * block > len - 68 || at % 7)
            continue;
        opt.jobs = 2;
        opt.block = (uint32_t)block;
        p = read_fixture("asprof-cpu-alloc-lock.jfr", &opt);
        char *got = ut_collapsed(p, JP_KIND_ALLOC);
        assert_string_equal(got, want);
        free(got);
        jp_profile_free(p);
        tried++;
    }
    assert_true(tried >= 10);
    free(want);
    free(data);
}

/* jfr_scan_event, from a few kB around an offset alone, guesses where the
 * next event starts: on a real recording each guess is an event's start,
 * and there is a guess at nearly every offset (else a chunk is not cut into
 * spans for the threads and a read with --jobs gets one core); bytes that
 * are no events give none. */
static void test_scan_event(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = one_chunk_fixture(&len);
    uint64_t size = be64(data + 8), cp = be64(data + 16), meta = be64(data + 24);
    /* async-profiler writes the metadata first and the pools last. */
    assert_true(size == len && meta == 68 && cp < len);
    uint64_t first = meta + ut_varint(data + meta, data + len);
    static bool starts[1 << 20];
    memset(starts, 0, sizeof starts);
    for (size_t at = 68; at < len;) {
        starts[at] = true;
        uint64_t n = ut_varint(data + at, data + len);
        assert_true(n > 0 && n <= len - at);
        at += (size_t)n;
    }
    jfr_meta *m = jfr_meta_new();
    jp_error err;
    jp_error_init(&err);
    jfr_where w = {.base = data, .name = "t.jfr", .chunk = 1, .err = &err};
    assert_int_equal(jfr_meta_parse(m, data + meta, data + len, &w), JP_OK);
    jfr_src src = {.mem = data, .fd = -1, .len = len, .name = "t.jfr"};
    jfr_scan sc = {0};
    jfr_scan_init(&sc, m);
    size_t tries = 0, found = 0;
    for (uint64_t lo = first; lo + 2 * JFR_SCAN_BYTES < cp; lo += 997, tries++) {
        uint64_t e = jfr_scan_event(&sc, &src, lo, len);
        if (!e)
            continue;
        assert_true(e >= lo && e < len);
        assert_true(starts[e]);
        found++;
    }
    assert_true(tries >= 100);
    assert_true(found * 20 >= tries * 19);
    /* Zeros (a size of 0) and a run of one byte repeated (sizes that never
     * meet a type the metadata knows, or that leave the range) are no
     * events. */
    static uint8_t junk[3 * JFR_SCAN_BYTES];
    jfr_src js = {.mem = junk, .fd = -1, .len = sizeof junk, .name = "junk"};
    memset(junk, 0, sizeof junk);
    assert_int_equal(jfr_scan_event(&sc, &js, 100, sizeof junk), 0);
    memset(junk, 0x7f, sizeof junk);
    assert_int_equal(jfr_scan_event(&sc, &js, 100, sizeof junk), 0);
    jfr_scan_cleanup(&sc);
    jfr_meta_unref(m);
    free(data);
}

/* Every fixture in one buffer: many chunks of both dialects. */
static uint8_t *all_fixtures(size_t *len)
{
    static const char *const names[] = {
        "asprof-two-chunks.jfr", "asprof-all.jfr",  "asprof2-cpu-wall.jfr",
        "asprof-jdk25.jfr",      "asprof-live.jfr", "asprof-nativemem.jfr",
    };
    uint8_t *buf = NULL;
    *len = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[1024];
        FILE *f = fopen(ut_fixture(names[i], path, sizeof path), "rb");
        assert_non_null(f);
        uint8_t chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
            buf = realloc(buf, *len + n);
            memcpy(buf + *len, chunk, n);
            *len += n;
        }
        fclose(f);
    }
    return buf;
}

/* Reads all the fixtures (buf, and the same bytes as the file at path)
 * with several job counts and piece sizes and checks that each read gives
 * the first one's profile and report; *want_rep gets that report. With
 * `threads`, every event is a cell of its own thread; without, most go to
 * the lanes (agg.h), which the workers' accumulators carry from chunk to
 * chunk. */
static void jobs_compare(const uint8_t *buf, size_t len, const char *path, bool threads,
                         jfr_report *want_rep_out)
{
    char *want[JP_KIND_COUNT];
    jfr_report want_rep;
    /* Small pieces split every chunk's events between the threads; small
     * steps make a file's events cross steps and pieces. */
    static const int jobs[] = {1, 2, 4, 0, 2, 3, 1, 1, 1, 2, 3, 1, 1, 2, 3};
    static const uint32_t blocks[] = {0, 0, 4096, 0, 64, 1, 0, 100, 1, 0, 333, 0, 100, 64, 333};
    static const bool file[] = {false, false, false, false, false, false, true, true,
                                true,  true,  true,  true,  true,  true,  true};
    /* the last four map the file's events a window at a time (src.h) */
    static const int reads[] = {
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, JFR_READ_MAP, JFR_READ_MAP, JFR_READ_MAP, JFR_READ_MAP};
    for (size_t j = 0; j < sizeof jobs / sizeof jobs[0]; j++) {
        jfr_options opt;
        jfr_options_init(&opt);
        opt.threads = threads;
        opt.leak = true;
        opt.jobs = jobs[j];
        opt.block = blocks[j];
        opt.read = reads[j];
        jp_profile *p = jp_profile_new();
        jfr_report rep;
        jfr_report_init(&rep);
        assert_int_equal(file[j] ? jfr_read_file(path, &opt, p, &rep)
                                 : jfr_read_buffer(buf, len, path, &opt, p, &rep),
                         JP_OK);
        assert_int_equal(rep.chunks_read, 7);
        for (int k = 0; k < JP_KIND_COUNT; k++) {
            char *got = ut_collapsed(p, (jp_kind)k);
            if (j == 0) {
                want[k] = got;
                continue;
            }
            assert_string_equal(got, want[k]);
            free(got);
        }
        if (j == 0) {
            want_rep = rep;
        } else {
            assert_int_equal(rep.events_read, want_rep.events_read);
            assert_int_equal(rep.events_used, want_rep.events_used);
            assert_int_equal(rep.nwarnings, want_rep.nwarnings);
            for (uint32_t w = 0; w < rep.nwarnings; w++)
                assert_string_equal(rep.warnings[w], want_rep.warnings[w]);
        }
        jp_profile_free(p);
    }
    for (int k = 0; k < JP_KIND_COUNT; k++)
        free(want[k]);
    *want_rep_out = want_rep;
}

static void test_jobs_same_profile(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = all_fixtures(&len);
    /* The same bytes as a file, read in steps. */
    char dir[] = "/tmp/jprof-kinds.XXXXXX", path[64];
    write_temp(dir, path, sizeof path, buf, len);
    /* With and without threads: the lanes count only events without. */
    jfr_report want_rep;
    jobs_compare(buf, len, path, false, &want_rep);
    jobs_compare(buf, len, path, true, &want_rep);
    /* Damage in the middle: the same partial answer and message from every
     * job count, from memory and from a file. */
    size_t cut = len - 100000;
    assert_int_equal(truncate(path, (off_t)cut), 0);
    char *partial = NULL;
    char msg[sizeof want_rep.error.msg];
    for (size_t j = 0; j < 5; j++) {
        jfr_options opt;
        jfr_options_init(&opt);
        opt.jobs = j % 2 ? 4 : 1;
        opt.block = j == 2 ? 1000 : 0;
        jp_profile *p = jp_profile_new();
        jfr_report rep;
        jfr_report_init(&rep);
        assert_int_not_equal(j >= 3 ? jfr_read_file(path, &opt, p, &rep)
                                    : jfr_read_buffer(buf, cut, path, &opt, p, &rep),
                             JP_OK);
        assert_true(rep.partial);
        char *got = ut_collapsed(p, JP_KIND_CPU);
        if (!j) {
            partial = got;
            snprintf(msg, sizeof msg, "%s", rep.error.msg);
        } else {
            assert_string_equal(got, partial);
            assert_string_equal(rep.error.msg, msg);
            free(got);
        }
        jp_profile_free(p);
    }
    free(partial);
    free(buf);
    unlink(path);
    rmdir(dir);
}

/* An event whose size reads as the largest 64-bit number, in the middle of
 * a chunk: every way of reading it (memory, file steps, threads) stops
 * there with the serial message and nothing past the end of a buffer is
 * even computed (a fuzzer found a pointer that overflowed, with file steps
 * on threads). */
/* A file cut shorter while its events are mapped: the mapped pages past
 * its new end fault (SIGBUS). Injected: "jfr map cut" maps a window past
 * the end of the file, where every read faults for real. A serial walk
 * fails the read as a pread of the cut file does; a thread's fault fails
 * only its spans, and the serial walk the reader then makes (mapping
 * anew, now whole) gives the profile of a read without the fault. A window
 * that cannot be mapped ("jfr map fail") fails the read with the reason. */
static void test_map_cut(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = all_fixtures(&len);
    char dir[] = "/tmp/jprof-mapcut.XXXXXX", path[64];
    write_temp(dir, path, sizeof path, buf, len);
    char *want = NULL;
    for (int way = 0; way < 5; way++) {
        jfr_options opt;
        jfr_options_init(&opt);
        opt.read = way ? JFR_READ_MAP : JFR_READ_PREAD;
        opt.jobs = way == 2 || way == 3 ? way : 1;
        opt.block = way == 2 || way == 3 ? 100 : 0;
        jp_profile *p = jp_profile_new();
        jfr_report rep;
        jfr_report_init(&rep);
        if (way)
            jp_fail_set(way == 2 || way == 3 ? 3 : 1, way == 4 ? "jfr map fail" : "jfr map cut");
        jp_err rc = jfr_read_file(path, &opt, p, &rep);
        bool fired = jp_fail_fired();
        jp_fail_set(0, NULL);
        char *got = ut_collapsed(p, JP_KIND_CPU);
        if (way == 0) {
            assert_int_equal(rc, JP_OK);
            want = got;
        } else if (way == 1) {
            /* small chunks: walked serially, and the first window faults */
            assert_true(fired);
            assert_int_equal(rc, JP_ERR_TRUNCATED);
            assert_true(rep.partial);
            assert_non_null(strstr(rep.error.msg, "shorter than it was"));
            assert_non_null(strstr(rep.error.msg, "chunk 1"));
            free(got);
        } else if (way == 4) {
            assert_true(fired);
            assert_int_equal(rc, JP_ERR_IO);
            assert_true(rep.partial);
            assert_non_null(strstr(rep.error.msg, "cannot map"));
            free(got);
        } else {
            assert_true(fired);
            assert_int_equal(rc, JP_OK);
            assert_string_equal(got, want);
            free(got);
        }
        jp_profile_free(p);
    }
    free(want);
    unlink(path);
    rmdir(dir);
    free(buf);
}

/* A fault that is not a window's still ends the process: the handler the
 * reader sets passes it on. In a child: a mapped read, then a read of a
 * mapping past the end of a file, outside any reader. */
static void test_map_other_fault(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = all_fixtures(&len);
    char dir[] = "/tmp/jprof-mapbus.XXXXXX", path[64];
    write_temp(dir, path, sizeof path, buf, len);
    free(buf);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        signal(SIGBUS, SIG_DFL); /* not the test harness's */
        jfr_options opt;
        jfr_options_init(&opt);
        opt.read = JFR_READ_MAP;
        jp_profile *p = jp_profile_new();
        jfr_report rep;
        jfr_report_init(&rep);
        if (jfr_read_file(path, &opt, p, &rep) != JP_OK)
            _exit(3);
        int fd = open(path, O_RDONLY);
        long page = sysconf(_SC_PAGESIZE);
        volatile const uint8_t *m = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE, fd,
                                         (off_t)(len / (size_t)page + 2) * page);
        if (m == MAP_FAILED)
            _exit(4);
        (void)m[0]; /* past the end: SIGBUS */
        _exit(5);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGBUS);
    unlink(path);
    rmdir(dir);
}

static void test_huge_event_size(void **state)
{
    (void)state;
    size_t len;
    uint8_t *data = one_chunk_fixture(&len);
    uint64_t meta = be64(data + 24);
    size_t at = (size_t)(meta + ut_varint(data + meta, data + len));
    /* The first event of at least 9 bytes past the middle of the events. */
    for (;;) {
        uint64_t n = ut_varint(data + at, data + len);
        assert_true(n > 0 && n <= len - at);
        if (at > len / 2 && n >= 9)
            break;
        at += (size_t)n;
    }
    memset(data + at, 0xff, 9);
    char dir[] = "/tmp/jprof-huge.XXXXXX", file[64];
    write_temp(dir, file, sizeof file, data, len);
    char msg[sizeof((jfr_report *)0)->error.msg] = "";
    static const struct {
        int jobs;
        uint32_t block;
        bool file;
    } ways[] = {{1, 0, false}, {1, 0, true}, {1, 48, true}, {2, 64, false}, {2, 300, true}};
    for (size_t j = 0; j < sizeof ways / sizeof ways[0]; j++) {
        jfr_options opt;
        jfr_options_init(&opt);
        opt.jobs = ways[j].jobs;
        opt.block = ways[j].block;
        jp_profile *p = jp_profile_new();
        jfr_report rep;
        jfr_report_init(&rep);
        assert_int_equal(ways[j].file ? jfr_read_file(file, &opt, p, &rep)
                                      : jfr_read_buffer(data, len, file, &opt, p, &rep),
                         JP_ERR_FORMAT);
        assert_true(rep.partial);
        assert_non_null(strstr(rep.error.msg, "is impossible here"));
        if (!j)
            snprintf(msg, sizeof msg, "%s", rep.error.msg);
        assert_string_equal(rep.error.msg, msg);
        jp_profile_free(p);
    }
    unlink(file);
    rmdir(dir);
    free(data);
}

/* Merging accumulators of different ranges of stack keys loses nothing:
 * a worker whose lanes were made for the last chunk's range (and got no
 * piece of this one) merged after one that counted this chunk emptied the
 * chunk's lanes, 46 stacks of 113 read from a file of two JVMs' chunks. */
static void test_acc_merge_ranges(void **state)
{
    (void)state;
    jfr_acc dst, now, stale;
    jfr_acc_init(&dst);
    jfr_acc_init(&now);
    jfr_acc_init(&stale);
    jfr_acc_dense(&now, 100, 50);
    jfr_acc_add1(&now, JFR_SLOT_ALLOC, 0, 120, 0, 0, 7);
    jfr_acc_add1(&now, JFR_SLOT_ALLOC, 0, 120, 0, 0, 5);
    jfr_acc_add1(&now, JFR_SLOT_WALL, 1, 149, 0, 2, 3);
    jfr_acc_dense(&stale, 10, 200); /* the last chunk's range */
    jfr_acc_add1(&stale, JFR_SLOT_ALLOC, 0, 15, 0, 0, 9);
    jfr_acc_add1(&stale, JFR_SLOT_ALLOC, 0, 120, 0, 0, 1); /* in both ranges */
    jfr_acc_merge(&dst, &now);
    jfr_acc_merge(&dst, &stale);
    size_t n;
    jfr_agg_cell *c = jfr_acc_sorted(&dst, &n);
    assert_int_equal(n, 3);
    /* sorted by slot, then stack */
    assert_int_equal(c[0].slot, JFR_SLOT_WALL);
    assert_int_equal(c[0].stack, 149);
    assert_int_equal(c[0].state, 2);
    assert_int_equal(c[0].samples, 3);
    assert_int_equal(c[1].slot, JFR_SLOT_ALLOC);
    assert_int_equal(c[1].stack, 15);
    assert_int_equal(c[1].events, 1);
    assert_int_equal(c[1].value, 9);
    assert_int_equal(c[2].stack, 120);
    assert_int_equal(c[2].events, 3);
    assert_int_equal(c[2].samples, 3);
    assert_int_equal(c[2].value, 13);
    free(c);
    jfr_acc_cleanup(&dst);
    jfr_acc_cleanup(&now);
    jfr_acc_cleanup(&stale);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_states_parse),
        cmocka_unit_test(test_leak_pairing),
        cmocka_unit_test(test_fixture_kinds),
        cmocka_unit_test(test_jobs_same_profile),
        cmocka_unit_test(test_piece_ends_on_event),
        cmocka_unit_test(test_acc_merge_ranges),
        cmocka_unit_test(test_scan_event),
        cmocka_unit_test(test_huge_event_size),
        cmocka_unit_test(test_map_cut),
        cmocka_unit_test(test_map_other_fault),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
