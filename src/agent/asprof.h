/* asprof.h - the async-profiler engine of jprof-agent (--asprof-lib PATH).
 *
 * The library the user gives (a libasyncProfiler.so they built or
 * downloaded) is copied into the target's /tmp/jprof/ through
 * /proc/PID/root under a name fixed per JVM
 * (libasyncProfiler-jprof-<nspid>.so), and loaded over the attach socket
 * with an absolute path. The name is fixed so that an agent started again
 * after a crash loads the very instance already inside the JVM (the dynamic
 * linker matches an already loaded library by its path) instead of a
 * second profiler, and so that it can tell its own profiler from someone
 * else's in /proc/PID/maps.
 *
 * Every file the JVM writes (the JFR output of each window, the profiler's
 * log) is created by the agent first: O_EXCL|O_NOFOLLOW, owned by the
 * JVM's user, so the JVM never needs write access to /tmp/jprof and a
 * symlink planted there is never followed by the agent. Every file is
 * registered with jvm_cleanup, so an interrupted agent removes it.
 *
 * A session is `start,<events>,jfr,file=F,log=L,quiet`; a window ends with
 * `stop`, which finishes F (async-profiler writes the JFR to the file named
 * at start). The profiler itself stays loaded: a JVM cannot unload an
 * agent library, which is why the name must be stable.
 *
 * Ownership: agent_asprof is caller storage (inside agent_target); the
 * jvm_tfile members hold cleanup registrations until removed. Not
 * thread-safe (runs on the agent's main loop). */
#ifndef JP_AGENT_ASPROF_H
#define JP_AGENT_ASPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "jvm/proc.h"
#include "jvm/targetfs.h"

#define AGENT_ASPROF_LIB_PREFIX "libasyncProfiler-jprof-"
#define AGENT_ASPROF_ENGINE "async-profiler"

typedef enum agent_asprof_owner {
    AGENT_ASPROF_NONE,   /* no async-profiler mapped */
    AGENT_ASPROF_OURS,   /* our copy for this JVM is mapped */
    AGENT_ASPROF_FOREIGN /* someone else's async-profiler is mapped */
} agent_asprof_owner;

typedef struct agent_asprof {
    jvm_tfile lib;    /* the copy in the target */
    jvm_tfile out;    /* the running session's JFR file (inner[0] == 0: none) */
    jvm_tfile log;    /* the profiler's log, read when a command fails */
    unsigned seq;     /* window counter, part of the output file name */
    bool loaded;      /* a command reached the library in this agent run */
    bool shared_root; /* the JVM's / is ours (host mode): its files outlive /proc/PID/root */
} agent_asprof;

/* Ensures the target's /tmp/jprof exists as a real directory that we, root
 * or the JVM's user own (never a symlink). */
jp_err agent_jprof_dir_ensure(const jvm_proc *t, jp_error *err);

/* Who owns the async-profiler mapped in the target, if any (reads
 * /proc/PID/maps). A mapping that cannot be read counts as NONE. */
agent_asprof_owner agent_asprof_owner_of(const jvm_proc *t);

/* Pure helper for owner_of (exposed for tests): classifies one maps line. */
agent_asprof_owner agent_asprof_classify_line(const char *line, const char *ours);

/* Sets the paths of the library copy for this JVM and notes whether the
 * JVM shares our root (nothing is written). */
void agent_asprof_init(agent_asprof *a, const jvm_proc *t);

/* Copies the host library into the target (atomically, owned by the JVM's
 * user, mode 0644). Registers the copy for cleanup. */
jp_err agent_asprof_install(agent_asprof *a, const jvm_proc *t, const char *host_lib,
                            jp_error *err);

/* The agent arguments of a session for these kinds (bit 1 << jp_kind):
 * cpu -> event=cpu,interval=<cpu_interval_ns> (async-profiler's own 10 ms
 * when 0), wall -> wall=20ms, alloc -> alloc=512k, lock/park -> lock=1ms.
 * JP_ERR_USAGE when they do not fit. */
jp_err agent_asprof_start_args(uint32_t kinds, int64_t cpu_interval_ns, const char *file,
                               const char *log, char *buf, size_t len, jp_error *err);

/* Starts a session writing JFR to a fresh /tmp/jprof/asprof-<nspid>-<agentpid>-<n>.jfr. */
jp_err agent_asprof_start(agent_asprof *a, const jvm_proc *t, uint32_t kinds,
                          int64_t cpu_interval_ns, jp_error *err);

/* Stops the session; a->out then holds the finished JFR. With quiet set a
 * failure is not logged by the profiler (used when probing for a session
 * that may not exist). */
jp_err agent_asprof_stop(agent_asprof *a, const jvm_proc *t, bool quiet, jp_error *err);

/* Removes the output file (if any). */
void agent_asprof_drop_output(agent_asprof *a);

/* Removes every file of this engine in the target (library copy, output,
 * log). The profiler stays loaded in the JVM, idle. */
void agent_asprof_remove_all(agent_asprof *a);

#endif
