/* jprof-probe's developer commands: exercise src/jvm from the shell
 * (`jprof-probe list`, `snapshot PID`, `jfr PID S`, `engine PID ...`).
 * Profilers only through the engine interface (jvm/engine.h), as the
 * probe's protocol, jprof-top and the agent drive them: `jfr` is a viewer's
 * rolling window, `engine` a collector's window. Exit code 10 + jp_err on
 * failure. */
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "base/stopsig.h"
#include "base/error.h"
#include "jvm/attach.h"
#include "jvm/cleanup.h"
#include "jvm/engine.h"
#include "jvm/jfc.h"
#include "jvm/proc.h"
#include "jvm/snapshot_take.h"
#include "jvm/threadprint.h"
#include "model/analyze.h"
#include "model/snapshot.h"
#include "wire/snapshot_json.h"
#include "probe/probe_dev.h"

int probe_dev_usage(void)
{
    fprintf(stderr, "usage: jprof-probe list\n"
                    "       jprof-probe raw PID CMD [ARG0 [ARG1 [ARG2]]]\n"
                    "       jprof-probe parse FILE   (Thread.print text)\n"
                    "       jprof-probe snapshot PID [auto|helper|thread-print]\n"
                    "       jprof-probe busy PID [auto|helper|thread-print] [MS]\n"
                    "       jprof-probe json PID [auto|helper|thread-print] [MS]\n"
                    "       jprof-probe jfr PID SECONDS [OUT.jfr]\n"
                    "       jprof-probe jfr-check PID\n"
                    "       jprof-probe engine PID jfr|LIBASYNCPROFILER SECONDS [KIND,...]\n");
    return 3;
}

static void print_analysis(const jp_snapshot *s)
{
    char buf[512], lb[512];
    printf("source=%s threads=%zu jvm_deadlocks=%zu\n", s->source, s->count, s->njvm_deadlocks);
    for (size_t i = 0; i < s->count; i++) {
        const jp_thread *t = &s->threads[i];
        printf("thread id=%lld nid=%lld name=\"%s\" state=%s cpu_ns=%lld frames=%zu held=%zu",
               (long long)t->id, (long long)t->native_id, t->name, jp_thread_state_name(t->state),
               (long long)t->cpu_ns, t->nframes, t->nheld);
        if (t->wait_kind != JP_WAIT_NONE) {
            jp_lock_ref_format(&t->wait_lock, lb, sizeof lb);
            printf(" %s=%s owner=%s", jp_wait_kind_name(t->wait_kind), lb,
                   t->wait_owner_name ? t->wait_owner_name : "-");
        }
        if (t->nframes) {
            jp_snap_frame_format(&t->frames[0], buf, sizeof buf);
            printf(" top=%s", buf);
        }
        printf("\n");
    }
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    for (size_t i = 0; i < dl.count; i++) {
        printf("deadlock %zu%s%s:", i + 1, dl.items[i].jvm_confirmed ? " (jvm-confirmed)" : "",
               dl.items[i].mixed ? " (mixed)" : "");
        for (size_t k = 0; k < dl.items[i].count; k++) {
            const jp_deadlock_member *m = &dl.items[i].members[k];
            jp_lock_ref_format(&m->waits_for, lb, sizeof lb);
            jp_lock_ref_format(&m->holds, buf, sizeof buf);
            printf(" [\"%s\" holds %s waits %s]", s->threads[m->thread].name, buf, lb);
        }
        printf("\n");
    }
    jp_deadlock_list_cleanup(&dl);
    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    for (size_t i = 0; i < lg.count; i++) {
        const jp_lock_group *g = &lg.items[i];
        jp_lock_ref_format(&g->lock, lb, sizeof lb);
        printf("lock %s owner=%s blocks=%zu waiters=", lb,
               g->owner >= 0 ? s->threads[g->owner].name : "-", g->owner_blocks);
        for (size_t k = 0; k < g->nwaiters; k++)
            printf("%s%s", k ? "," : "", s->threads[g->waiters[k]].name);
        printf("\n");
    }
    jp_lock_group_list_cleanup(&lg);
}

