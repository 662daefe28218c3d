/* Unit tests of src/base: errors, hashing and maps, string buffers, time parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/strbuf.h"
#include "base/timeutil.h"
#include "base/xalloc.h"

static void test_error_set_and_prefix(void **state)
{
    (void)state;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_error_set(&e, JP_ERR_FORMAT, "chunk %d @0x%x: bad", 3, 0x1a2b),
                     JP_ERR_FORMAT);
    jp_error_prefix(&e, "%s: ", "app.jfr");
    assert_string_equal(e.msg, "app.jfr: chunk 3 @0x1a2b: bad");
    assert_string_equal(jp_strerror(JP_ERR_TRUNCATED), "truncated input");
    assert_string_equal(jp_strerror((jp_err)999), "unknown error");
}

static void test_u64map_grows_and_keeps_all_keys(void **state)
{
    (void)state;
    jp_u64map m;
    jp_u64map_init(&m);
    for (uint64_t i = 0; i < 100000; i++)
        jp_u64map_put(&m, i * 7919u, i);
    jp_u64map_put(&m, UINT64_MAX, 42);
    jp_u64map_put(&m, 0, 43);
    for (uint64_t i = 1; i < 100000; i++) {
        uint64_t v = 0;
        assert_true(jp_u64map_get(&m, i * 7919u, &v));
        assert_int_equal(v, i);
    }
    uint64_t v;
    assert_true(jp_u64map_get(&m, UINT64_MAX, &v));
    assert_int_equal(v, 42);
    assert_true(jp_u64map_get(&m, 0, &v));
    assert_int_equal(v, 43);
    assert_false(jp_u64map_get(&m, 3, &v));
    jp_u64map_cleanup(&m);
}

static void test_hash_is_stable(void **state)
{
    (void)state;
    /* The stack id must not change between builds or machines. */
    assert_true(jp_hash_bytes("java.lang.Thread.run", 20) ==
                jp_hash_bytes("java.lang.Thread.run", 20));
    assert_true(jp_hash_bytes("a", 1) != jp_hash_bytes("b", 1));
    assert_true(jp_hash_combine(1, 2) != jp_hash_combine(2, 1));
    /* the same number on every machine, whatever its byte order: stores and
     * agents of different architectures share these ids (the value is the
     * one x86-64 and arm64 always gave) */
    assert_true(jp_hash_bytes("java.lang.Thread.run", 20) == 0x12bb77c92ef4fc9dULL);
}

static void test_strbuf_cap(void **state)
{
    (void)state;
    jp_strbuf b;
    jp_strbuf_init(&b, 8);
    assert_int_equal(jp_strbuf_puts(&b, "abcd"), JP_OK);
    assert_int_equal(jp_strbuf_printf(&b, "%d", 123), JP_OK);
    assert_int_equal(jp_strbuf_puts(&b, "xyz"), JP_ERR_LIMIT);
    assert_string_equal(jp_strbuf_str(&b), "abcd123");
    jp_strbuf_cleanup(&b);
}

static void test_time_parsing(void **state)
{
    (void)state;
    int64_t ns;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_rfc3339_parse("1970-01-01T00:00:01Z", &ns, &e), JP_OK);
    assert_int_equal(ns, 1000000000LL);
    assert_int_equal(jp_rfc3339_parse("2026-11-21T10:00:00.5+01:00", &ns, &e), JP_OK);
    assert_int_equal(ns, 1795251600500000000LL);
    assert_int_not_equal(jp_rfc3339_parse("2026-13-01T00:00:00Z", &ns, &e), JP_OK);
    assert_int_equal(jp_duration_parse("250ms", &ns, &e), JP_OK);
    assert_int_equal(ns, 250000000LL);
    assert_int_equal(jp_duration_parse("15m", &ns, &e), JP_OK);
    assert_int_equal(ns, 900000000000LL);
    assert_int_not_equal(jp_duration_parse("5 parsecs", &ns, &e), JP_OK);
    jp_timespec_arg t;
    assert_int_equal(jp_timespec_parse("-10s", &t, &e), JP_OK);
    assert_int_equal(jp_timespec_resolve(&t, 100, 20000000000LL), 10000000000LL);
    assert_int_equal(jp_timespec_parse("+2s", &t, &e), JP_OK);
    assert_int_equal(jp_timespec_resolve(&t, 5, 0), 2000000005LL);
    char buf[40];
    jp_rfc3339_format(1795251600500000000LL, buf, sizeof buf);
    assert_string_equal(buf, "2026-11-21T09:00:00.500Z");
}

/* The child's side of test_heap_huge: 77 when it cannot say. */
static int heap_huge_child(void)
{
    if (!jp_heap_tune(JP_HEAP_HUGE)) {
        printf("SKIP: test_heap_huge: the heap is not glibc's (valgrind or a sanitizer)\n");
        fflush(stdout);
        return 77;
    }
    const size_t size = 16 << 20, page = 4096;
    char *p = jp_xmalloc(size);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    for (size_t i = 0; i < size; i += page)
        p[i] = 1;
    getrusage(RUSAGE_SELF, &after);
    long faults = after.ru_minflt - before.ru_minflt;
    printf("test_heap_huge: %ld page faults for %zu pages\n", faults, size / page);
    fflush(stdout);
    free(p);
    return faults <= (long)(size / page / 4) ? 0 : 1;
}

/* jprof-top's reads touch a few MB of fresh memory once, and a page costs
 * 14-60 us to fault in on some VMs: JP_HEAP_HUGE must give that memory in
 * 2 MiB pages (in a child: the tuning is for the whole process). */
static void test_heap_huge(void **state)
{
    (void)state;
    char mode[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = '\0';
        fclose(f);
    }
    if (!strstr(mode, "[madvise]") && !strstr(mode, "[always]")) {
        printf("SKIP: test_heap_huge: this kernel gives no transparent huge pages (%s)\n",
               mode[0] ? "never" : "no /sys/kernel/mm/transparent_hugepage");
        skip();
    }
    fflush(stdout);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(heap_huge_child());
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) == 77)
        skip();
    assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_set_and_prefix),
        cmocka_unit_test(test_u64map_grows_and_keeps_all_keys),
        cmocka_unit_test(test_hash_is_stable),
        cmocka_unit_test(test_strbuf_cap),
        cmocka_unit_test(test_time_parsing),
        cmocka_unit_test(test_heap_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
