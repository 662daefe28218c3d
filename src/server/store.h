/* store.h - the one interface jprof-server keeps its data behind.
 *
 * A store is an ops table plus opaque state. Two implementations:
 *   store_sqlite.c      the embedded store (one SQLite file per UTC day)
 *   store_clickhouse.c  ClickHouse over its HTTP interface
 * Both must give the same answers to the same calls; tests/integration runs
 * one API suite against each.
 *
 * CONTRACT (every implementation):
 *
 * Time and days. All times are int64 ns since the Unix epoch, UTC. A "day"
 * is floor(t / 86400 s) (UTC), written "YYYY-MM-DD". A profile window belongs
 * to the day of its start_ns; a status, snapshot or deadlock to the day of its
 * time_ns. "now" is store_now_ns() (never the raw clock), so tests can move it.
 * A time range [from_ns, to_ns) selects windows whose start_ns lies in it,
 * and documents whose time_ns lies in it.
 *
 * Threads. Every op may be called from any thread at any time, concurrently,
 * except close(). Reads must not wait for writes to finish (they may see data
 * up to the last commit).
 *
 * Ownership. Inputs are borrowed for the duration of the call only. Strings
 * and arrays handed to callbacks are borrowed for the duration of that
 * callback only: copy what you keep. Callbacks return true to go on and
 * false to stop; a store stops promptly after false and returns JP_OK with
 * info->stopped set (the caller then knows its list was cut).
 *
 * Errors. JP_OK, or a jp_err with a message in err. The server maps:
 *   JP_ERR_TIMEOUT (overloaded: write queue full, budget of a write)
 *     -> 429 on ingest, 503 on queries;
 *   JP_ERR_IO, JP_ERR_PROTOCOL (store down, unreachable, failing) -> 503;
 *   both mean "retry later";  JP_ERR_LIMIT on write -> 413;
 *   JP_ERR_USAGE on a query (filter the store cannot serve) -> 400;
 *   anything else -> 500.
 * A store never prints; it may count into its own stats (stats()).
 *
 * Budgets and partial answers. Read ops take a store_budget. When a budget
 * runs out the store stops reading, returns JP_OK with what it has, and sets
 * info->partial and info->partial_reason ("time budget 3s exceeded",
 * "row budget 50000000 exceeded", "too many distinct stacks (200000)"). A
 * store may also answer partially for its own reasons (a day file unreadable):
 * same flags. It never silently drops data it was asked for. */
#ifndef JP_SERVER_STORE_H
#define JP_SERVER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/profile.h"
#include "wire/batch.h"

#define STORE_DAY_NS (86400LL * 1000000000LL)
#define STORE_RETENTION_MAX_DAYS 7

/* ns since epoch as the server sees it: the real clock plus the test-only
 * offset from env JPROF_TEST_CLOCK_OFFSET (a duration such as "-8d" or a
 * number of seconds; read once). Never set it in production. */
int64_t store_now_ns(void);
/* The offset in effect (0 in production), for a loud log line at start. */
int64_t store_clock_offset_ns(void);
/* Day number of a time, and "YYYY-MM-DD" of a day number (buf >= 11 bytes). */
int64_t store_day_of(int64_t t_ns);
void store_day_format(int64_t day, char *buf, size_t len);

/* ---- write ---- */

typedef struct store_write_result {
    bool duplicate;        /* the batch id was seen before (in any retained day); nothing written */
    uint64_t windows;      /* profile windows written */
    uint64_t stack_rows;   /* rows of those windows */
    uint64_t new_stacks;   /* stacks this batch stored for the first time that day */
    uint64_t docs;         /* statuses + snapshots + deadlocks written */
    uint64_t docs_refused; /* documents dropped: their day is not retained or after tomorrow */
} store_write_result;

/* Which windows of a batch to skip (the server refuses windows older than the
 * retention before writing); NULL = write all. skip[i] for batch->windows[i]. */
