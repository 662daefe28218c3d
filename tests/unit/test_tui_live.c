/* test_tui_live.c - jprof-top's live screens without a terminal or a JVM:
 * snapshots parsed from captured Thread.print text (tests/unit/data) are fed
 * to a tui_target, the view is driven with keys and rendered into a canvas,
 * and the screen text is checked. Also the exit statuses and GC.heap_info
 * parsing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/xalloc.h"
#include "jvm/threadprint.h"
#include "tui/exit.h"
#include "tui/report_gc.h"
#include "tui/source_pid.h"
#include "wire/gc_json.h"
#include "tui/target.h"
#include "tui/report_target.h"
#include "tui/screens.h"

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "tests/unit/data"
#endif

static jp_snapshot *load(const char *name, int64_t taken_ns)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", TEST_DATA_DIR, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char text[4 << 20];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    jp_snapshot *s = NULL;
    jp_error err;
    jp_error_init(&err);
    assert_int_equal(jvm_threadprint_parse(text, n, taken_ns, &s, &err), JP_OK);
    return s;
}

/* A source of the tests: snapshots come from files (tui_target_accept), a
 * profile window cannot be started. */
static jp_err test_refresh(tui_target *l, jp_snapshot **out, jp_error *err)
{
    (void)l;
    *out = NULL;
    return jp_error_set(err, JP_ERR_USAGE, "test source: no refresh");
}

static jp_err test_prof_start(tui_target *l, jp_error *err)
{
    (void)l;
    return jp_error_set(err, JP_ERR_USAGE, "test source: no profile");
}

static jp_err test_prof_read(tui_target *l, jp_profile **out, jfr_report *rep, bool *tail,
                             jp_error *err)
{
    (void)l, (void)rep, (void)tail;
    *out = NULL;
    return jp_error_set(err, JP_ERR_USAGE, "test source: no profile");
}

static void test_prof_stop(tui_target *l)
{
    (void)l;
}

static void test_prof_label(const tui_target *l, char *buf, size_t len)
{
    (void)l;
    snprintf(buf, len, "test window");
}

static void test_status(const tui_target *l, tui_lines *ls)
{
    (void)l;
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "test source: 2 files read");
}

static const tui_source_ops test_ops = {
    .name = "test",
    .status = test_status,
    .refresh = test_refresh,
    .prof_start = test_prof_start,
    .prof_read = test_prof_read,
    .prof_stop = test_prof_stop,
    .prof_label = test_prof_label,
};

static tui_target *fake_live(const char *file)
{
    tui_target_opts o;
    tui_target_opts_init(&o);
    tui_target *l = tui_target_new(&o, &test_ops, NULL);
    l->proc.pid = 4242;
    snprintf(l->proc.main_class, sizeof l->proc.main_class, "live.Test");
    snprintf(l->proc.user, sizeof l->proc.user, "alice");
    snprintf(l->jvm_version, sizeof l->jvm_version, "JDK 17.0.99");
    snprintf(l->heap, sizeof l->heap, "24 MB of 64 MB");
    l->proc_cpu_pct = 123;
    l->cost_ms = 7;
    tui_target_accept(l, load(file, 1000000000LL));
    /* a second snapshot one second later gives CPU% */
    tui_target_accept(l, load(file, 2000000000LL));
    return l;
}

typedef struct screen {
    tui_canvas c;
    char text[200 * 60 * 4];
} screen;

static const char *draw(tui_screens *v, screen *s)
{
    tui_screens_render(v, &s->c);
    size_t n = 0;
    for (int r = 0; r < s->c.rows; r++) {
        n += tui_canvas_row_text(&s->c, r, s->text + n, sizeof s->text - n);
        if (n + 1 < sizeof s->text)
            s->text[n++] = '\n';
    }
    s->text[n] = '\0';
    return s->text;
}

static void keys(tui_screens *v, const int *k)
{
    for (; *k; k++)
        tui_screens_key(v, *k);
}

static tui_screens *open_view(const char *file, screen *s)
{
    tui_target *l = fake_live(file);
    tui_screens *v = tui_screens_new(l, &l->opts);
    tui_screens_resize(v, 40, 160);
    tui_canvas_init(&s->c, 1, 1);
    return v;
}

