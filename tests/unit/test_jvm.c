/* Unit tests of src/jvm pieces that need no live JVM: command-line naming,
 * attach reply parsing, the cleanup registry, the helper's JSON decoding,
 * JFR.check parsing, /proc reading of this very process and the engine
 * interface's contract before anything is sent to a JVM. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "jvm/attach.h"
#include "jvm/cleanup.h"
#include "jvm/engine.h"
#include "jvm/jfc.h"
#include "jvm/proc.h"
#include "jvm/procstat.h"
#include "jvm/recorder.h"
#include "jvm/targetfs.h"
#include "jvm/snapshot_take.h"
#include "model/analyze.h"
#include "model/profile.h"

static void main_of(const char *args, size_t len, const char *want)
{
    char out[256];
    jvm_cmdline_main(args, len, out, sizeof out);
    assert_string_equal(out, want);
}

static void test_cmdline_main(void **state)
{
    (void)state;
    static const char a[] = "java\0-Xmx1g\0-cp\0/x:/y\0-Dk=v\0com.shop.Main\0arg";
    main_of(a, sizeof a, "com.shop.Main");
    static const char b[] = "/usr/bin/java\0-XX:+UseG1GC\0-jar\0/srv/app.jar\0--port\0";
    main_of(b, sizeof b, "/srv/app.jar");
    static const char c[] = "java\0--module-path\0mods\0-m\0shop/shop.Main";
    main_of(c, sizeof c, "shop/shop.Main");
    static const char d[] = "java\0-version";
    main_of(d, sizeof d, "");
    main_of("java", 0, "");
}

static void test_reply_parse(void **state)
{
    (void)state;
    jvm_reply r;
    char ok[] = "0\nreturn code: 0\n";
    assert_int_equal(jvm_reply_parse(ok, strlen(ok), &r, NULL), JP_OK);
    assert_int_equal(r.code, 0);
    assert_string_equal(r.text, "return code: 0\n");
    jvm_reply_cleanup(&r);
    char neg[] = "-1\nOperation bogus not recognized!";
    assert_int_equal(jvm_reply_parse(neg, strlen(neg), &r, NULL), JP_OK);
    assert_int_equal(r.code, -1);
    jvm_reply_cleanup(&r);
    char bare[] = "0";
    assert_int_equal(jvm_reply_parse(bare, 1, &r, NULL), JP_OK);
    assert_string_equal(r.text, "");
    jvm_reply_cleanup(&r);
    char bad[] = "garbage\n";
    assert_int_equal(jvm_reply_parse(bad, strlen(bad), &r, NULL), JP_ERR_PROTOCOL);
    char huge[] = "99999999999999999999\n";
    assert_int_equal(jvm_reply_parse(huge, strlen(huge), &r, NULL), JP_ERR_PROTOCOL);
}

static int ran[4];
static int order[4], norder;

static void mark(void *arg)
{
    int i = (int)(intptr_t)arg;
    ran[i]++;
    if (norder < 4)
        order[norder++] = i;
}

static void test_cleanup_registry(void **state)
{
    (void)state;
    char path[] = "/tmp/jprof-unit-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    int h1 = jvm_cleanup_register(mark, (void *)1);
    int h2 = jvm_cleanup_register(mark, (void *)2);
    int h3 = jvm_cleanup_register(mark, (void *)3);
    int hf = jvm_cleanup_register_file(path);
    assert_true(h1 > 0 && h2 > h1 && h3 > h2 && hf > h3);
    assert_int_equal(jvm_cleanup_pending(), 4);
    jvm_cleanup_unregister(h2);
    jvm_cleanup_run_all();
    assert_int_equal(jvm_cleanup_pending(), 0);
    assert_int_equal(ran[1], 1);
    assert_int_equal(ran[2], 0);
    assert_int_equal(ran[3], 1);
    assert_int_equal(order[0], 3); /* newest first */
    assert_int_equal(order[1], 1);
    assert_int_not_equal(access(path, F_OK), 0);
    jvm_cleanup_run_all(); /* nothing twice */
    assert_int_equal(ran[1], 1);
    /* the signal-safe variant removes files only */
    fd = mkstemp(path);
    close(fd);
    jvm_cleanup_register_file(path);
    jvm_cleanup_register(mark, (void *)0);
    jvm_cleanup_unlink_files();
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(jvm_cleanup_pending(), 1);
    jvm_cleanup_run_all();
    assert_int_equal(ran[0], 1);
    /* a full table refuses instead of forgetting */
    int n = 0;
    while (jvm_cleanup_register(mark, (void *)0))
        n++;
    assert_int_equal(n, JVM_CLEANUP_SLOTS);
    jvm_cleanup_run_all();
    assert_int_equal(jvm_cleanup_pending(), 0);
    assert_int_equal(ran[0], 1 + JVM_CLEANUP_SLOTS);
}

