#include "jvm/snapshot_take.h"

#include "base/datapath.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/cleanup.h"
#include "jvm/targetfs.h"
#include "jvm/threadprint.h"

#ifndef JP_BUILD_HELPER_JAR
#define JP_BUILD_HELPER_JAR ""
#endif
#ifndef PKGDATADIR
#define PKGDATADIR "/usr/local/share/jprof"
#endif

#define HELPER_JAR_NAME "jprof-helper-" PACKAGE_VERSION ".jar"

bool jvm_snap_source_parse(const char *s, jvm_snap_source *out)
{
    if (strcmp(s, "auto") == 0)
        *out = JVM_SNAP_AUTO;
    else if (strcmp(s, "helper") == 0)
        *out = JVM_SNAP_HELPER;
    else if (strcmp(s, "thread-print") == 0)
        *out = JVM_SNAP_THREAD_PRINT;
    else
        return false;
    return true;
}

void jvm_snap_opts_init(jvm_snap_opts *o)
{
    o->source = JVM_SNAP_AUTO;
    o->contention = -1;
    o->helper_jar = NULL;
}

jp_err jvm_helper_jar_find(char *buf, size_t len, jp_error *err)
{
    const char *env = getenv("JPROF_HELPER_JAR");
    if (env && *env && access(env, R_OK) == 0) {
        snprintf(buf, len, "%s", env);
        return JP_OK;
    }
    /* next to the program (also a moved or DESTDIR-staged install), the
     * build tree, the configured data directory */
    if (jp_data_find("jprof-helper.jar", JP_BUILD_HELPER_JAR, buf, len))
        return JP_OK;
    return jp_error_set(err, JP_ERR_NOT_FOUND,
                        "jprof-helper.jar not found (set JPROF_HELPER_JAR or install it to %s)",
                        PKGDATADIR);
}

/* ---- helper JSON -> snapshot ---- */

static int64_t jint(const json_t *o, const char *key, int64_t dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

static const char *jstr(jp_snapshot *s, const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return NULL;
    size_t n = json_string_length(v);
    return jp_snapshot_strndup(s, json_string_value(v), n > 1024 ? 1024 : n);
}

static void decode_lock(jp_snapshot *s, const json_t *j, jp_lock_ref *l, jp_lock_kind kind)
{
    l->id = (uint64_t)jint(j, "id", 0);
    const char *c = jstr(s, j, "class");
    l->class_name = c ? c : "";
    l->kind = kind;
    int64_t d = jint(j, "depth", -1);
    l->frame = d >= 0 && d < JP_SNAPSHOT_MAX_FRAMES ? (int32_t)d : -1;
}

/* Synchronizers the JVM tracks are AbstractOwnableSynchronizers; a lock
 * waited on while parked is one too unless it is a plain blocker object. */
static void decode_wait(jp_snapshot *s, const json_t *j, jp_thread *t)
{
    const json_t *lock = json_object_get(j, "lock");
    const char *kind = json_string_value(json_object_get(j, "wait"));
    if (!json_is_object(lock) || !kind)
        return;
    t->wait_kind = strcmp(kind, "enter") == 0  ? JP_WAIT_ENTER
                   : strcmp(kind, "wait") == 0 ? JP_WAIT_OBJECT
                                               : JP_WAIT_PARK;
    decode_lock(s, lock, &t->wait_lock,
                t->wait_kind == JP_WAIT_PARK ? JP_LOCK_SYNCHRONIZER : JP_LOCK_MONITOR);
    t->wait_lock.frame = 0;
    t->wait_owner_id = jint(j, "lock_owner_id", -1);
}

static void decode_thread(jp_snapshot *s, const json_t *j)
{
    jp_thread *t = jp_snapshot_add_thread(s);
    if (!t)
        return;
    t->id = jint(j, "id", -1);
    const char *name = jstr(s, j, "name");
    t->name = name ? name : "";
    t->daemon = json_is_true(json_object_get(j, "daemon"));
    const char *st = json_string_value(json_object_get(j, "state"));
    t->state = st ? jp_thread_state_parse(st, strlen(st)) : JP_TSTATE_UNKNOWN;
    t->cpu_ns = jint(j, "cpu_ns", -1);
    t->blocked_count = jint(j, "blocked_count", -1);
    t->waited_count = jint(j, "waited_count", -1);
    int64_t bt = jint(j, "blocked_time_ms", -1), wt = jint(j, "waited_time_ms", -1);
    t->blocked_time_ns = bt >= 0 ? bt * 1000000 : -1;
    t->waited_time_ns = wt >= 0 ? wt * 1000000 : -1;
    decode_wait(s, j, t);
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(j, "stack"), i, v)
    {
        jp_snap_frame *f = jp_thread_add_frame(s, t);
        if (!f)
            break;
        const char *c = jstr(s, v, "c"), *m = jstr(s, v, "m");
        f->class_name = c ? c : "";
        f->method = m ? m : "";
        f->file = jstr(s, v, "f");
        int64_t line = jint(v, "l", -1);
        f->line = line >= -2 && line <= INT32_MAX ? (int32_t)line : -1;
    }
    json_array_foreach(json_object_get(j, "monitors"), i, v)
    {
        jp_lock_ref *l = jp_thread_add_held(s, t);
        if (!l)
            break;
        decode_lock(s, v, l, JP_LOCK_MONITOR);
    }
    json_array_foreach(json_object_get(j, "synchronizers"), i, v)
    {
        jp_lock_ref *l = jp_thread_add_held(s, t);
        if (!l)
            break;
        decode_lock(s, v, l, JP_LOCK_SYNCHRONIZER);
    }
}

