/* targetfs.h - files in a target JVM's filesystem, reached through
 * /proc/PID/root from the host (so containers need no mount namespace switch).
 *
 * Files jprof puts there are owned by the target's user (so the JVM can read
 * them), created with O_EXCL|O_NOFOLLOW (no symlink games in /tmp), and
 * registered with jvm_cleanup so they go away even if jprof is interrupted.
 * Not thread-safe (uses a counter for unique names). */
#ifndef JP_JVM_TARGETFS_H
#define JP_JVM_TARGETFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "jvm/proc.h"

/* A file in the target: its path as the JVM sees it and as we reach it. */
typedef struct jvm_tfile {
    char inner[160];  /* e.g. /tmp/jprof-123-4-5.json */
    char host[224];   /* e.g. /proc/77/root/tmp/jprof-123-4-5.json */
    int cleanup;      /* jvm_cleanup handle, 0 when not registered */
    bool shared_root; /* the JVM's / is ours (host mode): inner names the file too */
} jvm_tfile;

/* True when the process's / is the same as ours (no container between). */
bool jvm_proc_shares_root(const jvm_proc *t);

/* Names inner in the target (both paths, shared_root), nothing else. */
void jvm_tfile_at(const jvm_proc *t, const char *inner, jvm_tfile *f);

/* Names a fresh file "/tmp/jprof-<ourpid>-<n>-<rand><suffix>" in the target
 * and registers it for cleanup (nothing is created). */
jp_err jvm_tfile_name(const jvm_proc *t, const char *suffix, jvm_tfile *f, jp_error *err);

/* Removes the files jvm_tfile_name named for process `owner` (gone) in
 * this process's own /tmp (a probe's, in the target's container). Returns
 * how many it removed. */
int jvm_tfile_remove_owned(pid_t owner);
/* The same in t's /tmp, seen through /proc/PID/root (an earlier agent's
 * files in a JVM's container). */
int jvm_tfile_remove_owned_in(const jvm_proc *t, pid_t owner);

/* Names a fixed file "/tmp/<name>" (no cleanup registered yet). */
void jvm_tfile_fixed(const jvm_proc *t, const char *name, jvm_tfile *f);

/* Copies a host file into f (atomically: temp file + rename), mode 0644,
 * owned by the target's euid/egid when we are root; registers cleanup. */
jp_err jvm_tfile_copy_in(const jvm_proc *t, const char *src, jvm_tfile *f, jp_error *err);

/* Writes data into the fresh file f (named by jvm_tfile_name; it must not
 * exist yet), mode 0644, owned by the target's euid/egid when we are root.
 * On failure the caller removes f. */
jp_err jvm_tfile_write(const jvm_proc *t, const jvm_tfile *f, const void *data, size_t len,
                       jp_error *err);

/* Reads the whole file (at most cap bytes, else JP_ERR_LIMIT); *data is
 * heap, NUL-terminated, the caller frees it. */
jp_err jvm_tfile_read(const jvm_tfile *f, size_t cap, char **data, size_t *len, jp_error *err);

/* Free bytes for an unprivileged writer in the target's /tmp (statvfs
 * through /proc/PID/root). */
jp_err jvm_tmp_free_bytes(const jvm_proc *t, uint64_t *free_bytes, jp_error *err);

/* Deletes the file (ENOENT is fine) and drops its cleanup registration. A
 * JVM that exited took /proc/PID/root with it; when it shared our root the
 * file is deleted by its inner name instead. */
void jvm_tfile_remove(jvm_tfile *f);

#endif
