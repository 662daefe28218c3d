/* policy.h - which JVMs the agent profiles, and how (jprof(7), "Annotations").
 *
 * Pure functions over annotation key/value pairs and a clock value, so the
 * same rules serve pod annotations (k8s mode) and the host-mode config, and
 * can be tested without a cluster. Precedence, strongest first:
 *   jprof.io/profile: disabled                       -> off, reason "disabled"
 *   jprof.io/profile-until: T with now < T           -> temporary window until T
 *   jprof.io/profile: continuous                     -> continuous
 *   otherwise                                        -> off ("not_enabled", or
 *                                                      "window_expired" after T)
 * jprof.io/heap-histogram: D (1m..24h) asks for a class histogram every D,
 * only inside a temporary window (never in continuous profiling: each one
 * pauses the JVM).
 * An annotation with a value we cannot use never crashes or half-applies: the
 * target is not profiled, with reason "invalid_annotation" and a message that
 * names the annotation (an explicit "disabled" still wins over it).
 *
 * Ownership: agent_policy is caller storage with no heap; reason strings are
 * static. Thread-safe. */
#ifndef JP_AGENT_POLICY_H
#define JP_AGENT_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_ANN_PROFILE "jprof.io/profile"
#define AGENT_ANN_UNTIL "jprof.io/profile-until"
#define AGENT_ANN_EVENTS "jprof.io/events"
#define AGENT_ANN_DELAY "jprof.io/startup-delay"
#define AGENT_ANN_THREADS "jprof.io/threads"
#define AGENT_ANN_HEAP "jprof.io/heap-histogram"

/* Bounds of jprof.io/heap-histogram: a class histogram stops the JVM (a
 * full GC and a heap walk), so by default never more often than every
 * minute (--heap-min-interval lowers it, for tests). */
#define AGENT_HEAP_MIN_NS (60LL * 1000000000LL)
#define AGENT_HEAP_MAX_NS (24LL * 3600 * 1000000000LL)

typedef enum agent_mode {
    AGENT_MODE_OFF = 0,
    AGENT_MODE_CONTINUOUS,
    AGENT_MODE_TEMPORARY,
    AGENT_MODE_DISABLED,
} agent_mode;

/* Thread-snapshot density. */
typedef enum agent_threads {
    AGENT_THREADS_OFF = 0,
    AGENT_THREADS_LOW,  /* sparse: continuous profiling default */
    AGENT_THREADS_HIGH, /* dense: temporary window default */
} agent_threads;

/* Status reasons the policy can give (ARCHITECTURE.md, "Status reason"). */
#define AGENT_REASON_DISABLED "disabled"
#define AGENT_REASON_NOT_ENABLED "not_enabled"
#define AGENT_REASON_EXPIRED "window_expired"
#define AGENT_REASON_INVALID "invalid_annotation"

typedef struct agent_kv {
    const char *key, *value;
} agent_kv;

/* What applies when an annotation is absent. */
typedef struct agent_policy_defaults {
    uint32_t kinds;           /* bit (1 << jp_kind); default cpu, alloc, lock */
    int64_t startup_delay_ns; /* default 0 */
    int64_t heap_min_ns;      /* shortest jprof.io/heap-histogram accepted: AGENT_HEAP_MIN_NS */
} agent_policy_defaults;

void agent_policy_defaults_init(agent_policy_defaults *d);

typedef struct agent_policy {
    agent_mode mode;
    bool profile; /* mode is CONTINUOUS or TEMPORARY and nothing was invalid */
    uint32_t kinds;
    int64_t startup_delay_ns;
    agent_threads threads;
    int64_t until_ns;      /* end of the temporary window (also when expired), 0 none */
    int64_t heap_every_ns; /* class histograms this often (temporary window only), 0 none */
    bool heap_outside;     /* jprof.io/heap-histogram is set but no temporary window is open */
    const char *reason;    /* static; NULL when profiled */
    char message[256];     /* for humans; "" when profiled */
} agent_policy;

/* Evaluates annotations (n pairs; keys outside jprof.io/ are ignored) at now_ns.
 * d may be NULL for the defaults. */
void agent_policy_eval(const agent_kv *kv, size_t n, int64_t now_ns, const agent_policy_defaults *d,
                       agent_policy *out);

/* Parses "cpu,alloc,lock" into a kind mask; false with a message naming the
 * first unknown word. */
bool agent_kinds_parse(const char *s, uint32_t *mask, char *msg, size_t msglen);

/* "off" / "continuous" / "temporary" / "disabled". */
const char *agent_mode_name(agent_mode m);
/* "off" / "low" / "high". */
const char *agent_threads_name(agent_threads t);

/* When the decision can next change by time alone (the window end), or 0. */
int64_t agent_policy_next_change(const agent_policy *p, int64_t now_ns);

#endif