static void test_helper_json(void **state)
{
    (void)state;
    static const char json[] =
        "{\"format\":1,\"time_ms\":1700000000000,\"uptime_ms\":5000,\"threads\":["
        "{\"id\":11,\"name\":\"a\",\"daemon\":true,\"state\":\"BLOCKED\",\"cpu_ns\":7,"
        "\"blocked_count\":1,\"waited_count\":0,\"blocked_time_ms\":-1,\"waited_time_ms\":-1,"
        "\"wait\":\"enter\",\"lock\":{\"id\":4026531840,\"class\":\"X\",\"depth\":0},"
        "\"lock_owner_id\":12,\"stack\":[{\"c\":\"p.A\",\"m\":\"run\",\"f\":\"A.java\",\"l\":3}],"
        "\"monitors\":[{\"id\":2,\"class\":\"Y\",\"depth\":0}],\"synchronizers\":[]},"
        "{\"id\":12,\"name\":\"b\",\"daemon\":false,\"state\":\"WAITING\",\"cpu_ns\":9,"
        "\"wait\":\"park\",\"lock\":{\"id\":2,\"class\":\"Y\",\"depth\":0},\"lock_owner_id\":11,"
        "\"stack\":[{\"c\":\"q.B\",\"m\":\"park\",\"f\":null,\"l\":-2}],"
        "\"monitors\":[],\"synchronizers\":[{\"id\":4026531840,\"class\":\"X\",\"depth\":-1}]}"
        "],\"deadlocks\":[[11,12]]}";
    jp_snapshot *s = NULL;
    jp_error err;
    jp_error_init(&err);
    assert_int_equal(jvm_helper_json_parse(json, sizeof json - 1, &s, &err), JP_OK);
    assert_string_equal(s->source, "helper");
    assert_int_equal(s->count, 2);
    assert_int_equal(s->taken_ns, 1700000000000LL * 1000000);
    assert_int_equal(s->uptime_ns, 5000LL * 1000000);
    assert_int_equal(s->threads[0].wait_lock.id, 4026531840u);
    assert_string_equal(s->threads[0].wait_owner_name, "b");
    assert_int_equal(s->threads[1].frames[0].line, -2);
    assert_int_equal(s->njvm_deadlocks, 1);
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    assert_int_equal(dl.count, 1);
    assert_true(dl.items[0].jvm_confirmed);
    assert_true(dl.items[0].mixed);
    jp_deadlock_list_cleanup(&dl);
    jp_snapshot_free(s);
    assert_int_equal(jvm_helper_json_parse("{\"format\":2,\"threads\":[]}", 26, &s, &err),
                     JP_ERR_FORMAT);
    assert_int_equal(jvm_helper_json_parse("{", 1, &s, &err), JP_ERR_FORMAT);
    assert_null(s);
}

static void test_jfr_check_lists(void **state)
{
    (void)state;
    const char *t = "Recording 2: name=jprof-10-1 maxage=30s (running)\n"
                    "Recording 3: name=jprof-10-12 (running)\n";
    assert_true(jvm_jfr_check_lists(t, "jprof-10-1"));
    assert_true(jvm_jfr_check_lists(t, "jprof-10-12"));
    assert_false(jvm_jfr_check_lists(t, "jprof-10-2"));
    assert_false(jvm_jfr_check_lists("No available recordings.\n", "jprof-10-1"));
}