typedef struct store_write_opts {
    const bool *skip_windows;
    uint64_t body_bytes; /* bytes received on the wire, for ingestion stats */
    /* Called at most once by write_batch, on the caller's thread, from the
     * moment the store reads nothing more of the batch (a store that queues
     * its write keeps only what it encoded): the caller may then free the
     * batch's bulk (jp_batch_shed) while the write waits. NULL: never. */
    void (*release)(void *ctx);
    void *release_ctx;
} store_write_opts;

/* ---- queries ---- */

typedef struct store_budget {
    int64_t time_ns;     /* wall-clock budget for the call; 0 = none */
    uint64_t max_rows;   /* stack rows (or documents) to read; 0 = none */
    uint64_t max_stacks; /* distinct stacks to deliver (flame); 0 = none */
} store_budget;

typedef struct store_query_info {
    uint64_t rows_scanned;    /* stack rows / documents the store read */
    uint64_t windows_scanned; /* profile windows (blobs) read */
    uint64_t bytes_scanned;   /* stored bytes read (compressed) */
    bool stopped;             /* the callback returned false */
    bool partial;             /* a budget ran out or some data could not be read */
    char partial_reason[160];
} store_query_info;

/* What to read. NULL strings and kind = -1 mean "any". Namespace scope
 * (tokens) is enforced by the server before it calls the store. */
typedef struct store_filter {
    const char *ns, *service, *pod;
    const char *thread; /* flame only: exact thread name, NULL = all threads */
    int kind;           /* jp_kind, or -1 */
    int64_t from_ns, to_ns;
} store_filter;

/* One aggregated flame input row. The same (stack, thread) may be delivered
 * more than once (e.g. once per day): the caller adds them up. frames are
 * root first; thread is NULL when the row had none. */
typedef struct store_stack_row {
    uint64_t stack_id;
    const char *const *frames;
    const size_t *frame_lens;
    const uint8_t *frame_kinds; /* jp_frame_kind per frame, NULL when not stored */
    uint32_t depth;
    bool truncated;
    const char *thread;
    uint64_t samples, value;
} store_stack_row;
typedef bool (*store_stack_cb)(const store_stack_row *row, void *ctx);

/* Per kind totals of what a flame query covered (for meta), filled by flame(). */
typedef struct store_flame_totals {
    uint64_t windows;          /* windows matched */
    uint64_t events;           /* sum of their raw event counts */
    bool any_dropped;          /* some window reported dropped events */
    bool any_truncated;        /* some window reported truncated stacks/rows */
    int64_t period_ns;         /* the period of the newest matching window, 0 unknown */
    int64_t first_ns, last_ns; /* start of the oldest / end of the newest matched window */
} store_flame_totals;

/* One target (namespace, service, pod) with data in the range. */
typedef struct store_target_row {
    const jp_batch_target *target; /* latest identity seen */
    uint32_t kinds;                /* bit (1 << jp_kind) of kinds with windows in range */
    uint64_t windows;              /* windows in range */
    int64_t first_ns, last_ns;     /* first window start / last window end (or status time) */
    const char *state, *reason;    /* latest status in range, NULL when none */
    const char *mode;              /* the latest status's policy mode, NULL unknown */
    int64_t until_ns;              /* its temporary window's end, 0 none */
} store_target_row;
typedef bool (*store_target_cb)(const store_target_row *row, void *ctx);

/* A stored JSON document (thread snapshot, deadlock event) or a status. */
typedef struct store_doc_row {
    const jp_batch_target *target;
    int64_t time_ns;
    const char *json; /* snapshots, deadlocks: the stored JSON object text */
    size_t json_len;
    /* statuses only (json == NULL): */
    const char *state, *reason, *message, *engine;
    const char *mode; /* "continuous", "temporary", "disabled", "off"; NULL unknown */
    int64_t until_ns; /* end of the temporary window, 0 none */
} store_doc_row;
typedef bool (*store_doc_cb)(const store_doc_row *row, void *ctx);