static void test_exit_status(void **state)
{
    (void)state;
    assert_int_equal(tui_exit_status(JP_ERR_NOT_FOUND), 4);
    assert_int_equal(tui_exit_status(JP_ERR_NOT_JVM), 5);
    assert_int_equal(tui_exit_status(JP_ERR_PERMISSION), 6);
    assert_int_equal(tui_exit_status(JP_ERR_TIMEOUT), 7);
    assert_int_equal(tui_exit_status(JP_ERR_EXITED), 8);
    assert_int_equal(tui_exit_status(JP_ERR_ATTACH_DISABLED), 9);
    assert_int_equal(tui_exit_status(JP_ERR_AGENT_REFUSED), 10);
    assert_int_equal(tui_exit_status(JP_ERR_CONFLICT), 11);
    assert_int_equal(tui_exit_status(JP_ERR_PROTOCOL), 1);
    assert_int_equal(tui_exit_status(JP_ERR_USAGE), 2);
}

static void test_threads_screen(void **state)
{
    (void)state;
    screen s;
    tui_screens *v = open_view("threadprint-contention-jdk17.txt", &s);
    const char *t = draw(v, &s);
    assert_non_null(strstr(t, "jprof-top  pid 4242 live.Test  JDK 17.0.99"));
    assert_non_null(strstr(t, "heap 24 MB of 64 MB"));
    assert_non_null(strstr(t, "blocked 3"));
    assert_non_null(strstr(t, "F5Threads F6Locks("));
    assert_non_null(strstr(t, "sort: CPU%"));
    assert_non_null(strstr(t, "hot-spinner"));
    assert_non_null(strstr(t, "qQuit"));
    /* the filter keeps matching names (or states) only */
    int filt[] = {'/', 'l', 'e', 'd', 'g', 'e', 'r', TUI_KEY_ENTER, 0};
    keys(v, filt);
    t = draw(v, &s);
    assert_non_null(strstr(t, "ledger-waiter-1"));
    assert_null(strstr(t, "hot-spinner"));
    assert_non_null(strstr(t, "filter: ledger"));
    int blocked[] = {'/',
                     TUI_KEY_BACKSPACE,
                     TUI_KEY_BACKSPACE,
                     TUI_KEY_BACKSPACE,
                     TUI_KEY_BACKSPACE,
                     TUI_KEY_BACKSPACE,
                     TUI_KEY_BACKSPACE,
                     'b',
                     'l',
                     'o',
                     'c',
                     'k',
                     'e',
                     'd',
                     TUI_KEY_ENTER,
                     0};
    keys(v, blocked);
    assert_int_equal(v->norder, 3);
    int clear[] = {TUI_KEY_ESC, 's', 0};
    keys(v, clear);
    t = draw(v, &s);
    assert_non_null(strstr(t, "sort: total CPU"));
    assert_true(v->norder > 10);
    /* sorted by name: the first row is the smallest name */
    int byname[] = {'s', 's', TUI_KEY_HOME, 0};
    keys(v, byname);
    assert_int_equal(v->sort, TUI_SORT_NAME);
    const jp_snapshot *sn = v->live->cur;
    for (size_t i = 1; i < v->norder; i++)
        assert_true(strcmp(sn->threads[v->order[i - 1]].name, sn->threads[v->order[i]].name) <= 0);
    /* Enter shows the selected thread's stack, Esc goes back */
    const char *first = sn->threads[v->order[0]].name;
    tui_screens_key(v, TUI_KEY_ENTER);
    t = draw(v, &s);
    char want[160];
    snprintf(want, sizeof want, "\"%s\"  id ", first);
    assert_non_null(strstr(t, want));
    assert_true(v->stack);
    tui_screens_key(v, TUI_KEY_ESC);
    assert_false(v->stack);
    assert_int_equal(tui_screens_key(v, 'q'), TUI_ACTION_QUIT);
    tui_screens_free(v);
    tui_canvas_cleanup(&s.c);
}

