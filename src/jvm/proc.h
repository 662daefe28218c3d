/* proc.h - local JVM discovery and identity through /proc.
 *
 * Everything here only reads /proc; nothing signals or writes to a process.
 * A process counts as a HotSpot JVM when libjvm.so is mapped into it and
 * no OpenJ9 VM library (libj9vm*.so: OpenJ9 maps a libjvm.so too, and answers
 * SIGQUIT with a javacore file), which is the check every later step relies
 * on before it may send SIGQUIT.
 *
 * Privileges: reading /proc/PID/maps, /proc/PID/environ and following
 * /proc/PID/root needs ptrace-read access to the target, i.e. the same user
 * (and a dumpable process) or root / CAP_SYS_PTRACE. Without it,
 * jvm_proc_read() fails with JP_ERR_PERMISSION.
 *
 * Ownership: jvm_proc is plain caller storage (no heap). jvm_proc_list owns
 * its array; free it with jvm_proc_list_cleanup(). Not thread-safe only in
 * the sense that it reads the process table at one moment. */
#ifndef JP_JVM_PROC_H
#define JP_JVM_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

typedef struct jvm_proc {
    pid_t pid;   /* pid as seen from here (the host) */
    pid_t nspid; /* pid inside its own pid namespace (last NStgid value) */
    uid_t euid;  /* effective uid/gid: the attach socket checks these */
    gid_t egid;
    char user[64];        /* login name of euid, or the number */
    char main_class[256]; /* main class, "-jar" file or module/class; "" if unknown */
    int64_t start_ns;     /* process start, ns since the epoch (part of its identity) */
    int64_t uptime_ns;    /* at the time of reading */
    bool hotspot;         /* libjvm.so is mapped, and no OpenJ9 VM library */
    bool openj9;          /* an Eclipse OpenJ9 VM (libj9vm*.so): another attach protocol */
    bool async_profiler;  /* a libasyncProfiler is mapped (someone else's profiler) */
    bool attach_disabled; /* -XX:+DisableAttachMechanism found in its options */
    bool agents_disabled; /* -XX:-EnableDynamicAgentLoading found in its options */
    char jvm_lib[256];    /* path of the mapped libjvm.so (inside the target's fs) */
} jvm_proc;

/* Reads one process. Fails with JP_ERR_NOT_FOUND (no such pid),
 * JP_ERR_PERMISSION (cannot read its maps) or JP_ERR_IO. A process that is
 * not a JVM is returned successfully with hotspot == false. */
jp_err jvm_proc_read(pid_t pid, jvm_proc *out, jp_error *err);

/* Like jvm_proc_read, then fails with JP_ERR_NOT_JVM unless it is HotSpot. */
jp_err jvm_proc_open(pid_t pid, jvm_proc *out, jp_error *err);

/* True when the process still exists and has the same start time (pids are
 * reused, so the pid alone is not enough). */
bool jvm_proc_alive(const jvm_proc *p);

/* Re-reads /proc/PID/maps for a libasyncProfiler mapping. */
bool jvm_proc_has_async_profiler(pid_t pid);

typedef struct jvm_proc_list {
    jvm_proc *items;
    size_t count;
    size_t alloc;
} jvm_proc_list;

/* Lists the HotSpot JVMs this process may inspect, sorted by pid. Processes
 * we may not read are skipped silently (they are not ours to show). */
jp_err jvm_proc_list_local(jvm_proc_list *out, jp_error *err);
void jvm_proc_list_cleanup(jvm_proc_list *l);

/* Parses a java command line (NUL-separated, len bytes) into the main class,
 * "-jar" file or module; exposed for tests. Writes "" when none is found. */
void jvm_cmdline_main(const char *args, size_t len, char *out, size_t outlen);

/* Reads a whole small /proc file into buf (NUL-terminated, at most cap-1
 * bytes); returns bytes read or -1 with errno set. */
ssize_t jvm_read_small_file(const char *path, char *buf, size_t cap);

#endif