static int fail(const jp_error *e)
{
    fprintf(stderr, "jprof-probe: %s (%s)\n", e->msg, jp_strerror(e->code));
    return 10 + (int)e->code;
}

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void print_busy(const jp_snapshot *a, const jp_snapshot *b)
{
    jp_busy_list bl;
    jp_analyze_busy(a, b, &bl);
    printf("interval_ms=%.0f\n", (double)bl.interval_ns / 1e6);
    for (size_t i = 0; i < bl.count && i < 15; i++)
        printf("busy %6.1f%% %-8s %s\n", bl.items[i].cpu_pct,
               jp_cpu_confidence_name(bl.items[i].confidence), b->threads[bl.items[i].thread].name);
    jp_busy_list_cleanup(&bl);
}

static void print_json(const jvm_proc *t, const jp_snapshot *a, const jp_snapshot *b)
{
    jp_snapjson_target tg = {
        .pid = t->pid, .main_class = t->main_class, .user = t->user, .start_ns = t->start_ns};
    char *text = jp_snapshot_json_text(b, a, &tg, NULL, 2);
    puts(text);
    free(text);
}

static int cmd_snapshot(const jvm_proc *t, int argc, char **argv, int mode)
{
    jp_error err, why;
    jp_error_init(&err);
    jvm_snap_opts o;
    jvm_snap_opts_init(&o);
    if (argc > 3 && !jvm_snap_source_parse(argv[3], &o.source))
        return probe_dev_usage();
    jp_snapshot *a = NULL, *b = NULL;
    if (jvm_snapshot_take(t, NULL, &o, &a, &why, &err) != JP_OK)
        return fail(&err);
    if (why.code != JP_OK)
        fprintf(stderr, "jprof-probe: helper failed, used thread-print: %s\n", why.msg);
    if (mode == 0) {
        print_analysis(a);
        jp_snapshot_free(a);
        return 0;
    }
    long ms = argc > 4 ? strtol(argv[4], NULL, 10) : 1000;
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    if (jvm_snapshot_take(t, NULL, &o, &b, &why, &err) != JP_OK) {
        jp_snapshot_free(a);
        return fail(&err);
    }
    if (mode == 2) {
        print_json(t, a, b);
    } else {
        printf("source=%s\n", b->source);
        print_busy(a, b);
    }
    jp_snapshot_free(a);
    jp_snapshot_free(b);
    return 0;
}

/* Sleeps up to secs; false when a signal asked us to stop. */
static bool wait_secs(long secs)
{
    for (long i = 0; i < secs * 10 && !stop_requested; i++) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000000};
        nanosleep(&ts, NULL);
    }
    return !stop_requested;
}

static int write_file(const char *path, const uint8_t *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(data, 1, len, f) == len;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok)
        fprintf(stderr, "jprof-probe: cannot write %s\n", path);
    return ok ? 0 : 1;
}

/* A rolling JFR window (settings "profile", 30 s) through the engine
 * interface as jprof-top's viewer runs it, dumped after secs into OUT (when
 * given) and stopped; a signal stops it and leaves nothing behind. */
