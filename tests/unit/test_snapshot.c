/* Unit tests of src/model/snapshot and src/model/analyze on synthetic
 * snapshots: deadlock cycles of 2 and 3, mixed monitor/ReentrantLock cycles,
 * no false positives, lock groups with owner chains, busy-thread ranking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/analyze.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cycle_of_two_monitors), cmocka_unit_test(test_cycle_of_three_mixed),
        cmocka_unit_test(test_no_false_positives),    cmocka_unit_test(test_busy_exact_and_sampled),
        cmocka_unit_test(test_model_basics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
