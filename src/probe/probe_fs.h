/* probe_fs.h - jprof-probe's private directory, the leftovers of earlier
 * probes, and the watchdog that reaps the probe and cleans up after it
 * when it was killed with SIGKILL.
 *
 * The loader script (docs/PROBE.md) makes the directory with
 * `mktemp -d /tmp/jprof-probe-$$.XXXXXX` (or under /dev/shm) and then execs
 * the probe, so the probe's pid is the $$ in the name: a directory whose
 * probe is gone can be told from one whose probe still runs.
 *
 * Ownership: nothing on the heap. Not thread-safe. */
#ifndef JP_PROBE_FS_H
#define JP_PROBE_FS_H

#include <stdbool.h>
#include <sys/types.h>

#include "jvm/proc.h"

#define PROBE_DIR_PREFIX "jprof-probe-"

/* True when dir is a probe directory of process pid: an absolute path
 * without "." or ".." components whose last one is jprof-probe-PID[.SUFFIX]
 * (the loader makes it under /tmp, /dev/shm, /var/tmp or another writable
 * mount where a program may run: docs/PROBE.md). */
bool probe_dir_is_ours(const char *dir, pid_t pid);

/* Removes the files in dir (one level; the probe makes no subdirectories)
 * and dir itself. Refuses (returns false) unless dir is a probe directory of
 * pid (probe_dir_is_ours), so it can never remove anything else. */
bool probe_dir_remove(const char *dir, pid_t pid);

/* Looks for probe directories of probes that are gone (under /tmp,
 * /dev/shm, /var/tmp and the parent of own_dir, which may be NULL; not
 * self's), stops their recordings in t (may be NULL: files only), removes
 * their files; a directory whose probe still runs is left alone. Logs each
 * to stderr. Returns how many it cleaned. */
int probe_clean_stale(const jvm_proc *t, pid_t self, const char *own_dir);

/* Splits the probe in two with one fork. The parent (the process the
 * loader exec'd, whose pid names dir) becomes the watchdog and never
 * returns: it forwards SIGINT/SIGTERM/SIGHUP to the child, reaps it, and
 * when the child did not say it cleaned up (probe_watchdog_done: SIGKILL,
 * the OOM killer) stops the child's recordings in t, removes its files and
 * dir; then it exits with the child's status. The child returns, serves,
 * and gets SIGTERM if the watchdog dies first. Whatever the pod's PID 1
 * is, nothing is left to reap: the child is reaped by the watchdog, the
 * watchdog by the container runtime that started it (a JVM as PID 1 never
 * reaps the children it adopts, which a double fork would leave it).
 * Returns, in the child, the pipe's write end (>= 0), or -1 in the one
 * process when it could not fork (it then runs without a watchdog). */
int probe_watchdog_start(const jvm_proc *t, const char *dir);

/* The worker pid a watchdog wrote into dir, 0 when none. */
pid_t probe_worker_of(const char *dir);

/* Tells the watchdog the probe cleaned up. */
void probe_watchdog_done(int fd);

#endif