static void test_hot_first_and_stack(void **state)
{
    (void)state;
    screen s;
    tui_screens *v = open_view("threadprint-contention-jdk17.txt", &s);
    /* Thread.print gives per-thread cpu=; equal snapshots mean 0% for all, and
     * the order never falls back to CPU since the start: RUNNABLE first, then
     * by name; a sleeping thread is never ahead of a running one. */
    const jp_snapshot *sn = v->live->cur;
    assert_int_equal(sn->threads[v->order[0]].state, JP_TSTATE_RUNNABLE);
    size_t spinner = v->norder, sleeper = v->norder;
    for (size_t i = 0; i < v->norder; i++) {
        if (!strcmp(sn->threads[v->order[i]].name, "hot-spinner"))
            spinner = i;
        if (!strcmp(sn->threads[v->order[i]].name, "sleeper"))
            sleeper = i;
    }
    assert_true(spinner < sleeper && sleeper < v->norder);
    static const int filter[] = {'/', 'h', 'o', 't', '-', 's', TUI_KEY_ENTER, 0};
    keys(v, filter);
    assert_string_equal(sn->threads[v->order[0]].name, "hot-spinner");
    tui_screens_key(v, TUI_KEY_ENTER);
    const char *t = draw(v, &s);
    assert_non_null(strstr(t, "\"hot-spinner\""));
    assert_non_null(strstr(t, "at live.Contention$Hot.spin(Contention.java:"));
    tui_screens_free(v);
    tui_canvas_cleanup(&s.c);
}

static void test_locks_screen(void **state)
{
    (void)state;
    screen s;
    tui_screens *v = open_view("threadprint-contention-jdk17.txt", &s);
    tui_screens_key(v, TUI_KEY_F6);
    const char *t = draw(v, &s);
    assert_non_null(
        strstr(t, "(monitor): owner \"ledger-owner\" (TIMED_WAITING) blocks 3 threads"));
    assert_non_null(
        strstr(t, "enter    \"ledger-waiter-1\" (BLOCKED) at live.Contention.enterLedger"));
    assert_non_null(strstr(t, "ReentrantLock$NonfairSync@"));
    assert_non_null(strstr(t, "owner \"vault-owner\""));
    /* contention only: 3 BLOCKED on the ledger, 2 parked on the vault; the
     * Object.wait on the mailbox, the parker and the sleeper are idle */
    assert_non_null(strstr(t, "F6Locks(2)"));
    assert_non_null(strstr(t, "2 contended locks, 5 threads waiting"));
    assert_null(strstr(t, "Mailbox@"));
    assert_non_null(strstr(t, "1 idle thread: waiter, waiting in Contention.lambda$main$"));
    assert_null(strstr(t, "\n    waiter\n"));
    tui_screens_key(v, 'i'); /* the idle threads by name */
    t = draw(v, &s);
    assert_true(v->idle_expanded);
    tui_screens_key(v, 'L'); /* letters switch too */
    assert_int_equal(v->screen, TUI_SCREEN_LOCKS);
    tui_screens_free(v);
    tui_canvas_cleanup(&s.c);
}

/* S or F9: the Status screen says where the data comes from, then what the
 * source adds; o without a list to go back to says so */
static void test_status_screen(void **state)
{
    (void)state;
    screen s;
    tui_screens *v = open_view("threadprint-deadlocks-jdk25.txt", &s);
    tui_screens_key(v, 'S');
    assert_int_equal(v->screen, TUI_SCREEN_STATUS);
    const char *t = draw(v, &s);
    assert_non_null(strstr(t, "F9Status"));
    assert_non_null(strstr(t, "source: test"));
    assert_non_null(strstr(t, "pid 4242  live.Test  JDK 17.0.99"));
    assert_non_null(strstr(t, "profile: not running (the Flame screen starts test window)"));
    assert_non_null(strstr(t, "test source: 2 files read"));
    tui_screens_key(v, TUI_KEY_F5);
    assert_int_equal(v->screen, TUI_SCREEN_THREADS);
    tui_screens_key(v, TUI_KEY_F9);
    assert_int_equal(v->screen, TUI_SCREEN_STATUS);
    tui_screens_key(v, 'o'); /* back to the list of this machine's JVMs */
    t = draw(v, &s);
    assert_null(v->live);
    assert_true(v->picking);
    assert_non_null(strstr(t, "jprof-top: Java virtual machines on this machine ("));
    assert_non_null(strstr(t, "PID  USER"));
    tui_screens_free(v);
    tui_canvas_cleanup(&s.c);
}