static void decode_deadlocks(jp_snapshot *s, const json_t *arr)
{
    size_t i, k;
    const json_t *cyc, *id;
    json_array_foreach(arr, i, cyc)
    {
        size_t n = json_array_size(cyc);
        if (n < 1 || n > s->count)
            continue;
        size_t *idx = jp_xcalloc(n, sizeof *idx);
        size_t m = 0;
        json_array_foreach(cyc, k, id)
        {
            long t = json_is_integer(id) ? jp_snapshot_find_id(s, json_integer_value(id)) : -1;
            if (t >= 0)
                idx[m++] = (size_t)t;
        }
        if (m == n)
            jp_snapshot_add_jvm_deadlock(s, idx, m);
        free(idx);
    }
}

jp_err jvm_helper_json_parse(const char *json, size_t len, jp_snapshot **out, jp_error *err)
{
    *out = NULL;
    if (len > JVM_HELPER_MAX_JSON)
        return jp_error_set(err, JP_ERR_LIMIT, "helper output exceeds %u bytes",
                            JVM_HELPER_MAX_JSON);
    json_error_t jerr;
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return jp_error_set(err, JP_ERR_FORMAT, "helper output, line %d: %s", jerr.line, jerr.text);
    const json_t *threads = json_object_get(root, "threads");
    if (!json_is_object(root) || jint(root, "format", 0) != 1 || !json_is_array(threads)) {
        json_decref(root);
        return jp_error_set(err, JP_ERR_FORMAT, "helper output: not a format-1 snapshot");
    }
    jp_snapshot *s = jp_snapshot_new("helper");
    int64_t ms = jint(root, "time_ms", 0), up = jint(root, "uptime_ms", -1);
    s->taken_ns = ms > 0 && ms < INT64_MAX / 1000000 ? ms * 1000000 : jp_time_now_ns();
    s->uptime_ns = up >= 0 && up < INT64_MAX / 1000000 ? up * 1000000 : -1;
    size_t i;
    const json_t *v;
    json_array_foreach(threads, i, v)
    {
        if (json_is_object(v))
            decode_thread(s, v);
    }
    decode_deadlocks(s, json_object_get(root, "deadlocks"));
    json_decref(root);
    jp_snapshot_resolve_owners(s);
    *out = s;
    return JP_OK;
}

