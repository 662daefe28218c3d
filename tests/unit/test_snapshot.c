/* Unit tests of src/model/snapshot and src/model/analyze on synthetic
 * snapshots: deadlock cycles of 2 and 3, mixed monitor/ReentrantLock cycles,
 * no false positives, lock groups with owner chains, busy-thread ranking,
 * contention apart from idle pool workers, busy threads from profile and
 * snapshot evidence. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/analyze.h"
#include "model/busy.h"
#include "model/snapshot.h"

static jp_thread *add(jp_snapshot *s, int64_t id, const char *name, jp_thread_state st)
{
    jp_thread *t = jp_snapshot_add_thread(s);
    t->id = id;
    t->name = jp_snapshot_strdup(s, name);
    t->state = st;
    jp_snap_frame *f = jp_thread_add_frame(s, t);
    f->class_name = "app.Work";
    f->method = name;
    f->file = "Work.java";
    f->line = (int32_t)id;
    return t;
}

static void hold(jp_snapshot *s, size_t ti, uint64_t lock, jp_lock_kind kind)
{
    jp_lock_ref *l = jp_thread_add_held(s, &s->threads[ti]);
    l->id = lock;
    l->kind = kind;
    l->class_name = kind == JP_LOCK_MONITOR ? "app.Account" : "ReentrantLock$NonfairSync";
    l->frame = kind == JP_LOCK_MONITOR ? 0 : -1;
}

static void wait_for(jp_snapshot *s, size_t ti, uint64_t lock, jp_wait_kind wk)
{
    jp_thread *t = &s->threads[ti];
    t->wait_kind = wk;
    t->wait_lock.id = lock;
    t->wait_lock.kind = wk == JP_WAIT_PARK ? JP_LOCK_SYNCHRONIZER : JP_LOCK_MONITOR;
    t->wait_lock.class_name = wk == JP_WAIT_PARK ? "ReentrantLock$NonfairSync" : "app.Account";
    t->wait_lock.frame = 0;
}

static void test_cycle_of_two_monitors(void **state)
{
    (void)state;
    jp_snapshot *s = jp_snapshot_new("helper");
    add(s, 5, "b", JP_TSTATE_BLOCKED);
    add(s, 3, "a", JP_TSTATE_BLOCKED);
    hold(s, 0, 0xB, JP_LOCK_MONITOR);
    hold(s, 1, 0xA, JP_LOCK_MONITOR);
    wait_for(s, 0, 0xA, JP_WAIT_ENTER);
    wait_for(s, 1, 0xB, JP_WAIT_ENTER);
    jp_snapshot_resolve_owners(s);
    assert_string_equal(s->threads[0].wait_owner_name, "a");
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    assert_int_equal(dl.count, 1);
    assert_int_equal(dl.items[0].count, 2);
    assert_int_equal(dl.items[0].members[0].thread, 1); /* id 3 first */
    assert_int_equal(dl.items[0].members[0].waits_for.id, 0xB);
    assert_int_equal(dl.items[0].members[0].holds.id, 0xA);
    assert_int_equal(dl.items[0].members[1].holds.id, 0xB);
    assert_false(dl.items[0].mixed);
    assert_false(dl.items[0].jvm_confirmed);
    jp_deadlock_list_cleanup(&dl);
    /* the JVM's own report confirms it */
    size_t both[2] = {0, 1};
    jp_snapshot_add_jvm_deadlock(s, both, 2);
    jp_analyze_deadlocks(s, &dl);
    assert_true(dl.items[0].jvm_confirmed);
    jp_deadlock_list_cleanup(&dl);
    jp_snapshot_free(s);
}

