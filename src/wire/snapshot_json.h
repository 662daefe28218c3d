/* snapshot_json.h - the JSON form of a thread snapshot and its analyses, as
 * printed by `jprof-top -b --format json` and shipped in upload batches.
 *
 * Shape (every key always present; unknown numbers are null):
 *   { "target": {"pid", "main_class", "user", "jvm", "start"},
 *     "source": "helper" | "thread-print", "taken_at": RFC 3339,
 *     "interval_ms": ms since the previous snapshot or null, "truncated",
 *     "process": {"cpu_pct" (of one core, since the source's previous snapshot),
 *                 "cpu_ns", "heap_used", "heap_committed" (bytes)}  null where unknown,
 *     "states": {"RUNNABLE": n, ...},
 *     "threads": [ {"id", "native_id", "name", "daemon", "state", "state_detail",
 *                   "cpu_ns", "cpu_pct" (the busy ranking's figure), "cpu_confidence",
 *                   "snapshot_cpu_pct", "profile_cpu_pct", "evidence", "blocked_count",
 *                   "waited_count", "waiting": null | {"kind", "lock", "owner"},
 *                   "held": [lock], "stack": ["pkg.Class.method(File.java:12)"]} ]
 *                 busiest first (the busy ranking), VM-internal threads last,
 *     "busy": {"confidence": "both"|"profile"|"snapshot"|"none", "ranked_by",
 *              "description", "window": null | {"start","end","seconds","age_seconds",
 *              "windows"}, "snapshot": null | {"time","age_seconds","interval_seconds"},
 *              "threads": [{"id","name","state","cpu_pct","profile_cpu_pct",
 *                           "snapshot_cpu_pct","cpu_ns","evidence","why","stack_top"}],
 *              "truncated"},
 *     "contention": {"locks", "threads", "idle_threads"},
 *     "locks": [ {"contended": true, "lock", "owner": null | {"id","name"}, "owner_blocks",
 *                 "owner_chain": [names], "chain_cycles",
 *                 "waiters": [{"id","name","state","kind","contends"}]} ]  contended only,
 *     "idle": [ {"pool", "count", "where", "frame", "state", "threads": [names]} ],
 *     "deadlocks": [ {"jvm_confirmed", "mixed",
 *                     "threads": [ {"id", "name", "waits_for": lock, "holds": lock,
 *                                   "stack": [...]} ]} ] }
 *   lock = {"id": "ff708868" (hex string: may exceed 2^53), "class", "kind":
 *           "monitor" | "synchronizer", "frame": "where taken/waited" | null}
 *
 * Ownership: the json_t is a new reference for the caller (json_decref); the
 * string form is heap text to free(). Thread-safe on distinct snapshots. */
#ifndef JP_WIRE_SNAPSHOT_JSON_H
#define JP_WIRE_SNAPSHOT_JSON_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model/busy.h"
#include "model/snapshot.h"

/* What the caller knows about the JVM (all fields optional: NULL / 0). */
typedef struct jp_snapjson_target {
    int pid;
    const char *main_class;
    const char *user;
    const char *jvm_version;
    int64_t start_ns; /* JVM start, ns since the epoch */
} jp_snapjson_target;

typedef struct jp_snapjson_opts {
    size_t max_frames;          /* frames per thread stack; 0 = all */
    int include_vm;             /* include VM-internal threads (GC, compiler); default 1 */
    const jp_cpu_evidence *cpu; /* profile evidence for the busy ranking; NULL none */
    const jp_busy_list *busy;   /* snapshot evidence; NULL: from prev and cur */
    int64_t now_ns;             /* ages are counted from here; 0 = the snapshot's time */
    size_t busy_limit;          /* rows of "busy"; default 20 */
} jp_snapjson_opts;

void jp_snapjson_opts_init(jp_snapjson_opts *o);

/* cur is required; prev (same JVM and source, earlier) gives cpu_pct; target
 * and o may be NULL. Never NULL. */
json_t *jp_snapshot_json(const jp_snapshot *cur, const jp_snapshot *prev,
                         const jp_snapjson_target *target, const jp_snapjson_opts *o);

/* The same as compact (indent = 0) or indented text; heap, free(). */
char *jp_snapshot_json_text(const jp_snapshot *cur, const jp_snapshot *prev,
                            const jp_snapjson_target *target, const jp_snapjson_opts *o,
                            int indent);

/* ---- reading it back (jprof-server's /api/v1/threads) ----
 *
 * Rebuilds a snapshot from the JSON above, or from the flat form of
 * docs/API.md (waiting_on text or {"lock"}, owner_id, locks_held as
 * "Class@hexid" text), so the server runs the same analyses as jprof-top.
 * What one snapshot cannot give back: cpu_pct (a delta between two
 * snapshots; callers read it from the JSON), VM-internal thread details.
 * Input is untrusted: missing or mistyped fields read as unknown (-1, NULL),
 * and the model's caps (JP_SNAPSHOT_MAX_*) apply. NULL when obj has no
 * "threads" array; otherwise the caller frees with jp_snapshot_free(). */
jp_snapshot *jp_snapshot_from_json(const json_t *obj);

/* The "locks" (contended only), "idle", "contention" and "deadlocks"
 * members of jp_snapshot_json (new references; o may be NULL). */
json_t *jp_snapshot_locks_json(const jp_snapshot *s);
json_t *jp_snapshot_idle_json(const jp_snapshot *s);
json_t *jp_snapshot_contention_json(const jp_snapshot *s);
json_t *jp_snapshot_deadlocks_json(const jp_snapshot *s, const jp_snapjson_opts *o);

/* The "busy" member: the ranking b of cur (may be NULL), at most limit
 * rows with frames top frames each; ages counted from now_ns. */
json_t *jp_busy_json(const jp_busy_summary *b, const jp_snapshot *cur, int64_t now_ns, size_t limit,
                     size_t frames);

/* The snapshot evidence of a stored snapshot obj, for s =
 * jp_snapshot_from_json(obj): per thread "snapshot_cpu_pct" (or "cpu_pct"
 * from agents before it) and "cpu_confidence", interval_ms. Caller storage,
 * jp_busy_list_cleanup. */
void jp_snapshot_busy_from_json(const json_t *obj, const jp_snapshot *s, jp_busy_list *out);

#endif
