/* engine.h - one interface to the profiling engines jprof drives in a live
 * JVM: the JDK Flight Recorder and async-profiler.
 *
 * Where engines live: this header is the only way into them. The ops table
 * and the code shared by both engines (session marker, reading a finished
 * window, cleanup registration) are in jvm/engine.c and jvm/engine_int.h;
 * each engine is one file: jvm/engine_jfr.c (JFR.start/JFR.stop/JFR.dump
 * over jcmd, jprof's own .jfc of jvm/jfc.h) and jvm/engine_asprof.c
 * (libasyncProfiler copied into the target's /tmp/jprof and driven with
 * `load <lib> true <args>`). Everything an engine knows - its command
 * lines, its log lines, the files it leaves in the target, the session
 * marker - stays in those files. jprof-agent (agent/collect.c),
 * jprof-top's local-pid source (tui/source_pid.c) and jprof-probe call only the
 * functions below. A new engine is a new engine_*.c with its ops table.
 *
 * Two roles, chosen when the engine is made:
 *
 *   JVM_ENGINE_COLLECTOR  back-to-back windows of one session per JVM that
 *       outlives this process (jprof-agent, jprof-probe): a fixed session
 *       name, a marker /tmp/jprof/<what>-session-<nspid> in the target
 *       while it runs, so a later run finds it (jvm_engine_recover).
 *         start -> [window] -> finish (stop + read) -> start -> ...
 *   JVM_ENGINE_VIEWER     a rolling window read again and again while it
 *       runs (jprof-top's Flame screen): names unique to this process, no
 *       marker; with async-profiler a per-JVM lock so two viewers never
 *       drive one profiler.
 *         start -> peek -> peek -> ... -> stop
 *
 * A typical collector (error handling left out):
 *
 *   jvm_engine_opts o; jvm_engine_opts_init(&o);
 *   o.kind = JVM_ENGINE_ASPROF; o.asprof_lib = "/opt/ap/libasyncProfiler.so";
 *   jvm_engine *e; jvm_engine_new(&proc, &o, &e, &err);
 *   if (jvm_engine_foreign(e, &err) == JP_ERR_CONFLICT) ...leave the JVM alone
 *   jvm_engine_recover(e, &jo, prof, &rep, &found, &salvaged, &err);
 *   jvm_engine_window w; jvm_engine_window_init(&w); w.kinds = ...;
 *   jvm_engine_start(e, &w, &err);
 *   ... wait the window ...
 *   jvm_engine_finish(e, &jo, prof, &rep, &err);   (a jp_profile of the window)
 *   jvm_engine_release(e); jvm_engine_free(e);
 *
 * `jprof-probe engine PID jfr|LIB SECONDS [KINDS]` (src/probe/probe_dev.c)
 * runs exactly this from a shell.
 *
 * Errors: every function that can fail returns a jp_err and fills err (may
 * be NULL) with a one-line message naming the pid and what failed. Attach
 * errors keep their codes (JP_ERR_PERMISSION, JP_ERR_TIMEOUT,
 * JP_ERR_ATTACH_DISABLED, JP_ERR_AGENT_REFUSED, JP_ERR_EXITED,
 * JP_ERR_NOT_FOUND); an engine that answers but refuses is
 * JP_ERR_PROTOCOL (async-profiler's own "[ERROR]" log line in the message
 * when it wrote one); someone else's profiler is JP_ERR_CONFLICT; a window
 * too big to read is JP_ERR_LIMIT.
 *
 * Blocking: every call that talks to the JVM blocks for the attach round
 * trip, bounded by opts.attach (default: 6 s to connect, 30 s for a reply);
 * nothing waits for a window to pass - the caller owns the clock.
 *
 * Memory and lifetime: jvm_engine is heap, made by jvm_engine_new and freed
 * by jvm_engine_free (NULL is a no-op), which stops what runs and removes
 * what the engine left in the target. While a session runs the engine
 * holds an undo action in jvm/cleanup.h (stop quietly; a collector also
 * removes its files and marker) and every file it leaves is registered
 * there too, so a program that calls jvm_cleanup_run_all() on a signal
 * leaves the target as it was. Strings in jvm_engine_opts are borrowed
 * and must outlive the engine. Profiles are the caller's: pass an empty
 * one from jp_profile_new(); the engine adds the window to it. Not
 * thread-safe (nor is jvm/cleanup.h): one thread drives its engines, one
 * after the other (attach forks). */
#ifndef JP_JVM_ENGINE_H
#define JP_JVM_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "jfr/jfr.h"
#include "jvm/attach.h"
#include "jvm/proc.h"
#include "model/profile.h"

