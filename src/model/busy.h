/* busy.h - which threads burn CPU, from every piece of evidence, ranked once.
 *
 * Two kinds of evidence say a thread is busy:
 *   profile   CPU samples of the thread in the most recent profile
 *             window(s) (jdk.ExecutionSample, async-profiler cpu): % of one
 *             core over that span. The agent's cpu windows, a local JFR
 *             window, a .jfr file.
 *   snapshot  the thread's CPU-time delta between the last two thread
 *             snapshots (jp_analyze_busy: exact, or RUNNABLE sampling), with
 *             its state and frames.
 * jp_busy_rank() matches them by thread name and ranks every thread by the
 * freshest of the two (the one whose span ends later at its middle), the
 * other filling in where the first says nothing. Never by CPU time since the
 * JVM started: a thread with no number ranks by state (RUNNABLE first), then
 * name. Every row says which evidence it rests on (both, profile, snapshot,
 * none), and jp_busy_row_describe() words it with the evidence's age.
 *
 * Ownership: jp_cpu_evidence and jp_busy_summary are caller storage
 * (_init/_cleanup); evidence owns its names. A summary borrows names from
 * the snapshot and the evidence it was ranked from: it must not outlive
 * them. Not thread-safe. */
#ifndef JP_MODEL_BUSY_H
#define JP_MODEL_BUSY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "model/analyze.h"
#include "model/profile.h"
#include "model/snapshot.h"

#define JP_BUSY_EVIDENCE_MAX_THREADS 100000 /* distinct names kept; more are dropped */

/* ---- profile evidence: CPU per thread name over a span ---- */

typedef struct jp_thread_cpu {
    char *name; /* heap */
    uint64_t cpu_ns;
    uint64_t samples;
} jp_thread_cpu;

typedef struct jp_cpu_evidence {
    jp_thread_cpu *items;
    size_t count, cap;
    int64_t start_ns, end_ns; /* wall clock span the samples cover; 0 unknown */
    unsigned windows;         /* profile windows summed (0 unknown) */
    bool dropped;             /* past JP_BUSY_EVIDENCE_MAX_THREADS */
    jp_u64map index;          /* name hash -> item + 1 */
} jp_cpu_evidence;

void jp_cpu_evidence_init(jp_cpu_evidence *e);
void jp_cpu_evidence_cleanup(jp_cpu_evidence *e);
/* Adds CPU to the thread named name (len bytes; added up per name). */
void jp_cpu_evidence_add(jp_cpu_evidence *e, const char *name, size_t len, uint64_t cpu_ns,
                         uint64_t samples);
/* Adds the cpu cells of p that carry a thread, and takes p's span when e has
 * none. Value 0 with a known period counts samples x period. */
void jp_cpu_evidence_add_profile(jp_cpu_evidence *e, const jp_profile *p);
/* True when e has a span and at least one sample. */
bool jp_cpu_evidence_usable(const jp_cpu_evidence *e);

/* ---- the ranked list ---- */

typedef enum jp_busy_evidence {
    JP_BUSY_BOTH = 0, /* the profile sampled it on CPU and the snapshots saw it run */
    JP_BUSY_PROFILE,  /* only the profile */
    JP_BUSY_SNAPSHOT, /* only the snapshots (CPU delta, or RUNNABLE without numbers) */
    JP_BUSY_NONE      /* neither saw it run */
} jp_busy_evidence;

const char *jp_busy_evidence_name(jp_busy_evidence e); /* "both", "profile", ... */

typedef struct jp_busy_row {
    const char *name;         /* borrowed (snapshot or evidence) */
    long thread;              /* index in the snapshot; -1 when only the profile knows it */
    double cpu_pct;           /* the rank key: % of one core by the freshest evidence; -1 none */
    double profile_pct;       /* over the evidence span; -1 no profile */
    uint64_t profile_samples; /* cpu samples of it in the profile */
    double snapshot_pct;      /* between the two snapshots; -1 unknown */
    jp_cpu_confidence snapshot_conf;
    jp_busy_evidence evidence;
} jp_busy_row;

typedef struct jp_busy_summary {
    jp_busy_row *items; /* busiest first */
    size_t count;
    bool have_profile, have_snapshot;       /* which evidence there was at all */
    bool profile_first;                     /* the profile was the fresher: it ranks */
    jp_busy_evidence evidence;              /* overall: BOTH, PROFILE, SNAPSHOT or NONE */
    int64_t window_start_ns, window_end_ns; /* profile span; 0 none */
    unsigned windows;
    int64_t snapshot_ns;          /* when the current snapshot was taken; 0 none */
    int64_t snapshot_interval_ns; /* between the two snapshots; 0 only one */
} jp_busy_summary;

/* Ranks the threads of cur (may be NULL: profile only, a .jfr file) with
 * their snapshot evidence snap (jp_analyze_busy of cur, or rebuilt from a
 * stored snapshot; may be NULL) and the profile evidence ev (may be NULL).
 * Threads of the profile that the snapshot does not have are rows with
 * thread -1; VM-internal threads of the snapshot are left out. */
void jp_busy_rank(const jp_snapshot *cur, const jp_busy_list *snap, const jp_cpu_evidence *ev,
                  jp_busy_summary *out);
void jp_busy_summary_cleanup(jp_busy_summary *s);

/* "cpu 31% over the last 10s window; snapshot 48s old: RUNNABLE, 12% between
 * snapshots". now_ns is the wall clock the ages are counted from. */
size_t jp_busy_row_describe(const jp_busy_summary *s, const jp_busy_row *r, const jp_snapshot *cur,
                            int64_t now_ns, char *buf, size_t len);

/* "ranked by cpu profile of the last 10s window (ended 3s ago); snapshot 48s
 * old, CPU between snapshots over 60s" (what the list rests on, one line). */
size_t jp_busy_summary_describe(const jp_busy_summary *s, int64_t now_ns, char *buf, size_t len);

#endif
