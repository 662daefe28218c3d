/* kube_int.h - what the files of src/kube share (not for other modules). */
#ifndef JP_KUBE_INT_H
#define JP_KUBE_INT_H

#include <stdint.h>
#include <sys/types.h>

#include "kube/kube.h"

#define KUBE_STDERR_MAX 8192

/* A running kubectl: its pid and our ends of its stdin/stdout/stderr
 * (-1 when not piped). The fds are non-blocking and close-on-exec. */
typedef struct kube_child {
    pid_t pid;
    int in, out, errfd;
    char errtext[KUBE_STDERR_MAX]; /* what it said on stderr so far */
    size_t errlen;
} kube_child;

/* Starts kubectl with the global options and args (NULL-terminated);
 * stdin is a pipe when want_stdin, else /dev/null. */
jp_err kube_child_spawn(const kube_opts *o, const char *const *args, bool want_stdin, kube_child *c,
                        jp_error *err);

/* Reads what stderr has without blocking into c->errtext (bounded). */
void kube_child_drain_stderr(kube_child *c);

/* Waits up to timeout_ns for the exit; kills it (TERM, then KILL) when it
 * does not. Closes the fds. Returns the exit status, 128+signal, or -1. */
int kube_child_finish(kube_child *c, int64_t timeout_ns);

/* What kubectl said, for a message: its last non-empty stderr line,
 * trimmed, or when that is kubectl's "command terminated with exit code
 * N", the last line of jprof-probe or its loader before it with that line
 * in parentheses. */
void kube_child_message(const kube_child *c, char *buf, size_t len);

/* kubectl's message (kube_child_message) and the error code it implies. */
jp_err kube_child_error(const kube_child *c, int status, const char *what, jp_error *err);

/* "kubectl get pods ..." for messages. */
void kube_args_format(const kube_opts *o, const char *const *args, char *buf, size_t len);

int64_t kube_timeout(const kube_opts *o);

#endif