static void test_proc_self_is_not_a_jvm(void **state)
{
    (void)state;
    jvm_proc p;
    jp_error err;
    jp_error_init(&err);
    assert_int_equal(jvm_proc_read(getpid(), &p, &err), JP_OK);
    assert_false(p.hotspot);
    assert_int_equal(p.nspid > 0, 1);
    assert_true(p.start_ns > 0);
    assert_true(jvm_proc_alive(&p));
    assert_int_equal(jvm_proc_open(getpid(), &p, &err), JP_ERR_NOT_JVM);
    assert_int_equal(jvm_proc_open(0, &p, &err), JP_ERR_NOT_FOUND);
    /* attach refuses a non-JVM without signalling it */
    jvm_reply r;
    assert_int_equal(jvm_attach_cmd(&p, NULL, "jcmd", "VM.version", NULL, NULL, &r, &err),
                     JP_ERR_NOT_JVM);
    jvm_snap_source src;
    assert_true(jvm_snap_source_parse("thread-print", &src));
    assert_int_equal(src, JVM_SNAP_THREAD_PRINT);
    assert_false(jvm_snap_source_parse("jstack", &src));
}

/* The settings jprof gives JFR: the events of the kinds asked for, the
 * right allocation events for the JDK, and nothing else. */
static char *jfc(uint32_t kinds, int jdk, int64_t period_ns)
{
    jvm_jfc_opts o;
    jvm_jfc_opts_init(&o);
    o.kinds = kinds;
    o.jdk_major = jdk;
    o.cpu_period_ns = period_ns;
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    assert_int_equal(jvm_jfc_build(&o, &b, NULL), JP_OK);
    return jp_strbuf_take(&b);
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_jfc_settings(void **state)
{
    (void)state;
    uint32_t cpu = 1u << JP_KIND_CPU, alloc = 1u << JP_KIND_ALLOC, lock = 1u << JP_KIND_LOCK,
             park = 1u << JP_KIND_PARK;
    char *x = jfc(cpu | alloc | lock, 17, 50 * 1000000LL);
    assert_non_null(strstr(x, "<configuration version=\"2.0\""));
    assert_non_null(strstr(x, "<setting name=\"period\">50 ms</setting>"));
    assert_int_equal(count(x, "jdk.ActiveSetting"), 1); /* the reader needs the period */
    assert_int_equal(count(x, "jdk.ObjectAllocationSample"), 1);
    assert_int_equal(count(x, "TLAB"), 0); /* both would count allocations twice */
    assert_non_null(strstr(x, "<setting name=\"threshold\">10 ms</setting>"));
    assert_int_equal(count(x, "jdk.ThreadPark"), 0);
    assert_int_equal(count(x, "<event "), 7); /* with the three GC events */
    assert_int_equal(count(x, "jdk.GarbageCollection"), 1);
    assert_int_equal(count(x, "jdk.GCPhasePause"), 1);
    assert_int_equal(count(x, "jdk.GCHeapSummary"), 1);
    free(x);
    /* JDK 11 has no allocation sample event: the TLAB pair instead */
    x = jfc(alloc | park, 11, 20 * 1000000LL);
    assert_int_equal(count(x, "jdk.ObjectAllocationInNewTLAB"), 1);
    assert_int_equal(count(x, "jdk.ObjectAllocationOutsideTLAB"), 1);
    assert_int_equal(count(x, "jdk.ObjectAllocationSample"), 0);
    assert_int_equal(count(x, "jdk.ExecutionSample"), 0);
    assert_int_equal(count(x, "jdk.ThreadPark"), 1);
    free(x);
    /* io: the four I/O events, with stacks, at the locks' threshold */
    /* old: the old-object sampler with its allocation sites, no paths to GC roots */
    x = jfc(alloc | (1u << JP_KIND_OLD), 17, 20 * 1000000LL);
    assert_int_equal(count(x, "jdk.OldObjectSample"), 1);
    assert_non_null(strstr(x, "<setting name=\"cutoff\">0 ns</setting>"));
    assert_int_equal(count(x, "<setting name=\"stackTrace\">true</setting>"), 2);
    free(x);
    x = jfc(1u << JP_KIND_IO, 17, 20 * 1000000LL);
    assert_int_equal(count(x, "<event "), 8); /* with jdk.ActiveSetting and GC */
    assert_int_equal(count(x, "jdk.SocketRead"), 1);
    assert_int_equal(count(x, "jdk.SocketWrite"), 1);
    assert_int_equal(count(x, "jdk.FileRead"), 1);
    assert_int_equal(count(x, "jdk.FileWrite"), 1);
    assert_int_equal(count(x, "<setting name=\"threshold\">10 ms</setting>"), 4);
    assert_int_equal(count(x, "<setting name=\"stackTrace\">true</setting>"), 4);
    free(x);
    /* odd periods keep their precision; wall alone is nothing JFR records */
    x = jfc(cpu, 0, 1500000);
    assert_non_null(strstr(x, "1500 us"));
    free(x);
    jvm_jfc_opts o;
    jvm_jfc_opts_init(&o);
    o.kinds = 1u << JP_KIND_WALL;
    jp_strbuf b;
    jp_strbuf_init(&b, 64);
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jvm_jfc_build(&o, &b, &e), JP_ERR_USAGE);
    assert_non_null(strstr(e.msg, "no event kind"));
    o.kinds = cpu;
    o.cpu_period_ns = 0;
    assert_int_equal(jvm_jfc_build(&o, &b, &e), JP_ERR_USAGE);
    jp_strbuf_cleanup(&b);
    /* a buffer too small says so rather than handing JFR half a file */
    o.cpu_period_ns = 20 * 1000000LL;
    jp_strbuf_init(&b, 300);
    assert_int_equal(jvm_jfc_build(&o, &b, &e), JP_ERR_LIMIT);
    jp_strbuf_cleanup(&b);
}