static void test_cycle_of_three_mixed(void **state)
{
    (void)state;
    jp_snapshot *s = jp_snapshot_new("thread-print");
    add(s, 1, "main", JP_TSTATE_RUNNABLE);
    add(s, 10, "x", JP_TSTATE_BLOCKED);
    add(s, 11, "y", JP_TSTATE_WAITING);
    add(s, 12, "z", JP_TSTATE_WAITING);
    add(s, 13, "tail", JP_TSTATE_BLOCKED); /* waits on the cycle, is not in it */
    hold(s, 1, 0x100, JP_LOCK_MONITOR);
    hold(s, 2, 0x200, JP_LOCK_SYNCHRONIZER);
    hold(s, 3, 0x300, JP_LOCK_SYNCHRONIZER);
    wait_for(s, 1, 0x200, JP_WAIT_PARK);  /* x -> y */
    wait_for(s, 2, 0x300, JP_WAIT_PARK);  /* y -> z */
    wait_for(s, 3, 0x100, JP_WAIT_ENTER); /* z -> x */
    wait_for(s, 4, 0x100, JP_WAIT_ENTER); /* tail -> x */
    jp_snapshot_resolve_owners(s);
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    assert_int_equal(dl.count, 1);
    const jp_deadlock *d = &dl.items[0];
    assert_int_equal(d->count, 3);
    assert_true(d->mixed);
    assert_string_equal(s->threads[d->members[0].thread].name, "x");
    assert_string_equal(s->threads[d->members[1].thread].name, "y");
    assert_string_equal(s->threads[d->members[2].thread].name, "z");
    assert_int_equal(d->members[0].holds.id, 0x100);
    assert_int_equal(d->members[0].holds.frame, 0);
    assert_int_equal(d->members[1].holds.frame, -1); /* synchronizers carry no frame */
    jp_deadlock_list_cleanup(&dl);

    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    assert_int_equal(lg.count, 3);
    assert_int_equal(lg.items[0].lock.id, 0x100); /* two waiters: z and tail */
    assert_int_equal(lg.items[0].nwaiters, 2);
    assert_int_equal(lg.items[0].owner, 1);
    assert_true(lg.items[0].chain_cycles);
    assert_int_equal(lg.items[0].nchain, 3);
    jp_lock_group_list_cleanup(&lg);
    jp_snapshot_free(s);
}

static void test_no_false_positives(void **state)
{
    (void)state;
    jp_snapshot *s = jp_snapshot_new("thread-print");
    add(s, 1, "owner", JP_TSTATE_TIMED_WAITING);
    add(s, 2, "w1", JP_TSTATE_BLOCKED);
    add(s, 3, "w2", JP_TSTATE_BLOCKED);
    add(s, 4, "notified", JP_TSTATE_WAITING);
    add(s, 5, "chain", JP_TSTATE_WAITING);
    hold(s, 0, 0xA, JP_LOCK_MONITOR);
    wait_for(s, 1, 0xA, JP_WAIT_ENTER);
    wait_for(s, 2, 0xA, JP_WAIT_ENTER);
    /* Object.wait on a monitor it lists as locked: released, not held */
    hold(s, 3, 0xC, JP_LOCK_MONITOR);
    wait_for(s, 3, 0xC, JP_WAIT_OBJECT);
    /* w2 holds a synchronizer that "chain" waits for: a chain, not a cycle */
    hold(s, 2, 0xD, JP_LOCK_SYNCHRONIZER);
    wait_for(s, 4, 0xD, JP_WAIT_PARK);
    jp_snapshot_resolve_owners(s);
    assert_int_equal(s->threads[3].wait_owner_id, -1);
    assert_int_equal(jp_snapshot_lock_owner(s, 0xC), -1);
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    assert_int_equal(dl.count, 0);
    jp_deadlock_list_cleanup(&dl);

    size_t *blocks = jp_analyze_blocks_counts(s);
    assert_int_equal(blocks[0], 3); /* w1, w2 and (through w2) chain */
    assert_int_equal(blocks[2], 1);
    free(blocks);
    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    assert_int_equal(lg.items[0].lock.id, 0xA);
    assert_int_equal(lg.items[0].owner_blocks, 3);
    /* the chain group: chain -> w2 -> owner */
    for (size_t i = 0; i < lg.count; i++)
        if (lg.items[i].lock.id == 0xD) {
            assert_int_equal(lg.items[i].nchain, 2);
            assert_int_equal(lg.items[i].owner_chain[0], 2);
            assert_int_equal(lg.items[i].owner_chain[1], 0);
            assert_false(lg.items[i].chain_cycles);
        }
    jp_lock_group_list_cleanup(&lg);
    jp_snapshot_free(s);
}

