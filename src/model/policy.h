/* policy.h - which JVMs the agent profiles, and how (jprof(7), "Annotations"):
 * jprof-agent decides with it, `kubectl jprof status` reads the same rules back.
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
 * Ownership: jp_policy is caller storage with no heap; reason strings are
 * static. Thread-safe. */
#ifndef JP_MODEL_POLICY_H
#define JP_MODEL_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JP_ANN_PROFILE "jprof.io/profile"
#define JP_ANN_UNTIL "jprof.io/profile-until"
#define JP_ANN_EVENTS "jprof.io/events"
#define JP_ANN_DELAY "jprof.io/startup-delay"
#define JP_ANN_THREADS "jprof.io/threads"
#define JP_ANN_HEAP "jprof.io/heap-histogram"

/* Bounds of jprof.io/heap-histogram: a class histogram stops the JVM (a
 * full GC and a heap walk), so by default never more often than every
 * minute (--heap-min-interval lowers it, for tests). */
#define JP_HEAP_MIN_NS (60LL * 1000000000LL)
#define JP_HEAP_MAX_NS (24LL * 3600 * 1000000000LL)

typedef enum jp_policy_mode {
    JP_POLICY_OFF = 0,
    JP_POLICY_CONTINUOUS,
    JP_POLICY_TEMPORARY,
    JP_POLICY_DISABLED,
} jp_policy_mode;

/* Thread-snapshot density. */
typedef enum jp_policy_threads {
    JP_THREADS_OFF = 0,
    JP_THREADS_LOW,  /* sparse: continuous profiling default */
    JP_THREADS_HIGH, /* dense: temporary window default */
} jp_policy_threads;

/* Status reasons the policy can give (ARCHITECTURE.md, "Status reason"). */
#define JP_REASON_DISABLED "disabled"
#define JP_REASON_NOT_ENABLED "not_enabled"
#define JP_REASON_EXPIRED "window_expired"
#define JP_REASON_INVALID "invalid_annotation"

typedef struct jp_kv {
    const char *key, *value;
} jp_kv;

/* What applies when an annotation is absent. */
typedef struct jp_policy_defaults {
    uint32_t kinds;           /* bit (1 << jp_kind); default cpu, alloc, lock */
    int64_t startup_delay_ns; /* default 0 */
    int64_t heap_min_ns;      /* shortest jprof.io/heap-histogram accepted: JP_HEAP_MIN_NS */
} jp_policy_defaults;

void jp_policy_defaults_init(jp_policy_defaults *d);

typedef struct jp_policy {
    jp_policy_mode mode;
    bool profile; /* mode is CONTINUOUS or TEMPORARY and nothing was invalid */
    uint32_t kinds;
    int64_t startup_delay_ns;
    jp_policy_threads threads;
    int64_t until_ns;      /* end of the temporary window (also when expired), 0 none */
    int64_t heap_every_ns; /* class histograms this often (temporary window only), 0 none */
    bool heap_outside;     /* jprof.io/heap-histogram is set but no temporary window is open */
    const char *reason;    /* static; NULL when profiled */
    char message[256];     /* for humans; "" when profiled */
} jp_policy;

/* Evaluates annotations (n pairs; keys outside jprof.io/ are ignored) at now_ns.
 * d may be NULL for the defaults. */
void jp_policy_eval(const jp_kv *kv, size_t n, int64_t now_ns, const jp_policy_defaults *d,
                    jp_policy *out);

/* Parses "cpu,alloc,lock" into a kind mask; false with a message naming the
 * first unknown word. */
bool jp_policy_kinds_parse(const char *s, uint32_t *mask, char *msg, size_t msglen);

/* "off" / "continuous" / "temporary" / "disabled". */
const char *jp_policy_mode_name(jp_policy_mode m);
/* "off" / "low" / "high". */
const char *jp_policy_threads_name(jp_policy_threads t);

/* When the decision can next change by time alone (the window end), or 0. */
int64_t jp_policy_next_change(const jp_policy *p, int64_t now_ns);

#endif