/* A file of ours in a JVM that exited: /proc/PID/root is gone, and in host
 * mode (same root) the file must still go, by its inner name. */
static void test_tfile_remove_after_exit(void **state)
{
    (void)state;
    jvm_proc self;
    memset(&self, 0, sizeof self);
    self.pid = getpid();
    assert_true(jvm_proc_shares_root(&self));
    char inner[] = "/tmp/jprof-unit-XXXXXX";
    int fd = mkstemp(inner);
    assert_true(fd >= 0);
    close(fd);
    jvm_tfile f;
    memset(&f, 0, sizeof f);
    jvm_tfile_at(&self, inner, &f);
    assert_true(f.shared_root);
    /* the process is gone: its /proc entry no longer resolves */
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    snprintf(f.host, sizeof f.host, "/proc/%d/root%s", (int)child, inner);
    f.shared_root = false; /* a container's file went with it: left alone */
    jvm_tfile_remove(&f);
    assert_int_equal(access(inner, F_OK), 0);
    f.shared_root = true;
    jvm_tfile_remove(&f);
    assert_int_not_equal(access(inner, F_OK), 0);
}

static void test_jdk_major(void **state)
{
    (void)state;
    assert_int_equal(jvm_jdk_major("12:\nOpenJDK 64-Bit Server VM version 17.0.21.1+2-1-deb12u1-"
                                   "Debian\nJDK 17.0.21.1\n"),
                     17);
    assert_int_equal(jvm_jdk_major("OpenJDK 64-Bit Server VM version 25.392-b08\nJDK 8.0_392\n"),
                     8);
    assert_int_equal(jvm_jdk_major("OpenJDK 64-Bit Server VM version 25.0.3+9-LTS\nJDK 25.0.3"),
                     25);
    assert_int_equal(jvm_jdk_major("OpenJDK 64-Bit Server VM version 11.0.2+9\n"), 0);
    assert_int_equal(jvm_jdk_major("JDK x\nJDK 0.1\n"), 0);
    assert_int_equal(jvm_jdk_major(""), 0);
    assert_int_equal(jvm_jdk_major(NULL), 0);
}