/* G: the GC screen reads the Flame window; without one it says why */
static void test_gc_screen(void **state)
{
    (void)state;
    screen s;
    tui_screens *v = open_view("threadprint-deadlocks-jdk25.txt", &s);
    tui_screens_key(v, 'G');
    assert_int_equal(v->screen, TUI_SCREEN_GC);
    const char *t = draw(v, &s);
    assert_non_null(strstr(t, "GGC"));
    assert_non_null(strstr(t, "no recording: the GC screen needs one"));
    /* a window without GC events: the recording's settings had them off */
    jp_profile *p = jp_profile_new();
    v->live->prof.profile = p;
    tui_screens_sync(v);
    t = draw(v, &s);
    assert_non_null(strstr(t, "GC: no GC events in this recording"));
    /* a window with a collection */
    jp_gc_pause ps = {.start_ns = 5, .duration_ns = 12000000, .gc_id = 1};
    snprintf(ps.name, sizeof ps.name, "GC Pause");
    jp_gc_log_pause(&p->gc, &ps);
    jp_gc_collection c = {.start_ns = 5, .gc_id = 1};
    snprintf(c.name, sizeof c.name, "G1New");
    snprintf(c.cause, sizeof c.cause, "G1 Evacuation Pause");
    jp_gc_log_collection(&p->gc, &c);
    tui_screens_sync(v);
    t = draw(v, &s);
    assert_non_null(strstr(t, "window: test window"));
    assert_non_null(strstr(t, "GC: 1 collections, 1 pauses"));
    assert_non_null(strstr(t, "GC Pause of G1New, cause: G1 Evacuation Pause"));
    assert_non_null(strstr(t, "heap dump"));
    tui_screens_free(v);
    tui_canvas_cleanup(&s.c);
}

static bool lines_have(const tui_lines *ls, const char *what)
{
    for (size_t i = 0; i < ls->count; i++)
        if (strstr(ls->items[i].text, what))
            return true;
    return false;
}

/* One set of GC lines for every source: a recording's log and the
 * server's merged answer give the same words; the server's sparkline comes
 * from its points. */
static void test_gc_lines_of_both_sources(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    p->start_ns = 1000000000;
    p->end_ns = 61000000000;
    for (int i = 0; i < 3; i++) {
        jp_gc_pause ps = {.start_ns = p->start_ns + (i + 1) * 10000000000LL,
                          .duration_ns = (i + 1) * 1000000,
                          .gc_id = (uint64_t)i};
        snprintf(ps.name, sizeof ps.name, "GC Pause");
        jp_gc_log_pause(&p->gc, &ps);
    }
    tui_lines a;
    tui_lines_init(&a);
    tui_report_gc(p, 80, 10, &a);
    assert_true(lines_have(&a, "GC: 0 collections, 3 pauses in "));
    assert_true(lines_have(&a, "pause time over the recording (1 column = "));
    assert_true(lines_have(&a, "(from jdk.GCPhasePause)"));
    /* the same summary as the server sends it, with points */
    jp_gc_window w;
    jp_gc_window_compute(&p->gc, 0, 0, 0, 0, &w);
    w.s.from_ns = p->start_ns;
    w.s.to_ns = p->end_ns;
    jp_gc_point pts[4];
    jp_gc_window_points(&w, 1, p->start_ns, p->end_ns, pts, 4);
    json_t *ans =
        json_pack("{s:o,s:o,s:{s:I,s:s}}", "gc", jp_gc_summary_json(&w.s, true, 60000000000LL),
                  "points", jp_gc_points_json(pts, 4), "meta", "covered_ns",
                  (json_int_t)60000000000LL, "percentiles", "estimated");
    tui_gc_data d;
    char why[200];
    assert_true(tui_gc_from_api(ans, &d, why, sizeof why));
    tui_lines b;
    tui_lines_init(&b);
    tui_report_gc_data(&d, NULL, 80, 10, &b);
    assert_true(lines_have(&b, "GC: 0 collections, 3 pauses in "));
    assert_true(lines_have(&b, "p50, p99 estimated"));
    assert_true(lines_have(&b, "pause time over the range (1 column = "));
    /* the summary lines are the same words */
    assert_string_equal(a.items[0].text, b.items[0].text);
    assert_true(lines_have(&b, "heap dump"));
    /* the advice, last: on 80 columns where to look first (the Heap screen)
     * leads, each line fits, and the lines are the whole sentence */
    size_t first = 0;
    while (first < a.count && strncmp(a.items[first].text, "What stays on the heap", 22))
        first++;
    assert_true(first < a.count);
    char all[512] = "";
    for (size_t i = first; i < a.count; i++) {
        assert_true(strlen(a.items[i].text) < 80);
        size_t len = strlen(all);
        snprintf(all + len, sizeof all - len, "%s%s", i > first ? " " : "", a.items[i].text);
    }
    assert_string_equal(all, JP_GC_CANNOT_TELL ".");
    assert_true(lines_have(&a, "a heap dump (jcmd PID GC.heap_dump FILE) only for who holds"));
    tui_lines_reset(&a);
    tui_report_gc(p, 400, 10, &a); /* a wide screen: one line */
    assert_string_equal(a.items[a.count - 1].text, JP_GC_CANNOT_TELL ".");
    tui_gc_data_cleanup(&d);
    json_decref(ans);
    tui_lines_cleanup(&a);
    tui_lines_cleanup(&b);
    jp_profile_free(p);
}