static int cmd_jfr(const jvm_proc *t, int argc, char **argv)
{
    jp_error err;
    jp_error_init(&err);
    long secs = argc > 3 ? strtol(argv[3], NULL, 10) : 5;
    jvm_engine_opts eo;
    jvm_engine_opts_init(&eo);
    eo.role = JVM_ENGINE_VIEWER;
    eo.jfr_settings = "profile";
    jvm_engine *e = NULL;
    if (jvm_engine_new(t, &eo, &e, &err) != JP_OK)
        return fail(&err);
    jvm_engine_window w;
    jvm_engine_window_init(&w);
    if (jvm_engine_start(e, &w, &err) != JP_OK) {
        jvm_engine_free(e);
        return fail(&err);
    }
    printf("started %s\n", jvm_engine_session_name(e));
    fflush(stdout);
    if (!wait_secs(secs)) {
        /* what a TUI does: the handler only set the flag; clean up here */
        jvm_cleanup_run_all();
        printf("interrupted, cleaned up\n");
        return 130;
    }
    uint8_t *data = NULL;
    size_t len = 0;
    int rc = 0;
    if (jvm_engine_fetch(e, &data, &len, &err) != JP_OK)
        rc = fail(&err);
    else
        printf("dumped %zu bytes\n", len);
    if (rc == 0 && argc > 4)
        rc = write_file(argv[4], data, len);
    free(data);
    char name[64];
    snprintf(name, sizeof name, "%s", jvm_engine_session_name(e));
    if (jvm_engine_stop(e, &err) != JP_OK)
        rc = fail(&err);
    else
        printf("stopped %s\n", name);
    jvm_engine_free(e);
    return rc;
}

static int engine_window(jvm_engine *e, const jvm_proc *t, long secs, uint32_t kinds)
{
    jp_error err;
    jp_error_init(&err);
    jfr_options jo;
    jfr_options_init(&jo);
    jo.kinds = kinds;
    jfr_report rep;
    jfr_report_init(&rep);
    jp_profile *p = jp_profile_new();
    bool found = false, salvaged = false;
    jp_err rc = jvm_engine_foreign(e, &err);
    if (rc == JP_OK)
        rc = jvm_engine_recover(e, &jo, p, &rep, &found, &salvaged, &err);
    if (rc == JP_OK && found)
        printf("recovered an earlier session%s\n", salvaged ? " and its data" : "");
    jvm_engine_window w;
    jvm_engine_window_init(&w);
    w.kinds = kinds;
    jvm_reply r;
    if (rc == JP_OK && jvm_jcmd(t, NULL, "VM.version", &r, NULL) == JP_OK) {
        w.jdk_major = jvm_jdk_major(r.text);
        jvm_reply_cleanup(&r);
    }
    if (rc == JP_OK)
        rc = jvm_engine_start(e, &w, &err);
    if (rc == JP_OK) {
        printf("started %s\n", jvm_engine_name(e));
        fflush(stdout);
        if (!wait_secs(secs)) {
            jvm_cleanup_run_all(); /* the handler only set the flag */
            printf("interrupted, cleaned up\n");
            jp_profile_free(p);
            return 130;
        }
        jp_profile_free(p);
        p = jp_profile_new();
        jfr_report_init(&rep);
        rc = jvm_engine_finish(e, &jo, p, &rep, &err);
    }
    for (int k = 0; rc == JP_OK && k < JP_KIND_COUNT; k++)
        if (p->kinds[k].events)
            printf("kind=%s events=%llu stacks=%zu\n", jp_kind_name((jp_kind)k),
                   (unsigned long long)p->kinds[k].events, p->kinds[k].count);
    if (rc == JP_OK && rep.partial)
        printf("partial: %s\n", rep.error.msg);
    jp_profile_free(p);
    return rc == JP_OK ? 0 : fail(&err);
}

/* One collector window of the engine interface (jvm/engine.h), the way
 * jprof-agent and jprof-probe drive it; everything is removed afterwards. */