/* ---- taking snapshots ---- */

/* Threads of the target from /proc (JVM-internal ones included), -1 unknown. */
static long proc_thread_count(const jvm_proc *t)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/status", (int)t->pid);
    ssize_t n = jvm_read_small_file(path, buf, sizeof buf);
    if (n <= 0)
        return -1;
    const char *p = strstr(buf, "\nThreads:");
    if (!p)
        return -1;
    char *end;
    long v = strtol(p + 9, &end, 10);
    return end == p + 9 ? -1 : v;
}

static jp_err take_thread_print(const jvm_proc *t, const jvm_attach_opts *ao, jp_snapshot **out,
                                jp_error *err)
{
    jvm_reply r;
    int64_t now = jp_time_now_ns();
    jp_err rc = jvm_jcmd(t, ao, "Thread.print -l", &r, err);
    if (rc != JP_OK)
        return rc;
    rc = jvm_threadprint_parse(r.text, r.len, now, out, err);
    jvm_reply_cleanup(&r);
    return rc;
}

/* The helper jar has one fixed name in the target (so repeated loads reuse
 * the loaded class), so two jprof processes on one JVM (jprof-top and the
 * agent, say) must not interleave copy, load and delete: one would delete the
 * jar the other is loading. They take turns on a lock file next to it; the
 * holder removes it, so a waiter re-checks that it locked the file still
 * named there. Returns the locked fd, or -1 with err set. */