typedef struct jvm_engine jvm_engine;

typedef enum jvm_engine_kind {
    JVM_ENGINE_JFR,   /* the JDK Flight Recorder */
    JVM_ENGINE_ASPROF /* async-profiler (opts.asprof_lib) */
} jvm_engine_kind;

typedef enum jvm_engine_role {
    JVM_ENGINE_COLLECTOR, /* windows of one recoverable session per JVM (agent, probe) */
    JVM_ENGINE_VIEWER     /* a rolling window, peeked at while it runs (jprof-top) */
} jvm_engine_role;

/* The JFR settings that ask only for the events jprof reads (jvm/jfc.h). */
#define JVM_ENGINE_JFR_OWN "jprof"

typedef struct jvm_engine_opts {
    jvm_engine_kind kind;     /* default JVM_ENGINE_JFR */
    jvm_engine_role role;     /* default JVM_ENGINE_COLLECTOR */
    const char *session;      /* COLLECTOR: the session's name, "jprof-<what>"; default
                                 "jprof-agent" (JFR recording name, marker
                                 /tmp/jprof/<what>-session-<nspid>) */
    const char *collector;    /* COLLECTOR: written into the marker; default = session */
    const char *asprof_lib;   /* ASPROF: host path of libasyncProfiler.so (ours to copy) */
    const char *jfr_settings; /* JFR: JVM_ENGINE_JFR_OWN (default), or "profile",
                                 "default" or a .jfc path inside the target */
    jvm_attach_opts attach;   /* timeouts of every attach call */
} jvm_engine_opts;

void jvm_engine_opts_init(jvm_engine_opts *o);

/* What one window records. */
typedef struct jvm_engine_window {
    uint32_t kinds;          /* bit (1 << jp_kind); the engine records what it can */
    int jdk_major;           /* from VM.version (jvm_jdk_major), 0 unknown */
    int64_t cpu_interval_ns; /* cpu sampling period; 0: the engine's default */
    /* > 0 the value; 0 jprof's defaults (wall 20 ms, alloc every 512 KiB,
     * lock 1 ms with async-profiler, 10 ms with JFR); < 0 async-profiler's
     * own defaults. Wall and alloc are async-profiler's only. */
    int64_t wall_interval_ns;
    int64_t alloc_interval_bytes;
    int64_t lock_threshold_ns;
    int64_t span_ns; /* VIEWER: the rolling window peek returns (default 30 s) */
} jvm_engine_window;

/* cpu|alloc|lock, everything else 0 (engine defaults), span 30 s. */
void jvm_engine_window_init(jvm_engine_window *w);

/* Makes an engine for target t (copied; nothing is sent to the JVM yet).
 * JP_ERR_USAGE when the options do not fit (no library for ASPROF, a
 * session name not starting with "jprof-"). */
jp_err jvm_engine_new(const jvm_proc *t, const jvm_engine_opts *o, jvm_engine **out, jp_error *err);

/* Stops a running session quietly (its data is lost), removes every file
 * of ours in the target (jvm_engine_release) and frees. NULL is a no-op. */
void jvm_engine_free(jvm_engine *e);

jvm_engine_kind jvm_engine_kind_of(const jvm_engine *e);
/* "jfr" or "async-profiler": the engine's word in statuses and markers. */
const char *jvm_engine_name(const jvm_engine *e);
/* A session of ours runs (between start and finish/stop). */
bool jvm_engine_running(const jvm_engine *e);
/* The running session's name in the engine's own terms (a JFR recording:
 * the collector's session name, or a viewer's "jprof-<ourpid>-<n>"); the
 * session name for async-profiler. Valid until the next call. */
const char *jvm_engine_session_name(const jvm_engine *e);
/* JFR on JDK 25+: jdk.CPUTimeSample is recorded too (kind cputime). */
bool jvm_engine_records_cputime(const jvm_engine *e, const jvm_engine_window *w);
/* Kinds this engine cannot record (bit mask of those asked for in kinds):
 * the JDK engine has no wall, nativemem, live or nativelock. */
uint32_t jvm_engine_unsupported(const jvm_engine *e, uint32_t kinds);

/* JP_ERR_CONFLICT (with a message naming the library) when someone else's
 * async-profiler is mapped in the target (/proc/PID/maps). For the
 * async-profiler engine its own copy (this session's name) is not a
 * conflict; for the JFR engine any async-profiler is, as jprof-agent has
 * always treated it. Reads the maps only: no attach. */
jp_err jvm_engine_foreign(jvm_engine *e, jp_error *err);

