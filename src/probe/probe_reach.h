/* probe_reach.h - JVMs in the container that the probe's user may not
 * inspect, and becoming their user to reach them.
 *
 * Reading another user's /proc/PID/maps, cwd and root needs CAP_SYS_PTRACE,
 * which a container's root does not have by default (neither Kubernetes
 * nor podman gives it). Root does have CAP_SETUID, CAP_SETGID and
 * CAP_CHOWN there: a probe run as root in a pod whose JVM runs as another
 * user (an image that starts as root and drops to its app user) becomes
 * that user, after handing its directory to it so it can still remove it.
 * Without those capabilities the probe says the JVM is there but out of
 * reach, which is not the same as no JVM.
 *
 * Ownership: caller storage only. Not thread-safe (changes the process's
 * credentials). */
#ifndef JP_PROBE_REACH_H
#define JP_PROBE_REACH_H

#include <stddef.h>
#include <sys/types.h>

typedef struct probe_denied {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    char comm[32];
    char main_class[256]; /* from its command line (readable by all); "" unknown */
} probe_denied;

/* The processes that look like java (their comm) whose maps this user may
 * not read, up to max, sorted by pid; returns how many. */
size_t probe_unreachable_java(probe_denied *out, size_t max);

/* "pid 1 (java, uid 0), pid 7 (java, uid 10001)". */
void probe_denied_format(const probe_denied *d, size_t n, char *buf, size_t len);

/* Hands dir (may be NULL) to uid:gid, then becomes that user and group with
 * no supplementary groups, for real, effective and saved ids. 0, or -errno
 * of the step that failed (the process is then unchanged, dir perhaps
 * handed over). */
int probe_become(uid_t uid, gid_t gid, const char *dir);

#endif
