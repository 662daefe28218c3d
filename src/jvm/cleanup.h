/* cleanup.h - what jprof must undo in a target before it exits.
 *
 * Every layer that leaves something in a JVM (a running JFR recording, a
 * copied helper jar, a snapshot or dump file in the target's /tmp, an
 * async-profiler session) registers an undo action here while it exists and
 * unregisters it when it undid it itself. A program then guarantees "never
 * leaves a recording running, an agent session active, or a file behind":
 *
 *   - on normal exit: jvm_cleanup_run_all();
 *   - on SIGINT/SIGTERM/SIGHUP: the signal handler only sets a
 *     `volatile sig_atomic_t` flag; the main loop sees it, calls
 *     jvm_cleanup_run_all(), and exits. Undo actions talk to the JVM (fork,
 *     sockets, waits), which is not async-signal-safe, so they must not run
 *     inside the handler;
 *   - as a last resort inside a handler (e.g. a second signal while cleaning
 *     up), jvm_cleanup_unlink_files() removes the registered files with
 *     unlink(2) only, which is async-signal-safe.
 *
 * The registry is a fixed table (no allocation while running the actions);
 * actions run newest first, each at most once. Not thread-safe: register and
 * run from the main thread. */
#ifndef JP_JVM_CLEANUP_H
#define JP_JVM_CLEANUP_H

#include <stdbool.h>

#define JVM_CLEANUP_SLOTS 512 /* a node runs at most 110-250 pods; each JFR target holds one */
#define JVM_CLEANUP_PATH_MAX 256

typedef void (*jvm_cleanup_fn)(void *arg);

/* Registers fn(arg); returns a handle > 0, or 0 when the table is full
 * (callers then refuse to start what they could not promise to undo). */
int jvm_cleanup_register(jvm_cleanup_fn fn, void *arg);

/* Registers removal of a host path (e.g. /proc/PID/root/tmp/jprof-x.json);
 * the path is copied. Returns a handle > 0 or 0. */
int jvm_cleanup_register_file(const char *path);

/* Forgets a handle without running it (the owner undid it itself). */
void jvm_cleanup_unregister(int handle);

/* Runs every registered action (newest first) and empties the table. */
void jvm_cleanup_run_all(void);

/* Async-signal-safe: unlinks the registered files, nothing else. */
void jvm_cleanup_unlink_files(void);

/* Number of registered actions (tests). */
int jvm_cleanup_pending(void);

#endif
