/* Unit tests of the async-profiler engine (src/jvm/engine_asprof.c) as
 * jprof-agent uses it: which async-profiler a maps line shows (ours,
 * someone else's, none) and the agent arguments of a session. The engine
 * itself needs a real libasyncProfiler.so and a JVM: see
 * tests/integration/test_agent_asprof.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "jvm/engine.h"
#include "model/profile.h"

#define OURS "/tmp/jprof/libasyncProfiler-jprof-42.so"
#define MAPS "7f70b0e6f000-7f70b0e75000 r--p 00000000 fe:00 10952740                   "

/* A window of kinds with the agent's defaults and this cpu interval. */
static jp_err start_args(uint32_t kinds, int64_t cpu_interval_ns, const char *file, const char *log,
                         char *buf, size_t len, jp_error *err)
{
    jvm_engine_window w;
    jvm_engine_window_init(&w);
    w.kinds = kinds;
    w.cpu_interval_ns = cpu_interval_ns;
    return jvm_asprof_start_args(&w, file, log, buf, len, err);
}

static void classify_ours_and_deleted(void **state)
{
    (void)state;
    assert_int_equal(jvm_asprof_classify_line(MAPS OURS "\n", OURS), JVM_ASPROF_OURS);
    /* after a clean exit the copy is deleted but stays mapped */
    assert_int_equal(jvm_asprof_classify_line(MAPS OURS " (deleted)\n", OURS), JVM_ASPROF_OURS);
}

static void classify_foreign(void **state)
{
    (void)state;
    /* another JVM's copy (other nspid), a user's install, jprof-top's copy */
    assert_int_equal(
        jvm_asprof_classify_line(MAPS "/tmp/jprof/libasyncProfiler-jprof-43.so\n", OURS),
        JVM_ASPROF_FOREIGN);
    assert_int_equal(
        jvm_asprof_classify_line(MAPS "/opt/async-profiler/lib/libasyncProfiler.so\n", OURS),
        JVM_ASPROF_FOREIGN);
    assert_int_equal(jvm_asprof_classify_line(MAPS "/tmp/jprof-asprof.so (deleted)\n", OURS),
                     JVM_ASPROF_FOREIGN);
    /* a path that only starts like ours is not ours */
    assert_int_equal(jvm_asprof_classify_line(MAPS OURS ".bak\n", OURS), JVM_ASPROF_FOREIGN);
}

static void classify_none(void **state)
{
    (void)state;
    assert_int_equal(
        jvm_asprof_classify_line(MAPS "/usr/lib/jvm/java-17/lib/server/libjvm.so\n", OURS),
        JVM_ASPROF_NONE);
    assert_int_equal(jvm_asprof_classify_line("7f70b0e6f000-7f70b0e75000 rw-p 0 0 0\n", OURS),
                     JVM_ASPROF_NONE);
    assert_int_equal(jvm_asprof_classify_line(MAPS "[vdso]\n", OURS), JVM_ASPROF_NONE);
}

static void start_args_by_kind(void **state)
{
    (void)state;
    char buf[512];
    uint32_t all = 1u << JP_KIND_CPU | 1u << JP_KIND_ALLOC | 1u << JP_KIND_LOCK;
    assert_int_equal(
        start_args(all, 50000000, "/tmp/jprof/a.jfr", "/tmp/jprof/a.log", buf, sizeof buf, NULL),
        JP_OK);
    assert_string_equal(
        buf, "start,event=cpu,interval=50000000,alloc=512k,lock=1ms,jfr,file=/tmp/jprof/a.jfr,"
             "log=/tmp/jprof/a.log,quiet");
    /* wall without cpu: no event=, so async-profiler adds no cpu sampling */
    assert_int_equal(start_args(1u << JP_KIND_WALL, 0, "/f.jfr", NULL, buf, sizeof buf, NULL),
                     JP_OK);
    assert_string_equal(buf, "start,wall=20ms,jfr,file=/f.jfr,quiet");
    /* park alone is recorded by the lock mode */
    assert_int_equal(start_args(1u << JP_KIND_PARK, 0, "/f.jfr", NULL, buf, sizeof buf, NULL),
                     JP_OK);
    assert_string_equal(buf, "start,lock=1ms,jfr,file=/f.jfr,quiet");
    /* no interval given: async-profiler keeps its own */
    assert_int_equal(start_args(1u << JP_KIND_CPU, 0, "/f.jfr", NULL, buf, sizeof buf, NULL),
                     JP_OK);
    assert_string_equal(buf, "start,event=cpu,jfr,file=/f.jfr,quiet");
}

static void start_args_refused(void **state)
{
    (void)state;
    char buf[512];
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(start_args(0, 0, "/f.jfr", NULL, buf, sizeof buf, &e), JP_ERR_USAGE);
    /* a comma would split the argument list */
    assert_int_equal(start_args(1u << JP_KIND_CPU, 0, "/tmp/a,b.jfr", NULL, buf, sizeof buf, &e),
                     JP_ERR_USAGE);
    assert_non_null(strstr(e.msg, "comma"));
    char small[24];
    assert_int_equal(start_args(1u << JP_KIND_CPU, 0, "/f.jfr", NULL, small, sizeof small, &e),
                     JP_ERR_USAGE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classify_ours_and_deleted),
        cmocka_unit_test(classify_foreign),
        cmocka_unit_test(classify_none),
        cmocka_unit_test(start_args_by_kind),
        cmocka_unit_test(start_args_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