static int helper_lock(const jvm_proc *t, jvm_tfile *lk, jp_error *err)
{
    jvm_tfile_fixed(t, "jprof-helper.lock", lk);
    int64_t deadline = jp_time_mono_ns() + 10 * JP_NS_PER_SEC;
    for (;;) {
        int fd = open(lk->host, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            jp_error_set(err, errno == EACCES || errno == EPERM ? JP_ERR_PERMISSION : JP_ERR_IO,
                         "%s: %s", lk->host, strerror(errno));
            return -1;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            struct stat a, b;
            if (fstat(fd, &a) == 0 && stat(lk->host, &b) == 0 && a.st_ino == b.st_ino &&
                a.st_dev == b.st_dev) {
                lk->cleanup = jvm_cleanup_register_file(lk->host);
                return fd;
            }
        }
        close(fd);
        if (jp_time_mono_ns() > deadline) {
            /* JP_ERR_IO: auto mode falls back to Thread.print */
            jp_error_set(err, JP_ERR_IO, "another jprof process kept the helper lock %s for 10 s",
                         lk->host);
            return -1;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void helper_unlock(jvm_tfile *lk, int fd)
{
    jvm_tfile_remove(lk); /* unlink first: waiters then see a new file */
    close(fd);
}

static jp_err take_helper_locked(const jvm_proc *t, const jvm_attach_opts *ao,
                                 const jvm_snap_opts *o, jp_snapshot **out, jp_error *err);

static jp_err take_helper(const jvm_proc *t, const jvm_attach_opts *ao, const jvm_snap_opts *o,
                          jp_snapshot **out, jp_error *err)
{
    jvm_tfile lk;
    int fd = helper_lock(t, &lk, err);
    if (fd < 0)
        return err ? err->code : JP_ERR_IO;
    jp_err rc = take_helper_locked(t, ao, o, out, err);
    helper_unlock(&lk, fd);
    return rc;
}

static jp_err take_helper_locked(const jvm_proc *t, const jvm_attach_opts *ao,
                                 const jvm_snap_opts *o, jp_snapshot **out, jp_error *err)
{
    char jar[1024];
    if (o->helper_jar)
        snprintf(jar, sizeof jar, "%s", o->helper_jar);
    else if (jvm_helper_jar_find(jar, sizeof jar, err) != JP_OK)
        return err ? err->code : JP_ERR_NOT_FOUND;
    jvm_tfile tjar, tout;
    jvm_tfile_fixed(t, HELPER_JAR_NAME, &tjar);
    jp_err rc = jvm_tfile_copy_in(t, jar, &tjar, err);
    if (rc != JP_OK)
        goto out_jar;
    rc = jvm_tfile_name(t, ".json", &tout, err);
    if (rc != JP_OK)
        goto out_jar;
    /* out= exists, empty, while we wait: a helper that finishes after we
     * gave up (a timeout, a signal) finds it gone and leaves nothing */
    rc = jvm_tfile_write(t, &tout, "", 0, err);
    if (rc != JP_OK) {
        jvm_tfile_remove(&tout);
        goto out_jar;
    }
    /* the helper writes <out>.part and renames it: a second signal while
     * it runs must find that name in the table too */
    char part[sizeof tout.host + 8];
    snprintf(part, sizeof part, "%s.part", tout.host);
    int part_cleanup = jvm_cleanup_register_file(part);
    char opts[600];
    snprintf(opts, sizeof opts, "%s=out=%s,claimed=1%s", tjar.inner, tout.inner,
             o->contention < 0 ? ""
             : o->contention   ? ",contention=on"
                               : ",contention=off");
    jvm_reply r;
    rc = jvm_attach_load(t, ao, "instrument", false, opts, &r, err);
    if (rc == JP_OK) {
        jvm_reply_cleanup(&r);
        char *data = NULL;
        size_t len = 0;
        rc = jvm_tfile_read(&tout, JVM_HELPER_MAX_JSON, &data, &len, err);
        if (rc == JP_OK)
            rc = jvm_helper_json_parse(data, len, out, err);
        free(data);
    }
    jvm_tfile_remove(&tout);
    unlink(part); /* the helper's own temp file, if it died half-way */
    jvm_cleanup_unregister(part_cleanup);
out_jar:
    jvm_tfile_remove(&tjar);
    return rc;
}

/* Helper failures that thread-print can work around. */
static bool fallback_ok(jp_err rc)
{
    return rc == JP_ERR_AGENT_REFUSED || rc == JP_ERR_PROTOCOL || rc == JP_ERR_NOT_FOUND ||
           rc == JP_ERR_FORMAT || rc == JP_ERR_IO || rc == JP_ERR_LIMIT;
}

jp_err jvm_snapshot_take(const jvm_proc *t, const jvm_attach_opts *ao, const jvm_snap_opts *o,
                         jp_snapshot **out, jp_error *fallback, jp_error *err)
{
    jvm_snap_opts defaults;
    if (!o) {
        jvm_snap_opts_init(&defaults);
        o = &defaults;
    }
    *out = NULL;
    if (fallback)
        jp_error_init(fallback);
    if (o->source == JVM_SNAP_THREAD_PRINT)
        return take_thread_print(t, ao, out, err);
    long nthreads = o->source == JVM_SNAP_AUTO ? proc_thread_count(t) : -1;
    if (nthreads > JVM_SNAP_AUTO_MAX_HELPER_THREADS) {
        /* Measured (docs/PERFORMANCE.md): with 2,000 threads the helper costs
         * the target ~135 ms, Thread.print ~60 ms; both carry the lock data. */
        if (fallback)
            jp_error_set(fallback, JP_OK,
                         "%ld threads: Thread.print is cheaper for the target than the helper",
                         nthreads);
        return take_thread_print(t, ao, out, err);
    }
    jp_error herr;
    jp_error_init(&herr);
    jp_err rc = take_helper(t, ao, o, out, &herr);
    if (rc == JP_OK)
        return JP_OK;
    if (o->source == JVM_SNAP_HELPER || !fallback_ok(rc)) {
        if (err)
            *err = herr;
        return rc;
    }
    if (fallback)
        *fallback = herr;
    return take_thread_print(t, ao, out, err);
}
