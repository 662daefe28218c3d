/* attach.h - a HotSpot dynamic-attach client (Linux, protocol v1).
 *
 * How it talks to a JVM (facts in /work/shared/notes/hotspot-attach.md):
 *  1. The caller has a jvm_proc from jvm_proc_open(), which already proved
 *     that libjvm.so is mapped: nothing here signals a process that is not a
 *     HotSpot JVM, and a JVM started with -XX:+DisableAttachMechanism is
 *     refused before it is signalled (JP_ERR_ATTACH_DISABLED).
 *  2. If /proc/PID/root/tmp/.java_pid<NSPID> is not a live socket, it waits
 *     until the JVM catches SIGQUIT (SigCgt in /proc/PID/status; a JVM in its
 *     first ms has libjvm.so mapped but no handler, and SIGQUIT would end
 *     it), then creates .attach_pid<NSPID> in the JVM's cwd (or its /tmp),
 *     sends SIGQUIT, and polls for the socket with a growing back-off; both
 *     waits together are bounded by opts.attach_timeout_ns (default 6 s).
 *     The trigger file is removed.
 *  3. It connects with the target's effective uid/gid, which the JVM checks
 *     with SO_PEERCRED. When we are root and the target is another user, a
 *     forked single-threaded child changes its credentials, connects, and
 *     passes the connected socket back over a socketpair; the caller keeps
 *     its own privileges and never changes namespaces itself.
 *  4. It sends "1\0cmd\0arg0\0arg1\0arg2\0" and reads "<code>\n<text>" up to
 *     EOF, bounded by opts.max_reply bytes and opts.io_timeout_ns.
 *  JDK 24+ also speaks protocol v2; v1 still works there and is what we send,
 *  so each argument is limited to 1024 bytes (JVM_ATTACH_ARG_MAX).
 *
 * Containers: the socket and trigger file are reached through /proc/PID/root
 * and /proc/PID/cwd, so the target's mount namespace is never entered; the
 * pid written into file names is the NSpid. Because SO_PEERCRED maps the
 * peer's uid into the JVM's user namespace, connecting with the target's
 * host-side euid/egid works across user namespaces too.
 *
 * Privileges needed: the same user as the JVM (its effective uid and gid),
 * or root (CAP_SYS_PTRACE to read /proc/PID/{maps,root,cwd}, CAP_KILL for
 * SIGQUIT, CAP_SETUID/CAP_SETGID for the child, CAP_DAC_OVERRIDE and
 * CAP_CHOWN for the trigger file). Anything else fails with
 * JP_ERR_PERMISSION and a message saying which user to run as.
 *
 * Errors: JP_ERR_NOT_FOUND (no such pid), JP_ERR_NOT_JVM, JP_ERR_PERMISSION,
 * JP_ERR_TIMEOUT (no attach listener in time, or no reply in time),
 * JP_ERR_EXITED (the JVM went away during the attach), JP_ERR_ATTACH_DISABLED,
 * JP_ERR_AGENT_REFUSED (jvm_attach_load only), JP_ERR_PROTOCOL (a reply we
 * cannot read or a failed command), JP_ERR_LIMIT (reply too large).
 *
 * Thread-safety: functions are reentrant (no globals) but fork(); call them
 * from one thread at a time in a multi-threaded program. */
#ifndef JP_JVM_ATTACH_H
#define JP_JVM_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "jvm/proc.h"

#define JVM_ATTACH_ARG_MAX 1024

typedef struct jvm_attach_opts {
    int64_t attach_timeout_ns; /* total wait for the listener socket; default 6 s */
    int64_t io_timeout_ns;     /* wait for the whole reply; default 30 s */
    size_t max_reply;          /* bytes; default 64 MiB */
} jvm_attach_opts;

/* Fills the defaults; JPROF_ATTACH_TIMEOUT (a duration, e.g. "2s") in the
 * environment overrides attach_timeout_ns. */
void jvm_attach_opts_init(jvm_attach_opts *o);

typedef struct jvm_reply {
    int code;   /* the result code on the first line of the reply */
    char *text; /* everything after that line, NUL-terminated; heap, owned */
    size_t len;
} jvm_reply;

void jvm_reply_cleanup(jvm_reply *r);

/* Runs one attach command (arguments may be NULL = empty) and returns the raw
 * reply; a non-zero result code is NOT an error here (see jvm_jcmd). Each
 * call is one connection. o may be NULL for defaults. */
jp_err jvm_attach_cmd(const jvm_proc *t, const jvm_attach_opts *o, const char *cmd,
                      const char *arg0, const char *arg1, const char *arg2, jvm_reply *out,
                      jp_error *err);

/* Runs a diagnostic command line such as "Thread.print -l" or
 * "JFR.start name=x settings=profile". Fails with JP_ERR_PROTOCOL and the
 * JVM's message when the code is non-zero or the text reports an exception
 * (JDK 21+ may answer 0 and put the failure in the text). */
jp_err jvm_jcmd(const jvm_proc *t, const jvm_attach_opts *o, const char *line, jvm_reply *out,
                jp_error *err);

/* Loads an agent: a native library (absolute path, absolute = true) or
 * "instrument" with options "/abs/path.jar=args". Fails with
 * JP_ERR_AGENT_REFUSED when dynamic agent loading is off, and
 * JP_ERR_PROTOCOL when the agent failed (the text has the reason). */
jp_err jvm_attach_load(const jvm_proc *t, const jvm_attach_opts *o, const char *lib, bool absolute,
                       const char *options, jvm_reply *out, jp_error *err);

/* The JVM's system properties ("key=value" lines, escaped as in
 * java.util.Properties). */
jp_err jvm_attach_properties(const jvm_proc *t, const jvm_attach_opts *o, jvm_reply *out,
                             jp_error *err);

/* Highest attach protocol version the JVM speaks: 1, or 2 on JDK 24+
 * ("getversion" is unknown to older JVMs). */
jp_err jvm_attach_protocol_version(const jvm_proc *t, const jvm_attach_opts *o, int *version,
                                   jp_error *err);

/* Parses the first line of a raw reply into code and text (exposed for tests).
 * Returns JP_ERR_PROTOCOL when there is no valid code line. */
jp_err jvm_reply_parse(char *raw, size_t len, jvm_reply *out, jp_error *err);

#endif