static void test_deadlocks_screen(void **state)
{
    (void)state;
    screen s;
    tui_screens *v = open_view("threadprint-deadlocks-jdk25.txt", &s);
    tui_screens_key(v, TUI_KEY_F7);
    const char *t = draw(v, &s);
    assert_non_null(strstr(t, "F7Deadlocks(2)"));
    assert_non_null(strstr(t, "DEADLOCK 1: 2 threads, confirmed by the JVM: \"mon-deadlock-1\" -> "
                              "\"mon-deadlock-2\" -> \"mon-deadlock-1\""));
    assert_non_null(strstr(t, "held by \"mon-deadlock-2\""));
    assert_non_null(strstr(t, "at live.Deadlocks.transfer(Deadlocks.java:"));
    /* the second cycle is further down: scroll to the end */
    tui_screens_key(v, TUI_KEY_END);
    t = draw(v, &s);
    assert_non_null(strstr(t, "\"rl-deadlock-1\""));
    assert_non_null(strstr(t, "waits for java.util.concurrent.locks.ReentrantLock$NonfairSync@"));
    /* the text report has the same words */
    tui_lines ls;
    tui_lines_init(&ls);
    tui_report_deadlocks(v->live, &ls);
    assert_true(ls.count > 10);
    assert_non_null(strstr(ls.items[0].text, "DEADLOCK 1"));
    tui_lines_cleanup(&ls);
    tui_screens_free(v);
    tui_canvas_cleanup(&s.c);
}

static void test_help_and_tiny(void **state)
{
    (void)state;
    screen s;
    tui_screens *v = open_view("threadprint-deadlocks-jdk17.txt", &s);
    tui_screens_key(v, '?');
    const char *t = draw(v, &s);
    assert_non_null(strstr(t, "F7 or D      Deadlocks"));
    tui_screens_key(v, 'x');
    assert_false(v->help);
    /* any size renders without crashing */
    for (int r = 1; r < 8; r++)
        for (int c = 1; c < 30; c += 7) {
            tui_screens_resize(v, r, c);
            draw(v, &s);
        }
    tui_screens_free(v);
    tui_canvas_cleanup(&s.c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exit_status),
        cmocka_unit_test(test_threads_screen),
        cmocka_unit_test(test_hot_first_and_stack),
        cmocka_unit_test(test_locks_screen),
        cmocka_unit_test(test_deadlocks_screen),
        cmocka_unit_test(test_help_and_tiny),
        cmocka_unit_test(test_status_screen),
        cmocka_unit_test(test_gc_screen),
        cmocka_unit_test(test_gc_lines_of_both_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