static jp_err engine_for(const jvm_proc *t, jvm_engine_kind kind, jvm_engine_role role,
                         const char *session, const char *lib, jvm_engine **e)
{
    jvm_engine_opts o;
    jvm_engine_opts_init(&o);
    o.kind = kind;
    o.role = role;
    o.session = session;
    o.asprof_lib = lib;
    jp_error err;
    jp_error_init(&err);
    return jvm_engine_new(t, &o, e, &err);
}

static void test_engine_contract(void **state)
{
    (void)state;
    jvm_proc self;
    jp_error err;
    jp_error_init(&err);
    assert_int_equal(jvm_proc_read(getpid(), &self, &err), JP_OK);
    jvm_engine *e = NULL;
    /* session names end up in file names in the target */
    const char *bad[] = {"agent", "jprof-", "jprof-Agent", "jprof-a/b", "jprof-a b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(engine_for(&self, JVM_ENGINE_JFR, JVM_ENGINE_COLLECTOR, bad[i], NULL, &e),
                         JP_ERR_USAGE);
    assert_null(e);
    assert_int_equal(engine_for(&self, JVM_ENGINE_ASPROF, JVM_ENGINE_COLLECTOR, NULL, NULL, &e),
                     JP_ERR_USAGE);

    assert_int_equal(engine_for(&self, JVM_ENGINE_JFR, JVM_ENGINE_COLLECTOR, NULL, NULL, &e),
                     JP_OK);
    assert_string_equal(jvm_engine_name(e), "jfr");
    assert_int_equal(jvm_engine_kind_of(e), JVM_ENGINE_JFR);
    assert_false(jvm_engine_running(e));
    uint32_t all = (1u << JP_KIND_COUNT) - 1;
    assert_int_equal(jvm_engine_unsupported(e, all), 1u << JP_KIND_WALL | 1u << JP_KIND_NATIVEMEM |
                                                         1u << JP_KIND_LIVE |
                                                         1u << JP_KIND_NATIVELOCK);
    jvm_engine_window w;
    jvm_engine_window_init(&w);
    w.jdk_major = 25;
    assert_true(jvm_engine_records_cputime(e, &w)); /* jprof's settings on JDK 25 */
    w.jdk_major = 17;
    assert_false(jvm_engine_records_cputime(e, &w));
    /* no async-profiler in this process: no conflict; nothing to finish or peek */
    assert_int_equal(jvm_engine_foreign(e, &err), JP_OK);
    jfr_options jo;
    jfr_options_init(&jo);
    jfr_report rep;
    jfr_report_init(&rep);
    jp_profile *p = jp_profile_new();
    bool tail;
    assert_int_equal(jvm_engine_finish(e, &jo, p, &rep, &err), JP_ERR_USAGE);
    assert_int_equal(jvm_engine_peek(e, &jo, p, &rep, &tail, &err), JP_ERR_USAGE);
    int pending = jvm_cleanup_pending();
    jvm_engine_free(e); /* never touched the target: nothing to undo */
    assert_int_equal(jvm_cleanup_pending(), pending);

    assert_int_equal(engine_for(&self, JVM_ENGINE_ASPROF, JVM_ENGINE_VIEWER, NULL,
                                "/nonexistent/libasyncProfiler.so", &e),
                     JP_OK);
    assert_string_equal(jvm_engine_name(e), "async-profiler");
    assert_int_equal(jvm_engine_unsupported(e, all),
                     1u << JP_KIND_CPUTIME | 1u << JP_KIND_IO | 1u << JP_KIND_OLD);
    assert_false(jvm_engine_records_cputime(e, &w));
    assert_int_equal(jvm_engine_foreign(e, &err), JP_OK);
    /* a viewer never finishes a window: it peeks */
    assert_int_equal(jvm_engine_finish(e, &jo, p, &rep, &err), JP_ERR_USAGE);
    jvm_engine_free(e);
    jvm_engine_free(NULL);
    jp_profile_free(p);
}

