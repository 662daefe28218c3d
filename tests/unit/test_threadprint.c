/* Unit tests of src/jvm/threadprint: real `jcmd Thread.print -l` output of
 * JDK 17 and JDK 25 (tests/unit/data/threadprint-*.txt, captured from
 * tests/java/Deadlocks.java and Contention.java), plus hostile input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "data_file.h"
#include "jvm/threadprint.h"
#include "model/analyze.h"
#include "model/snapshot.h"

static jp_snapshot *parse_file(const char *name)
{
    size_t len;
    char *text = ut_data_file(name, &len);
    jp_snapshot *s = NULL;
    jp_error err;
    jp_error_init(&err);
    assert_int_equal(jvm_threadprint_parse(text, len, 123, &s, &err), JP_OK);
    free(text);
    assert_string_equal(s->source, "thread-print");
    assert_int_equal(s->taken_ns, 123);
    return s;
}

static const jp_thread *named(const jp_snapshot *s, const char *name)
{
    long i = jp_snapshot_find_name(s, name);
    assert_true(i >= 0);
    return &s->threads[i];
}

static void check_deadlocks(const char *file)
{
    jp_snapshot *s = parse_file(file);
    assert_int_equal(s->njvm_deadlocks, 2);
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    assert_int_equal(dl.count, 2);
    /* cycle 1: the monitors, starting at the thread with the smaller id */
    const jp_deadlock *m = &dl.items[0];
    assert_int_equal(m->count, 2);
    assert_true(m->jvm_confirmed);
    assert_false(m->mixed);
    assert_string_equal(s->threads[m->members[0].thread].name, "mon-deadlock-1");
    assert_string_equal(s->threads[m->members[1].thread].name, "mon-deadlock-2");
    for (int k = 0; k < 2; k++) {
        assert_string_equal(m->members[k].waits_for.class_name, "live.Deadlocks$Account");
        assert_int_equal(m->members[k].waits_for.kind, JP_LOCK_MONITOR);
        assert_int_equal(m->members[k].holds.frame, 0); /* taken in transfer() */
        /* what k waits for is what k+1 holds */
        assert_true(m->members[k].waits_for.id == m->members[(k + 1) % 2].holds.id);
    }
    const jp_deadlock *r = &dl.items[1];
    assert_int_equal(r->count, 2);
    assert_true(r->jvm_confirmed);
    assert_string_equal(s->threads[r->members[0].thread].name, "rl-deadlock-1");
    assert_string_equal(r->members[0].waits_for.class_name,
                        "java.util.concurrent.locks.ReentrantLock$NonfairSync");
    assert_int_equal(r->members[0].waits_for.kind, JP_LOCK_SYNCHRONIZER);
    assert_true(r->members[0].waits_for.id == r->members[1].holds.id);
    jp_deadlock_list_cleanup(&dl);

    const jp_thread *t = named(s, "mon-deadlock-1");
    assert_int_equal(t->state, JP_TSTATE_BLOCKED);
    assert_string_equal(t->state_detail, "on object monitor");
    assert_true(t->daemon);
    assert_true(t->id > 0);
    assert_true(t->native_id > 0);
    assert_true(t->cpu_ns > 0);
    assert_true(t->elapsed_ns > 1000000000LL);
    assert_int_equal(t->wait_kind, JP_WAIT_ENTER);
    assert_string_equal(t->wait_owner_name, "mon-deadlock-2");
    char buf[256];
    jp_snap_frame_format(&t->frames[0], buf, sizeof buf);
    assert_string_equal(buf, "live.Deadlocks.transfer(Deadlocks.java:37)");
    t = named(s, "rl-deadlock-2");
    assert_int_equal(t->nheld, 1);
    assert_int_equal(t->held[0].kind, JP_LOCK_SYNCHRONIZER);
    assert_string_equal(t->wait_owner_name, "rl-deadlock-1");
    t = named(s, "GC Thread#0");
    assert_true(t->vm_internal);
    assert_int_equal(t->id, -1);
    assert_true(t->native_id > 0);
    t = named(s, "bystander");
    assert_int_equal(t->state, JP_TSTATE_TIMED_WAITING);
    assert_int_equal(t->wait_kind, JP_WAIT_NONE);
    jp_snapshot_free(s);
}

static void test_deadlocks_jdk17(void **state)
{
    (void)state;
    check_deadlocks("threadprint-deadlocks-jdk17.txt");
}

static void test_deadlocks_jdk25(void **state)
{
    (void)state;
    check_deadlocks("threadprint-deadlocks-jdk25.txt");
}