/* COLLECTOR, once before the first start: finds a session of an earlier
 * run of ours (a crash, kill -9) and takes it over: stops it and reads what
 * it recorded into out. *found says a session (or its marker) was there;
 * *salvaged says out holds its data (rep says how much; rep->partial when
 * the data could not be read, and nothing is returned). Errors only when
 * the JVM could not be asked. */
jp_err jvm_engine_recover(jvm_engine *e, const jfr_options *jo, jp_profile *out, jfr_report *rep,
                          bool *found, bool *salvaged, jp_error *err);

/* Starts a session recording w->kinds (installs the library first when
 * needed). COLLECTOR: writes the marker. JP_ERR_USAGE when nothing the
 * engine records is asked for. On failure nothing runs. */
jp_err jvm_engine_start(jvm_engine *e, const jvm_engine_window *w, jp_error *err);

/* COLLECTOR: ends the running window and parses what it recorded into out
 * (the kinds and options of jo; jo->from/to are not set here). The file in
 * the target is read with O_NOFOLLOW, through /proc/PID/root, and deleted.
 * A damaged recording is no error: rep->partial says so and out holds what
 * was read. After the call no session runs, whatever the result. */
jp_err jvm_engine_finish(jvm_engine *e, const jfr_options *jo, jp_profile *out, jfr_report *rep,
                         jp_error *err);

/* VIEWER: parses the last w->span_ns of the running session into out,
 * leaving it running (async-profiler starts a fresh session each span and
 * joins the previous one in). *live_tail: the data ended in the chunk being
 * written, damage there was not counted. Damage part way is no error when
 * some events were read (rep->partial); otherwise the reader's error. */
jp_err jvm_engine_peek(jvm_engine *e, const jfr_options *jo, jp_profile *out, jfr_report *rep,
                       bool *live_tail, jp_error *err);

/* VIEWER: the running session's data as it stands, unparsed (whole JFR
 * chunks; heap, the caller frees): what peek reads, for a file of it
 * (`jprof-probe jfr PID S OUT`). The session goes on. */
jp_err jvm_engine_fetch(jvm_engine *e, uint8_t **data, size_t *len, jp_error *err);

/* Stops the running session without reading it (JP_OK when none runs);
 * afterwards no session runs, whatever the result. */
jp_err jvm_engine_stop(jvm_engine *e, jp_error *err);

/* Stops any session and removes everything this engine put in the target
 * (library copy, logs, output, lock, marker, an empty /tmp/jprof). The
 * async-profiler library itself stays loaded in the JVM, idle: a JVM never
 * unloads an agent library. Nothing happens when it never touched the
 * target. */
void jvm_engine_release(jvm_engine *e);

/* The JVM exited (or its session vanished): forgets the session without
 * talking to it, drops every cleanup registration, and removes what can
 * still be reached (files on a root shared with us, the marker). */
void jvm_engine_forget(jvm_engine *e);

/* Stops what a viewer of process `owner` (gone: a crash, SIGKILL) left
 * running in t: its JFR recordings "jprof-<owner>-<n>". A viewer's
 * async-profiler session needs nothing here: the next viewer holding the
 * lock stops it. Returns how many it stopped; errors count as none. */
int jvm_engine_stop_orphans(const jvm_proc *t, const jvm_attach_opts *ao, pid_t owner);

/* Removes the window files a process `owner` (gone) of ours left in this
 * process's own /tmp: what a probe in the target's container finds after
 * an earlier probe. Returns how many it removed. */
int jvm_engine_remove_files_of(pid_t owner);

/* ---- pure helpers, exposed for tests ---- */

typedef enum jvm_asprof_owner {
    JVM_ASPROF_NONE,   /* no async-profiler mapped */
    JVM_ASPROF_OURS,   /* our copy (path `ours`) is mapped */
    JVM_ASPROF_FOREIGN /* someone else's async-profiler is mapped */
} jvm_asprof_owner;

/* Classifies one /proc/PID/maps line against our library copy's path. */
jvm_asprof_owner jvm_asprof_classify_line(const char *line, const char *ours);

/* async-profiler's start arguments for w (file: its JFR output, log: its
 * log or NULL): cpu -> event=cpu,interval=N, wall -> wall=20ms, alloc and
 * live -> alloc=512k (+live), lock/park -> lock=1ms, nativemem=512k,
 * nativelock=1ms, then jfr,file=F,log=L,quiet. JP_ERR_USAGE when no kind
 * fits or the result is longer than len. */
jp_err jvm_asprof_start_args(const jvm_engine_window *w, const char *file, const char *log,
                             char *buf, size_t len, jp_error *err);

#endif
