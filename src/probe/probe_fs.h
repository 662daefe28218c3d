/* probe_fs.h - jprof-probe's private directory, the leftovers of earlier
 * probes, and the watchdog that cleans up after a probe killed with SIGKILL.
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

/* True when dir is a probe directory of process pid:
 * /tmp/jprof-probe-PID[.SUFFIX] or /dev/shm/jprof-probe-PID[.SUFFIX]. */
bool probe_dir_is_ours(const char *dir, pid_t pid);

/* Removes the files in dir (one level; the probe makes no subdirectories)
 * and dir itself. Refuses (returns false) unless dir is a probe directory of
 * pid (probe_dir_is_ours), so it can never remove anything else. */
bool probe_dir_remove(const char *dir, pid_t pid);

/* Removes the dump files jvm/recorder.h names after pid in the JVM's /tmp
 * ("/tmp/jprof-<pid>-*"). */
void probe_tmp_files_remove(pid_t pid);

/* Looks for probe directories of probes that are gone (under /tmp and
 * /dev/shm, not ours), stops their recordings in t (may be NULL: files
 * only), removes their files; a directory whose probe still runs is left
 * alone. Logs each to stderr. Returns how many it cleaned. */
int probe_clean_stale(const jvm_proc *t, pid_t self);

/* Forks a watchdog that outlives a SIGKILLed probe: it waits until the
 * probe's end of a pipe closes; if the probe did not say it cleaned up
 * itself (probe_watchdog_done), it stops the probe's recordings in t,
 * removes its files and dir, and exits. Returns the pipe's write end (>= 0)
 * or -1 when it could not fork (the probe then runs without one). */
int probe_watchdog_start(const jvm_proc *t, const char *dir);

/* Tells the watchdog the probe cleaned up and lets it exit. */
void probe_watchdog_done(int fd);

#endif