static void test_engine_asprof_viewer_args(void **state)
{
    (void)state;
    /* jprof-top's window: wall every 50 ms, async-profiler's own alloc and lock */
    jvm_engine_window w;
    jvm_engine_window_init(&w);
    w.kinds |= 1u << JP_KIND_WALL;
    w.wall_interval_ns = 50 * 1000000LL;
    w.alloc_interval_bytes = -1;
    w.lock_threshold_ns = -1;
    char buf[256];
    assert_int_equal(jvm_asprof_start_args(&w, "/tmp/jprof-1.jfr", NULL, buf, sizeof buf, NULL),
                     JP_OK);
    assert_string_equal(buf,
                        "start,event=cpu,wall=50ms,alloc,lock,jfr,file=/tmp/jprof-1.jfr,quiet");
    w.kinds = 1u << JP_KIND_ALLOC | 1u << JP_KIND_LOCK;
    w.alloc_interval_bytes = 1000;
    w.lock_threshold_ns = 2500;
    assert_int_equal(jvm_asprof_start_args(&w, "/f", NULL, buf, sizeof buf, NULL), JP_OK);
    assert_string_equal(buf, "start,alloc=1000,lock=2500,jfr,file=/f,quiet");
    w.kinds = 1u << JP_KIND_CPUTIME; /* JDK 25's sampler only: nothing async-profiler records */
    assert_int_equal(jvm_asprof_start_args(&w, "/f", NULL, buf, sizeof buf, NULL), JP_ERR_USAGE);
}

/* GC.heap_info of every collector: the heap lines summed, Metaspace not */
static void test_heap_info_parse(void **state)
{
    (void)state;
    int64_t u = -1, c = -1;
    assert_true(jvm_heap_info_parse(
        " garbage-first heap   total 65536K, used 24576K [0x00000000fc000000, 0x0)\n"
        "  region size 1024K, 3 young (3072K), 0 survivors (0K)\n"
        " Metaspace       used 1000K, committed 1200K, reserved 1114112K\n"
        "  class space    used 90K, committed 192K, reserved 1048576K\n",
        &u, &c));
    assert_int_equal(u, 24576 << 10);
    assert_int_equal(c, 65536 << 10);
    /* JDK 25 G1 */
    assert_true(jvm_heap_info_parse("garbage-first heap   total reserved 65536K, committed 32768K, "
                                    "used 4096K [0x0, 0x1)\n region size 1024K\n",
                                    &u, &c));
    assert_int_equal(u, 4096 << 10);
    assert_int_equal(c, 32768 << 10);
    /* Serial: one line per generation */
    assert_true(jvm_heap_info_parse(" def new generation   total 4928K, used 1024K [0x0)\n"
                                    "  eden space 4416K,  23% used\n"
                                    " tenured generation   total 10944K, used 1024K [0x0)\n",
                                    &u, &c));
    assert_int_equal(u, 2048 << 10);
    assert_int_equal(c, (4928 + 10944) << 10);
    assert_true(
        jvm_heap_info_parse(" ZHeap           used 10M, capacity 64M, max capacity 64M\n", &u, &c));
    assert_int_equal(u, 10 << 20);
    assert_int_equal(c, 64 << 20);
    assert_false(jvm_heap_info_parse("nothing we know\n", &u, &c));
    assert_false(jvm_heap_info_parse("", &u, &c));
    /* a number past any heap is refused, not wrapped */
    assert_false(jvm_heap_info_parse(" ZHeap used 99999999999999999999M, capacity 64M\n", &u, &c));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_heap_info_parse),
        cmocka_unit_test(test_cmdline_main),
        cmocka_unit_test(test_engine_contract),
        cmocka_unit_test(test_engine_asprof_viewer_args),
        cmocka_unit_test(test_jfc_settings),
        cmocka_unit_test(test_jdk_major),
        cmocka_unit_test(test_tfile_remove_after_exit),
        cmocka_unit_test(test_reply_parse),
        cmocka_unit_test(test_cleanup_registry),
        cmocka_unit_test(test_helper_json),
        cmocka_unit_test(test_jfr_check_lists),
        cmocka_unit_test(test_proc_self_is_not_a_jvm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