static void check_contention(const char *file)
{
    jp_snapshot *s = parse_file(file);
    assert_int_equal(s->njvm_deadlocks, 0);
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    assert_int_equal(dl.count, 0); /* contention is not a deadlock */
    jp_deadlock_list_cleanup(&dl);

    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    assert_true(lg.count >= 3);
    const jp_lock_group *g = &lg.items[0];
    assert_string_equal(g->lock.class_name, "live.Contention$Ledger");
    assert_int_equal(g->nwaiters, 3);
    assert_string_equal(s->threads[g->owner].name, "ledger-owner");
    assert_int_equal(g->owner_blocks, 3);
    assert_int_equal(g->nchain, 1);
    g = &lg.items[1];
    assert_string_equal(g->lock.class_name, "java.util.concurrent.locks.ReentrantLock$NonfairSync");
    assert_int_equal(g->nwaiters, 2);
    assert_string_equal(s->threads[g->owner].name, "vault-owner");
    /* the Object.wait() on the mailbox has waiters but no owner */
    bool mailbox = false;
    for (size_t i = 0; i < lg.count; i++)
        if (strcmp(lg.items[i].lock.class_name, "live.Contention$Mailbox") == 0) {
            mailbox = true;
            assert_int_equal(lg.items[i].owner, -1);
            assert_string_equal(s->threads[lg.items[i].waiters[0]].name, "waiter");
        }
    assert_true(mailbox);
    jp_lock_group_list_cleanup(&lg);

    const jp_thread *t = named(s, "hot-spinner");
    assert_int_equal(t->state, JP_TSTATE_RUNNABLE);
    assert_true(t->cpu_ns > 500000000LL);
    t = named(s, "parker");
    assert_int_equal(t->state, JP_TSTATE_WAITING);
    assert_string_equal(t->state_detail, "parking");
    t = named(s, "waiter");
    assert_int_equal(t->wait_kind, JP_WAIT_OBJECT);
    assert_int_equal(t->wait_owner_id, -1);
    t = named(s, "sleeper");
    assert_string_equal(t->state_detail, "sleeping");
    jp_snapshot_free(s);
}

static void test_contention_jdk17(void **state)
{
    (void)state;
    check_contention("threadprint-contention-jdk17.txt");
}

static void test_contention_jdk25(void **state)
{
    (void)state;
    check_contention("threadprint-contention-jdk25.txt");
}

static void test_header_variants(void **state)
{
    (void)state;
    static const char text[] =
        "\"a \"quoted\" name\" #7 [4242] daemon prio=5 os_prio=0 cpu=1.50ms elapsed=2.00s "
        "tid=0x1 nid=0x10 runnable  [0x0]\n"
        "   java.lang.Thread.State: RUNNABLE\n"
        "\tat Foo.bar(Foo.java)\n"
        "\tat noclass(Native Method)\n"
        "\"hexless\" #8 prio=5 os_prio=0 cpu=0.25s elapsed=1s tid=0x2 nid=77 sleeping\n"
        "   java.lang.Thread.State: TIMED_WAITING (sleeping)\n";
    jp_snapshot *s = NULL;
    assert_int_equal(jvm_threadprint_parse(text, sizeof text - 1, 0, &s, NULL), JP_OK);
    assert_int_equal(s->count, 2);
    const jp_thread *t = &s->threads[0];
    assert_string_equal(t->name, "a \"quoted\" name");
    assert_int_equal(t->id, 7);
    assert_int_equal(t->native_id, 0x10); /* nid wins over [tid]: it comes later */
    assert_int_equal(t->cpu_ns, 1500000);
    assert_int_equal(t->elapsed_ns, 2000000000LL);
    char buf[128];
    jp_snap_frame_format(&t->frames[0], buf, sizeof buf);
    assert_string_equal(buf, "Foo.bar(Foo.java)");
    jp_snap_frame_format(&t->frames[1], buf, sizeof buf);
    assert_string_equal(buf, "noclass(Native Method)");
    assert_int_equal(s->threads[1].native_id, 77);
    assert_int_equal(s->threads[1].cpu_ns, 250000000LL);
    jp_snapshot_free(s);
}

static void test_garbage_is_refused_or_bounded(void **state)
{
    (void)state;
    jp_snapshot *s = NULL;
    jp_error err;
    jp_error_init(&err);
    assert_int_equal(jvm_threadprint_parse("hello\nworld", 11, 0, &s, &err), JP_ERR_FORMAT);
    assert_null(s);
    /* truncated everywhere: no crash, whatever is parsed is consistent */
    size_t len;
    char *text = ut_data_file("threadprint-deadlocks-jdk17.txt", &len);
    for (size_t cut = 0; cut < len; cut += 97) {
        if (jvm_threadprint_parse(text, cut, 0, &s, NULL) == JP_OK) {
            jp_deadlock_list dl;
            jp_analyze_deadlocks(s, &dl);
            jp_deadlock_list_cleanup(&dl);
            jp_snapshot_free(s);
        }
    }
    /* a deadlock section naming unknown threads and lock lines outside a thread */
    static const char odd[] = "\t- locked <0x1> (a X)\n\"t\" #1 prio=5 nid=0x1 x\n"
                              "\t- waiting to lock <0xffffffffffffffffff> (a Y\n"
                              "Found one Java-level deadlock:\n\"ghost\":\n\"t\":\n"
                              "Found 1 deadlock.\n";
    assert_int_equal(jvm_threadprint_parse(odd, sizeof odd - 1, 0, &s, NULL), JP_OK);
    assert_int_equal(s->count, 1);
    assert_int_equal(s->njvm_deadlocks, 0); /* one known name is no cycle */
    assert_int_equal(s->threads[0].wait_lock.id, 0);
    jp_snapshot_free(s);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deadlocks_jdk17),
        cmocka_unit_test(test_deadlocks_jdk25),
        cmocka_unit_test(test_contention_jdk17),
        cmocka_unit_test(test_contention_jdk25),
        cmocka_unit_test(test_header_variants),
        cmocka_unit_test(test_garbage_is_refused_or_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
