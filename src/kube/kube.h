/* kube.h - the kubectl client library: pods through kubectl, and a session
 * with jprof-probe streamed into one container (docs/PROBE.md). jprof-top's
 * kubectl source (tui/source_kubectl.h) and kubectl-jprof call it.
 *
 * Every kubectl call is a child process with a deadline (kube_opts
 * .timeout_ns): when it runs out the child is killed and the call fails
 * with JP_ERR_TIMEOUT and a message naming the command, never hangs. The
 * global options (--context, --kubeconfig, -n) go to every call.
 *
 * A session: `kubectl exec -i POD -c C -- sh -c LOADER sh [PID]` where the
 * loader (a few lines of POSIX sh, kube_loader_script) makes a private
 * directory where this user may write and a program may run (mktemp -d
 * under /tmp, /dev/shm, /var/tmp, $HOME, else another writable mount not
 * mounted noexec), reads the probe's size line and that many bytes of
 * stdin into it, checks that it runs, and execs it; the rest of
 * stdin/stdout is the protocol. The client sends nothing after the probe's
 * bytes until the probe's hello arrives, so the loader can never read
 * protocol bytes as part of the binary. Where exec cannot run the probe
 * (no sh, no such directory) the session takes the kubectl debug route
 * when asked (kube_opts.debug), else fails naming the cause and the
 * command that works.
 *
 * Results are the model types the local-pid source gives: jp_snapshot
 * (model/snapshot.h, rebuilt with wire/snapshot_json.h) and jp_profile
 * (model/profile.h, from the probe's aggregated stacks).
 *
 * SIGPIPE: kube_session_open sets it to SIG_IGN (a dead kubectl must turn
 * into an error, not kill the caller).
 *
 * Ownership: kube_session is heap (kube_session_open / kube_session_close,
 * close(NULL) is a no-op); snapshots and profiles returned belong to the
 * caller. Not thread-safe: one thread per session. */
#ifndef JP_KUBE_KUBE_H
#define JP_KUBE_KUBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/k8s_pod.h"
#include "base/error.h"
#include "base/strbuf.h"
#include "model/gc.h"
#include "model/heap.h"
#include "model/profile.h"
#include "model/snapshot.h"

#define KUBE_DEFAULT_TIMEOUT_NS (30LL * 1000000000LL)
#define KUBE_OUTPUT_MAX (64u << 20) /* bytes of one kubectl call's stdout */
#define KUBE_REPLY_MAX (256u << 20) /* bytes of one probe reply line */
/* The securityContext of the debug route's custom profile: root, which
 * reaches a JVM of any user with the SYS_PTRACE of --profile=general. */
#define KUBE_DEBUG_CUSTOM "{\"securityContext\":{\"runAsUser\":0,\"runAsNonRoot\":false}}"
#define KUBE_HELLO_JVMS 8 /* JVMs of a container the hello names */

typedef struct kube_opts {
    const char *kubectl;    /* NULL: $KUBECTL, else "kubectl" */
    const char *context;    /* --context, or NULL */
    const char *kubeconfig; /* --kubeconfig, or NULL */
    const char *ns;         /* -n, or NULL (kubectl's current namespace) */
    int64_t timeout_ns;     /* each kubectl call and each probe answer; 0 = default 30 s */
    const char *probe;      /* the jprof-probe binary; NULL: kube_probe_find */
    bool debug;             /* exec impossible: take the kubectl debug route */
    const char *image;      /* image for kubectl debug; NULL: kube_default_image() */
    bool verbose;           /* log kubectl command lines to stderr */
    int jvm_pid;            /* the JVM in the container (its pid there); 0: the probe picks */
    const char *command;    /* the front end's command line, for "this works: CMD
                             * --debug-image IMAGE" in messages; NULL: the kubectl
                             * debug command itself */
} kube_opts;

void kube_opts_init(kube_opts *o);

/* "PROG ARG..." for a message a user can paste: argv[1..] after prog,
 * each argument that is not a plain word in single quotes. */
void kube_command_line(const char *prog, int argc, char *const *argv, char *buf, size_t len);

/* jprof's own image, which has jprof-probe on its PATH: jprof/jprof:TAG,
 * TAG the version as scripts/build-images spells a tag (no '+'). Static. */
const char *kube_default_image(void);

/* Runs `kubectl GLOBAL-OPTIONS args...` (args NULL-terminated), stdin from
 * /dev/null, stdout into out (capped at KUBE_OUTPUT_MAX). A non-zero exit
 * fails with JP_ERR_PROTOCOL (JP_ERR_PERMISSION when kubectl says
 * "forbidden", JP_ERR_NOT_FOUND for "NotFound") and kubectl's own message. */
jp_err kube_run(const kube_opts *o, const char *const *args, jp_strbuf *out, jp_error *err);

/* The pods of a service: its selector (`get service S -o json`), or when
 * the service does not exist the pods labelled app.kubernetes.io/name=S,
 * else app=S. JP_ERR_NOT_FOUND when none match. Parsed by the agent's pod
 * parser (wire/k8s_pod.h); out must be initialised (jp_pod_list_init). */
jp_err kube_pods_for_service(const kube_opts *o, const char *service, jp_pod_list *out,
                             jp_error *err);

/* One pod by name (a list of one). */
jp_err kube_pod_get(const kube_opts *o, const char *pod, jp_pod_list *out, jp_error *err);