static void test_busy_exact_and_sampled(void **state)
{
    (void)state;
    jp_snapshot *a = jp_snapshot_new("helper"), *b = jp_snapshot_new("helper");
    a->taken_ns = 1000000000LL;
    b->taken_ns = 3000000000LL; /* 2 s later */
    const char *names[3] = {"idle", "hot", "warm"};
    int64_t before[3] = {5000000, 10000000, 0}, after[3] = {5000000, 2010000000LL, 400000000};
    for (int i = 0; i < 3; i++) {
        add(a, i + 1, names[i], JP_TSTATE_RUNNABLE)->cpu_ns = before[i];
        add(b, i + 1, names[i], JP_TSTATE_RUNNABLE)->cpu_ns = after[i];
    }
    add(b, 9, "newborn", JP_TSTATE_RUNNABLE)->cpu_ns = 100000000;
    jp_busy_list bl;
    jp_analyze_busy(a, b, &bl);
    assert_int_equal(bl.count, 4);
    assert_int_equal(bl.interval_ns, 2000000000LL);
    assert_string_equal(b->threads[bl.items[0].thread].name, "hot");
    assert_true(bl.items[0].cpu_pct > 99.9 && bl.items[0].cpu_pct < 100.1);
    assert_int_equal(bl.items[0].confidence, JP_CPU_EXACT);
    assert_string_equal(b->threads[bl.items[1].thread].name, "warm");
    assert_true(bl.items[1].cpu_pct > 19.9 && bl.items[1].cpu_pct < 20.1);
    assert_string_equal(b->threads[bl.items[2].thread].name, "newborn");
    assert_string_equal(b->threads[bl.items[3].thread].name, "idle");
    assert_true(bl.items[3].cpu_pct == 0.0);
    jp_busy_list_cleanup(&bl);
    /* one snapshot: no rate */
    jp_analyze_busy(NULL, b, &bl);
    assert_int_equal(bl.items[0].confidence, JP_CPU_UNKNOWN);
    assert_true(bl.items[0].cpu_pct < 0);
    assert_string_equal(b->threads[bl.items[0].thread].name, "hot"); /* by total CPU */
    jp_busy_list_cleanup(&bl);
    /* no CPU times: RUNNABLE sampling */
    jp_snapshot *c = jp_snapshot_new("thread-print");
    add(c, 1, "sleepy", JP_TSTATE_TIMED_WAITING);
    add(c, 2, "spinner", JP_TSTATE_RUNNABLE);
    jp_analyze_busy(NULL, c, &bl);
    assert_string_equal(c->threads[bl.items[0].thread].name, "spinner");
    assert_int_equal(bl.items[0].confidence, JP_CPU_SAMPLED);
    assert_true(bl.items[0].cpu_pct == 100.0);
    jp_busy_list_cleanup(&bl);
    jp_snapshot_free(a);
    jp_snapshot_free(b);
    jp_snapshot_free(c);
}