/* Ingestion health of one collector over a range (per collector, sum over days). */
typedef struct store_ingest_row {
    const char *collector;
    const char *version;          /* latest reported, may be NULL */
    uint64_t accepted, duplicate; /* batches */
    uint64_t rejected;            /* batches the server refused (store_note_rejected) */
    const char *last_reject_reason;
    uint64_t windows, stack_rows, bytes;
    int64_t first_ns, last_ns; /* receive times */
    int64_t last_heartbeat_ns;
    /* latest agent queue counters reported in range */
    uint64_t queue_dropped_batches, queue_dropped_bytes, queue_bytes;
    int64_t queue_oldest_dropped_ns;
} store_ingest_row;
typedef bool (*store_ingest_cb)(const store_ingest_row *row, void *ctx);

/* One retained day (partition). */
typedef struct store_day_row {
    int64_t day; /* day number (store_day_of) */
    uint64_t windows, stack_rows, stacks, docs, batches;
    uint64_t bytes;     /* on disk (SQLite: file + WAL; ClickHouse: compressed parts) */
    int64_t expires_ns; /* when retention removes it: (day + retention_days) * STORE_DAY_NS */
} store_day_row;
typedef bool (*store_day_cb)(const store_day_row *row, void *ctx);

/* Counters for /metrics, cumulative since open. */
typedef struct store_stats {
    uint64_t writes, write_errors, write_ns_total; /* batches written (incl. duplicates) */
    uint64_t commits;                              /* transactions (group commit: <= writes) */
    uint64_t queries, query_errors, query_ns_total;
    uint64_t retention_runs, retention_days_removed;
    int64_t retention_last_run_ns; /* 0 never */
    bool available;                /* last contact with the backend worked */
} store_stats;

typedef struct store store;

typedef struct store_ops {
    const char *name; /* "sqlite", "clickhouse" */

    /* Flushes, waits for in-flight writes and frees everything. s may be NULL. */
    void (*close)(store *s);

    /* Writes a batch atomically and durably: returns only after the data
     * survives kill -9 / power loss of the server process (SQLite: COMMIT
     * with synchronous=FULL; ClickHouse: the INSERTs answered 200), or with an
     * error, in which case nothing of the batch is visible and its id is not
     * recorded. Dedupe: a batch id already recorded in any retained day ->
     * JP_OK with res->duplicate and nothing written except the ingestion
     * counter. Two concurrent writes of the same id: exactly one is not a
     * duplicate. Windows with start_ns older than the retention at call time
     * are the caller's business (it sets skip_windows). */
    jp_err (*write_batch)(store *s, const jp_batch *b, const store_write_opts *opt,
                          store_write_result *res, jp_error *err);

    /* Counts a batch the server refused (400/413) for ingestion stats; best
     * effort (may be buffered and lost on crash). collector may be NULL. */
    void (*note_rejected)(store *s, const char *collector, const char *reason, int64_t time_ns);

    /* Targets with windows or statuses in [from, to) matching filter (ns/
     * service/pod; kind ignored), ordered by namespace, service, pod. */
    jp_err (*targets)(store *s, const store_filter *f, const store_budget *b, store_target_cb cb,
                      void *ctx, store_query_info *info, jp_error *err);

    /* Stack rows of windows matching filter (ns and service required; kind
     * required, >= 0) in [from, to), aggregated as far as the store finds
     * convenient (see store_stack_row), with frames resolved. totals may be
     * NULL. Memory bounded by distinct stacks (max_stacks), never by rows.
     * The caller builds the flame tree AND the top table from these rows:
     * top must cover all data, so there is no separate top op. Called
     * through store_flame, which checks the filter and zeroes *totals
     * (never NULL here) and *info first. */
    jp_err (*flame)(store *s, const store_filter *f, const store_budget *b, store_stack_cb cb,
                    void *ctx, store_flame_totals *totals, store_query_info *info, jp_error *err);

    /* The newest thread snapshot per target (ns required; service, pod
     * optional) with time_ns in [from, to), ordered by pod. */
    jp_err (*snapshots_latest)(store *s, const store_filter *f, const store_budget *b,
                               store_doc_cb cb, void *ctx, store_query_info *info, jp_error *err);

    /* Deadlock events in [from, to) matching the filter, newest first. */
    jp_err (*deadlocks)(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                        void *ctx, store_query_info *info, jp_error *err);

    /* GC summaries of profile windows whose start lies in [from, to)
     * matching the filter (kind ignored), newest first: time_ns is the
     * window's start, json the record of wire/gc_json.h (no target). A GC
     * summary belongs to the day of its start and counts as a document. */
    jp_err (*gc)(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb, void *ctx,
                 store_query_info *info, jp_error *err);

    /* Class histograms (documents {"target", "time", "histogram"}, the
     * histogram of wire/heap_json.h) taken in [from, to) matching the
     * filter (kind ignored), newest first; time_ns is when it was taken. */
    jp_err (*heaps)(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                    void *ctx, store_query_info *info, jp_error *err);

    /* Target status history in [from, to) matching the filter, newest first. */
    jp_err (*statuses)(store *s, const store_filter *f, const store_budget *b, store_doc_cb cb,
                       void *ctx, store_query_info *info, jp_error *err);

    /* Ingestion per collector with receive time in [from, to), ordered by collector. */
    jp_err (*ingestion)(store *s, const store_filter *f, const store_budget *b, store_ingest_cb cb,
                        void *ctx, store_query_info *info, jp_error *err);

    /* Every retained day, oldest first. */
    jp_err (*days)(store *s, store_day_cb cb, void *ctx, jp_error *err);

    /* Removes every day d for which !store_day_retained(d, store_now_ns(),
     * retention_days) (SQLite: deletes the day's files; ClickHouse: drops the
     * day partitions). *removed gets the number of days removed. Batch ids of
     * removed days are forgotten. */
    jp_err (*enforce_retention)(store *s, int retention_days, uint32_t *removed, jp_error *err);

    /* Snapshot of the counters (never fails). */
    void (*stats)(store *s, store_stats *out);
} store_ops;