static int cmd_engine(const jvm_proc *t, int argc, char **argv)
{
    if (argc < 5)
        return probe_dev_usage();
    jp_error err;
    jp_error_init(&err);
    jvm_engine_opts eo;
    jvm_engine_opts_init(&eo);
    eo.session = "jprof-probe-dev";
    if (strcmp(argv[3], "jfr") != 0) {
        eo.kind = JVM_ENGINE_ASPROF;
        eo.asprof_lib = argv[3];
    }
    uint32_t kinds = 1u << JP_KIND_CPU | 1u << JP_KIND_ALLOC | 1u << JP_KIND_LOCK;
    if (argc > 5) {
        kinds = 0;
        char list[128];
        snprintf(list, sizeof list, "%s", argv[5]);
        char *save = NULL;
        for (char *k = strtok_r(list, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
            jp_kind kind;
            if (!jp_kind_parse(k, &kind))
                return probe_dev_usage();
            kinds |= 1u << kind;
        }
    }
    jvm_engine *e = NULL;
    if (jvm_engine_new(t, &eo, &e, &err) != JP_OK)
        return fail(&err);
    int rc = engine_window(e, t, strtol(argv[4], NULL, 10), kinds);
    jvm_engine_free(e); /* stops what still runs, removes our files */
    return rc;
}

int probe_dev_main(int argc, char **argv)
{
    if (argc < 2)
        return probe_dev_usage();
    jp_error err;
    jp_error_init(&err);
    if (strcmp(argv[1], "list") == 0) {
        jvm_proc_list l;
        if (jvm_proc_list_local(&l, &err) != JP_OK)
            return fail(&err);
        for (size_t i = 0; i < l.count; i++)
            printf("%d\t%s\t%.0fs\t%s\n", (int)l.items[i].pid, l.items[i].user,
                   (double)l.items[i].uptime_ns / 1e9, l.items[i].main_class);
        jvm_proc_list_cleanup(&l);
        return 0;
    }
    if (argc < 3)
        return probe_dev_usage();
    if (strcmp(argv[1], "parse") == 0) {
        FILE *f = fopen(argv[2], "rb");
        if (!f)
            return 2;
        static char text[16 << 20];
        size_t n = fread(text, 1, sizeof text, f);
        fclose(f);
        jp_snapshot *s = NULL;
        if (jvm_threadprint_parse(text, n, 0, &s, &err) != JP_OK)
            return fail(&err);
        print_analysis(s);
        jp_snapshot_free(s);
        return 0;
    }
    pid_t pid = (pid_t)strtol(argv[2], NULL, 10);
    jvm_proc t;
    if (jvm_proc_open(pid, &t, &err) != JP_OK)
        return fail(&err);
    jp_stop_signals(on_signal);
    if (strcmp(argv[1], "snapshot") == 0)
        return cmd_snapshot(&t, argc, argv, 0);
    if (strcmp(argv[1], "busy") == 0)
        return cmd_snapshot(&t, argc, argv, 1);
    if (strcmp(argv[1], "json") == 0)
        return cmd_snapshot(&t, argc, argv, 2);
    if (strcmp(argv[1], "jfr") == 0)
        return cmd_jfr(&t, argc, argv);
    if (strcmp(argv[1], "engine") == 0)
        return cmd_engine(&t, argc, argv);
    if (strcmp(argv[1], "jfr-check") == 0) {
        jvm_reply r;
        if (jvm_jcmd(&t, NULL, "JFR.check", &r, &err) != JP_OK)
            return fail(&err);
        fputs(r.text, stdout);
        jvm_reply_cleanup(&r);
        return 0;
    }
    if (strcmp(argv[1], "raw") == 0 && argc >= 4) {
        jvm_reply r;
        if (jvm_attach_cmd(&t, NULL, argv[3], argc > 4 ? argv[4] : NULL, argc > 5 ? argv[5] : NULL,
                           argc > 6 ? argv[6] : NULL, &r, &err) != JP_OK)
            return fail(&err);
        printf("code=%d\n%s", r.code, r.text);
        jvm_reply_cleanup(&r);
        return 0;
    }
    return probe_dev_usage();
}

bool probe_dev_is_command(const char *name)
{
    static const char *const cmds[] = {"list", "raw", "parse",     "snapshot", "busy",
                                       "json", "jfr", "jfr-check", "engine"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(name, cmds[i]) == 0)
            return true;
    return false;
}