static void test_model_basics(void **state)
{
    (void)state;
    assert_int_equal(jp_thread_state_parse("BLOCKED", 7), JP_TSTATE_BLOCKED);
    assert_int_equal(jp_thread_state_parse("BLOCK", 5), JP_TSTATE_UNKNOWN);
    assert_string_equal(jp_thread_state_name(JP_TSTATE_TIMED_WAITING), "TIMED_WAITING");
    jp_snapshot *s = jp_snapshot_new("x");
    char big[100000];
    memset(big, 'q', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *p = jp_snapshot_strdup(s, big); /* larger than an arena chunk */
    const char *q = jp_snapshot_strdup(s, "small");
    assert_int_equal(strlen(p), sizeof big - 1);
    assert_string_equal(q, "small");
    jp_lock_ref l = {.id = 0xff708868, .class_name = "live.Deadlocks$Account"};
    char buf[128];
    jp_lock_ref_format(&l, buf, sizeof buf);
    assert_string_equal(buf, "live.Deadlocks$Account@ff708868");
    size_t counts[JP_TSTATE_COUNT];
    add(s, 1, "a", JP_TSTATE_BLOCKED);
    add(s, 2, "b", JP_TSTATE_BLOCKED);
    jp_snapshot_count_states(s, counts);
    assert_int_equal(counts[JP_TSTATE_BLOCKED], 2);
    jp_snapshot_free(s);
    jp_snapshot_free(NULL);
}

/* A thread with the given stack (top first, "pkg.Class.method"). */
static size_t add_stack(jp_snapshot *s, int64_t id, const char *name, jp_thread_state st,
                        const char *const *frames)
{
    jp_thread *t = jp_snapshot_add_thread(s);
    t->id = id;
    t->name = jp_snapshot_strdup(s, name);
    t->state = st;
    for (size_t k = 0; frames[k]; k++) {
        const char *dot = strrchr(frames[k], '.');
        jp_snap_frame *f = jp_thread_add_frame(s, t);
        f->class_name = jp_snapshot_strndup(s, frames[k], (size_t)(dot - frames[k]));
        f->method = jp_snapshot_strdup(s, dot + 1);
        f->line = -1;
    }
    return s->count - 1;
}

static void test_contention_apart_from_idle(void **state)
{
    (void)state;
    static const char *const pool[] = {
        "jdk.internal.misc.Unsafe.park",
        "java.util.concurrent.locks.LockSupport.parkNanos",
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.awaitNanos",
        "java.util.concurrent.LinkedBlockingQueue.poll",
        "org.apache.tomcat.util.threads.TaskQueue.poll",
        "org.apache.tomcat.util.threads.ThreadPoolExecutor.getTask",
        NULL};
    static const char *const jdkpool[] = {
        "jdk.internal.misc.Unsafe.park",
        "java.util.concurrent.locks.LockSupport.park",
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionNode.block",
        "java.util.concurrent.ForkJoinPool.unmanagedBlock",
        "java.util.concurrent.ForkJoinPool.managedBlock",
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.await",
        "java.util.concurrent.LinkedBlockingQueue.take",
        "java.util.concurrent.ThreadPoolExecutor.getTask",
        NULL};
    static const char *const sleeping[] = {"java.lang.Thread.sleep", "app.Main.main", NULL};
    static const char *const app[] = {"app.Work.run", NULL};
    jp_snapshot *s = jp_snapshot_new("helper");
    size_t vo = add_stack(s, 1, "vault-owner", JP_TSTATE_TIMED_WAITING, sleeping);
    size_t vw = add_stack(s, 2, "vault-waiter-1", JP_TSTATE_WAITING, app);
    size_t lo = add_stack(s, 3, "ledger-owner", JP_TSTATE_TIMED_WAITING, sleeping);
    size_t lw = add_stack(s, 4, "ledger-waiter-1", JP_TSTATE_BLOCKED, app);
    hold(s, vo, 0x10, JP_LOCK_SYNCHRONIZER);
    wait_for(s, vw, 0x10, JP_WAIT_PARK);
    hold(s, lo, 0x20, JP_LOCK_MONITOR);
    wait_for(s, lw, 0x20, JP_WAIT_ENTER);
    for (int i = 0; i < 3; i++) {
        char n[32];
        snprintf(n, sizeof n, "http-nio-8080-exec-%d", i + 1);
        wait_for(s, add_stack(s, 10 + i, n, JP_TSTATE_TIMED_WAITING, pool), 0x30, JP_WAIT_PARK);
    }
    wait_for(s, add_stack(s, 20, "pool-1-thread-1", JP_TSTATE_WAITING, jdkpool), 0x31,
             JP_WAIT_PARK);
    wait_for(s, add_stack(s, 21, "waiter", JP_TSTATE_WAITING, app), 0x40, JP_WAIT_OBJECT);
    add_stack(s, 22, "spinner", JP_TSTATE_RUNNABLE, app);
    jp_snapshot_resolve_owners(s);
    assert_true(jp_thread_contends(s, vw));
    assert_true(jp_thread_contends(s, lw));
    assert_false(jp_thread_contends(s, vo));
    assert_false(jp_thread_contends(s, 4)); /* exec-1: a Condition nobody owns */

    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    assert_int_equal(lg.count, 5);
    assert_int_equal(lg.ncontended, 2);
    assert_int_equal(lg.contending_threads, 2);
    assert_true(lg.items[0].contended && lg.items[1].contended && !lg.items[2].contended);
    assert_int_equal(lg.items[2].nwaiters, 3); /* the idle Condition after them */
    jp_lock_group_list_cleanup(&lg);

    jp_idle_list il;
    jp_analyze_idle(s, &il);
    /* owners sleeping while holding: idle as threads, their locks still contended */
    assert_int_equal(il.nthreads, 7);
    assert_string_equal(il.items[0].pool, "http-nio-8080-exec-*");
    assert_string_equal(il.items[0].where, "TaskQueue.poll");
    assert_int_equal(il.items[0].count, 3);
    assert_int_equal(il.items[0].frame, 4);
    bool jdk = false, waiter = false;
    for (size_t i = 0; i < il.count; i++) {
        jdk |= !strcmp(il.items[i].pool, "pool-1-thread-*") &&
               !strcmp(il.items[i].where, "LinkedBlockingQueue.take");
        waiter |= !strcmp(il.items[i].pool, "waiter") && !strcmp(il.items[i].where, "Work.run");
    }
    assert_true(jdk && waiter);
    jp_idle_list_cleanup(&il);
    jp_snapshot_free(s);
}

static void test_busy_rank_profile_and_snapshot(void **state)
{
    (void)state;
    static const char *const sleeping[] = {"java.lang.Thread.sleep", "app.Main.main", NULL};
    static const char *const work[] = {"app.Jsp.service", NULL};
    jp_snapshot *s = jp_snapshot_new("helper");
    s->taken_ns = 100 * 1000000000LL;
    size_t m = add_stack(s, 1, "main", JP_TSTATE_TIMED_WAITING, sleeping);
    s->threads[m].cpu_ns = 900 * 1000000000LL; /* most CPU since start, none now */
    add_stack(s, 2, "http-nio-8080-exec-1", JP_TSTATE_RUNNABLE, work);
    add_stack(s, 3, "http-nio-8080-exec-2", JP_TSTATE_WAITING, work);
    jp_busy_list one;
    jp_analyze_busy(NULL, s, &one); /* one snapshot: no rate */
    jp_cpu_evidence ev;
    jp_cpu_evidence_init(&ev);
    ev.start_ns = 130 * 1000000000LL;
    ev.end_ns = 140 * 1000000000LL;
    jp_cpu_evidence_add(&ev, "http-nio-8080-exec-2", 20, 2400000000ULL, 48);
    jp_cpu_evidence_add(&ev, "http-nio-8080-exec-1", 20, 2000000000ULL, 40);
    jp_cpu_evidence_add(&ev, "http-nio-8080-exec-1", 20, 500000000ULL, 10);
    jp_cpu_evidence_add(&ev, "AsyncFileHandlerWriter-1", 24, 300000000ULL, 6);
    jp_busy_summary bs;
    jp_busy_rank(s, &one, &ev, &bs);
    assert_true(bs.have_profile && bs.profile_first && !bs.have_snapshot);
    assert_int_equal(bs.count, 4);
    assert_string_equal(bs.items[0].name, "http-nio-8080-exec-1");
    assert_true(bs.items[0].cpu_pct > 24.9 && bs.items[0].cpu_pct < 25.1);
    assert_int_equal(bs.items[0].evidence, JP_BUSY_BOTH);
    assert_string_equal(bs.items[1].name, "http-nio-8080-exec-2");
    assert_int_equal(bs.items[1].evidence, JP_BUSY_PROFILE);
    assert_string_equal(bs.items[2].name, "AsyncFileHandlerWriter-1");
    assert_int_equal(bs.items[2].thread, -1);
    assert_string_equal(bs.items[3].name, "main");
    assert_int_equal(bs.items[3].evidence, JP_BUSY_NONE);
    assert_true(bs.items[3].cpu_pct == 0.0);
    char buf[256];
    jp_busy_row_describe(&bs, &bs.items[0], s, 148 * 1000000000LL, buf, sizeof buf);
    assert_string_equal(buf, "cpu 25% over the last 10s window (ended 8s ago); snapshot 48s old: "
                             "RUNNABLE");
    jp_busy_summary_describe(&bs, 148 * 1000000000LL, buf, sizeof buf);
    assert_non_null(strstr(buf, "ranked by cpu profile"));
    jp_busy_summary_cleanup(&bs);

    /* snapshots 2 s apart ending after the profile: they rank, the profile fills in */
    jp_snapshot *p = jp_snapshot_new("helper");
    p->taken_ns = 145 * 1000000000LL;
    s->taken_ns = 147 * 1000000000LL;
    for (size_t i = 0; i < s->count; i++) {
        jp_thread *t = jp_snapshot_add_thread(p);
        t->id = s->threads[i].id;
        t->name = jp_snapshot_strdup(p, s->threads[i].name);
        t->cpu_ns = 0;
        s->threads[i].cpu_ns = i == 2 ? 1000000000LL : 0;
    }
    jp_busy_list two;
    jp_analyze_busy(p, s, &two);
    jp_busy_rank(s, &two, &ev, &bs);
    assert_false(bs.profile_first);
    assert_string_equal(bs.items[0].name, "http-nio-8080-exec-2"); /* 50% between snapshots */
    assert_int_equal(bs.items[0].evidence, JP_BUSY_BOTH);
    assert_string_equal(bs.items[1].name, "AsyncFileHandlerWriter-1"); /* profile fills in */
    jp_busy_summary_cleanup(&bs);

    /* a .jfr file: profile only */
    jp_busy_rank(NULL, NULL, &ev, &bs);
    assert_int_equal(bs.count, 3);
    assert_int_equal(bs.evidence, JP_BUSY_PROFILE);
    jp_busy_summary_cleanup(&bs);
    jp_busy_list_cleanup(&one);
    jp_busy_list_cleanup(&two);
    jp_cpu_evidence_cleanup(&ev);
    jp_snapshot_free(p);
    jp_snapshot_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cycle_of_two_monitors),
        cmocka_unit_test(test_cycle_of_three_mixed),
        cmocka_unit_test(test_no_false_positives),
        cmocka_unit_test(test_busy_exact_and_sampled),
        cmocka_unit_test(test_model_basics),
        cmocka_unit_test(test_contention_apart_from_idle),
        cmocka_unit_test(test_busy_rank_profile_and_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