struct store {
    const store_ops *ops;
    void *impl;
};

/* Options every store understands; each store adds its own open function. */
typedef struct store_config {
    int retention_days; /* 1..STORE_RETENTION_MAX_DAYS */
} store_config;

/* Retention, shared so both stores agree: a day is kept while all of it is
 * younger than retention_days, i.e. while d * 24h >= now - retention_days * 24h.
 * So nothing older than the retention is ever kept (between retention - 1 and
 * retention full days are). A day expires at (d + retention_days) * 24h, and
 * the server refuses windows whose day is not retained. */
static inline bool store_day_retained(int64_t day, int64_t now_ns, int retention_days)
{
    return day * STORE_DAY_NS >= now_ns - (int64_t)retention_days * STORE_DAY_NS;
}

/* Why a window starting at start_ns is refused at server time now: "retention"
 * (its day is older than retention_days) or "future" (it starts later than
 * now + max_skew_ns: the collector's clock is ahead), with a sentence in
 * *why; NULL (and *why NULL) when it is stored. */
const char *store_window_refusal(int64_t start_ns, int64_t now, int retention_days,
                                 int64_t max_skew_ns, const char **why);

/* Each store declares its open function in its own header (store_sqlite.h,
 * store_clickhouse.h), taking a store_config plus its own options, and
 * returns a heap store closed with s->ops->close(s). Opening runs retention
 * once before returning. */

/* Shared helpers (store.c). */
/* Frees a store through its ops; NULL is a no-op. */
void store_close(store *s);

/* The flame op, called through here: info and *totals (totals may be NULL)
 * zeroed, and a filter without namespace, service or a valid kind refused
 * (JP_ERR_USAGE) before the store is asked, the same for every store. */
jp_err store_flame(store *s, const store_filter *f, const store_budget *b, store_stack_cb cb,
                   void *ctx, store_flame_totals *totals, store_query_info *info, jp_error *err);

/* Marks an answer partial with a reason; the first reason wins (later calls
 * are no-ops), so the user sees what stopped the read first. */
void store_info_partial(store_query_info *info, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* True (and the answer marked partial) when the time budget of b, counted
 * from t0 (jp_time_mono_ns), is used up; false when b has none. */
bool store_info_time_over(store_query_info *info, const store_budget *b, int64_t t0);

#endif