/* The probe for a pod of architecture arch (Kubernetes' name: amd64,
 * arm64; NULL: unknown, taken as this build's, JP_ARCH). o->probe or
 * $JPROF_PROBE when it is arch's, else jprof-probe-ARCH beside it; without
 * either, jprof-probe-ARCH or jprof-probe (whichever is arch's, by its ELF
 * header) next to this program, then in the build tree. JP_ERR_NOT_FOUND
 * (no probe at all) or JP_ERR_UNSUPPORTED (none for arch: the message names
 * the architecture and what to install). */
jp_err kube_probe_find(const kube_opts *o, const char *arch, char *buf, size_t len, jp_error *err);

/* Kubernetes' name of a `uname -m` machine (x86_64 -> amd64, aarch64 ->
 * arm64; a name it does not know stays as it is) into buf; false when
 * machine is not a word of at most 31 characters, or "unknown". */
bool kube_arch_of_machine(const char *machine, char *buf, size_t len);

/* A node's status.nodeInfo.architecture (`kubectl get node`), validated as
 * kube_arch_of_machine does; kubectl's error when it cannot be read (users
 * without the right to get nodes: JP_ERR_PERMISSION). */
jp_err kube_node_arch(const kube_opts *o, const char *node, char *buf, size_t len, jp_error *err);

/* The loader script run by `sh -c` in the container (static text). */
const char *kube_loader_script(void);

/* What the probe said in its hello. */
typedef struct kube_hello {
    int protocol;
    char probe_version[64];
    int probe_pid;
    char dir[256];
    bool has_jvm;         /* a JVM was found and answered VM.version */
    int jvm_pid;          /* inside the container */
    char main_class[256]; /* "" unknown */
    char user[64];
    char jvm_version[128]; /* "JDK 17.0.16" */
    int64_t jvm_start_ns;
    int64_t jvm_uptime_ns; /* at the hello */
    char error[512];       /* why there is no JVM, "" when there is one */
    jp_err error_code;     /* and its code: NOT_JVM, PERMISSION (one is there, out of reach) */
    struct {
        int pid;
        char main_class[128];
    } jvms[KUBE_HELLO_JVMS]; /* every JVM the probe saw in the container */
    size_t njvms;
} kube_hello;

/* The JVMs of the hello's container other than the one served, as "pid 7
 * live.Deadlocks (--pid 7 picks it), ..."; returns how many. */
size_t kube_hello_others(const kube_hello *h, char *buf, size_t len);

typedef struct kube_session kube_session;

/* Streams the probe into container (NULL: the pod's first container that
 * runs a JVM, asking each container's probe in turn) of pod, waits for its
 * hello. When kubectl exec cannot run it there (no sh; no directory both
 * writable and not noexec) and o->debug is set, takes the kubectl debug
 * route: an ephemeral container from o->image sharing the container's
 * process namespace, as root (custom profile KUBE_DEBUG_CUSTOM) unless the
 * pod names its user. Fails with JP_ERR_NOT_JVM when no container runs a
 * JVM, JP_ERR_PERMISSION when one does but is out of the probe's reach,
 * JP_ERR_UNSUPPORTED when the probe cannot run (the message names the
 * cause and the command that works), JP_ERR_TIMEOUT, or kubectl's error.
 * `p` (may be NULL) names the containers to try when container is NULL
 * and whether the pod names its user. */
jp_err kube_session_open(const kube_opts *o, const char *pod, const char *container,
                         const jp_pod *p, kube_session **out, jp_error *err);

const kube_hello *kube_session_hello(const kube_session *s);
/* The container the session runs in. */
const char *kube_session_container(const kube_session *s);

/* One thread snapshot (Thread.print in the container); *out is the
 * caller's (jp_snapshot_free). */
jp_err kube_session_snapshot(kube_session *s, jp_snapshot **out, jp_error *err);

/* One class histogram of the container's JVM (the probe's heap op: it
 * pauses the JVM, a full GC first unless all); *out (cleaned first) gets
 * its biggest classes and the totals. Waits at least 120 s for it (a big
 * heap takes seconds). */
jp_err kube_session_heap(kube_session *s, bool all, jp_heap_histo *out, jp_error *err);
#define KUBE_HEAP_TIMEOUT_NS (120LL * 1000000000LL)

/* Starts a JFR recording of kinds (bit 1 << jp_kind) in the container;
 * interval_ns: cpu period (0 = 10 ms); window_ns: history kept (0 = 30 s). */
jp_err kube_session_profile_start(kube_session *s, uint32_t kinds, int64_t interval_ns,
                                  int64_t window_ns, jp_error *err);
/* The recording's window so far as a profile; *out is the caller's
 * (jp_profile_free). */
jp_err kube_session_profile_read(kube_session *s, jp_profile **out, jp_error *err);
jp_err kube_session_profile_stop(kube_session *s, jp_error *err);
/* The GC summary of the window the last profile_read returned (the probe
 * computes it from the JFR it records, model/gc.h), NULL when there was
 * none; valid until the next profile_read or close. */
const jp_gc_window *kube_session_gc(const kube_session *s);

/* False once the probe's output has ended (the probe or kubectl died);
 * never blocks. For callers that wait between requests (a recording). */
bool kube_session_alive(kube_session *s);

/* Sends bye, waits (bounded) for the probe to clean up and kubectl to
 * exit, kills kubectl when it does not. NULL is a no-op. */
void kube_session_close(kube_session *s);

/* The ms from kube_session_open's start to the hello (for PERFORMANCE.md). */
double kube_session_open_ms(const kube_session *s);

#endif
