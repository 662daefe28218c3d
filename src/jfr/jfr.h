/* jfr.h - the JFR reader: turns Java Flight Recorder files into jp_profile.
 *
 * Reads files of one or many chunks (format 2.0 and 2.1, JDK and
 * async-profiler dialects), decoding every chunk by its own metadata. Memory
 * grows with distinct stacks and frames, not with events or file size: a
 * file is never mapped nor read whole; a chunk's metadata and checkpoint
 * events are read into memory (at most 64 MiB and 512 MiB), its events a
 * piece at a time (256 KiB, 1 MiB per thread), so one event of a wanted
 * type may take at most 64 MiB (the large checkpoint events are passed over).
 *
 * Damage (truncation, bad magic, impossible sizes, broken references, cycles)
 * stops reading at that point: everything decoded before it stays in the
 * profile, the report is marked partial, and report.error says what and
 * where ("app.jfr: chunk 2 @0x1a2b: ..."). Never crashes, never loops forever.
 *
 * Events -> kinds (ARCHITECTURE.md): jdk.ExecutionSample -> cpu, except in
 * async-profiler files, whose ThreadState pool has STATE_DEFAULT: there
 * STATE_DEFAULT samples are cpu and every other state wall (2.x writes both
 * into this one event); wall as well when async-profiler's "event" setting
 * is "wall". profiler.WallClockSample -> wall (its `samples` field);
 * jdk.ObjectAllocationSample (weight), jdk.ObjectAllocationInNewTLAB
 * (tlabSize), ...OutsideTLAB (allocationSize) -> alloc; jdk.JavaMonitorEnter
 * -> lock, jdk.ThreadPark -> park (duration in ns); profiler.Malloc ->
 * nativemem (size; with `leak` only mallocs whose address no later
 * profiler.Free releases); profiler.LiveObject -> live (allocationSize);
 * profiler.NativeLock -> nativelock (duration); jdk.CPUTimeSample -> cputime
 * (samplingPeriod, ns of CPU), jdk.CPUTimeSamplesLost counted in the kind's
 * `lost`. cpu/wall values are samples x period, the period coming from
 * jdk.ActiveSetting (JDK "period", async-profiler "interval"/"wall"); when
 * none is recorded 10 ms (cpu) / 50 ms (wall) is assumed with a warning.
 * Events without a stack get the one-frame stack "[no stack]"; a stack
 * trace or thread key missing from the chunk's pools is looked up in the
 * chunk before (JDK 17 refers back after a rotation); other broken keys
 * print as "[unknown]" / "[unknown thread]" with a warning. Frame names follow
 * jfr/frame_name.h.
 *
 * GC evidence goes into the profile's GC log (model/gc.h) whatever kinds
 * are asked for, unless skip_gc: jdk.GarbageCollection (gcId, name, cause, sumOfPauses,
 * longestPause), jdk.GCPhasePause (gcId, name, duration), jdk.GCHeapSummary
 * (gcId, when, heapUsed) and jdk.ThreadAllocationStatistics (thread key,
 * allocated), each within --from/--to like the samples. A field the type
 * lacks or a label missing from its pool stays unknown.
 *
 * Chunks decode one after the other, each into a profile of its own, merged
 * in file order. Inside a chunk, its events decode on jfr_options.jobs
 * threads: the metadata and constant pools are read once and shared
 * read-only, the event section is cut into spans whose first events are
 * found from the bytes around them and verified when the span before ends
 * (split.h), each thread adds its spans up by raw pool keys, and the sums
 * are resolved into stacks once, in key order, when the chunk ends. So the
 * result is the same, byte for byte, whatever the number of jobs (one job
 * walks two spans at once, which is faster than one walk). Memory: the
 * distinct stacks and frames, two step buffers per job, the rare events
 * queued by spans ahead of the oldest (at most 2 spans per job of at most
 * 8 MiB), and with `leak` the Malloc and Free events of the chunk
 * being read (48 bytes each, sorted by time) and one entry per malloc
 * address seen.
 *
 * Thread-safety: a reader call uses only its arguments (and threads of its
 * own, joined before it returns); separate calls on separate profiles may
 * run in parallel. */
#ifndef JP_JFR_JFR_H
#define JP_JFR_JFR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/timeutil.h"
#include "model/iodetail.h"
#include "model/profile.h"

#define JFR_MAX_STATES 8

enum { JFR_READ_PREAD = 0, JFR_READ_MAP, JFR_READ_AUTO };

typedef struct jfr_options {
    uint32_t kinds; /* bit mask (1 << jp_kind) of kinds to collect; 0 = all */
    bool threads;   /* keep the sampled thread of each event */
    /* Keep only events whose thread state is one of these (names as the
     * ThreadState pool has them, "STATE_RUNNABLE"; see jfr_states_parse).
     * Events of types without a state are not affected. */
    uint32_t nstates;
    char states[JFR_MAX_STATES][32];
    bool leak;      /* nativemem: only mallocs never freed ... */
    double tail;    /* ... ignoring those in the last `tail` fraction of the
                       malloc/free events' time span (0..1, default 0.1) */
    int jobs;       /* threads decoding a chunk's events; 0 = online CPUs, default 1 */
    uint32_t block; /* smallest span of events handed to a thread, and bytes
                       read at a time from a file; 0 = 256 KiB each (small ones
                       let tests split small inputs and files) */
    bool skip_gc;   /* leave the GC events out of the profile's GC log */
    /* How jfr_read_file reads a big file's events (src/jfr/src.h):
     * JFR_READ_PREAD (the default) copies them out of the page cache into
     * buffers, JFR_READ_MAP maps windows of the file instead, JFR_READ_AUTO
     * maps when the read has one thread (jobs) and a window of the file maps
     * no dearer than it copies on this machine, measured when the read
     * starts (jfr_map_pays). Either way the profile is the same; a file
     * cut while it is mapped fails the read as a pread of it does. */
    int read;
    /* Decode every event by its type's general plan, never by the short
     * path kept for the commonest type of a run (src/jfr/events.c). The
     * profile is the same either way: tests and the fuzz target read both
     * ways and compare. */
    bool plans_only;
    bool has_from, has_to;
    jp_timespec_arg from; /* keep events that start at or after `from` ... */
    jp_timespec_arg to;   /* ... and before `to`; relative times resolve against
                             the file's first chunk start and last chunk end */
    /* When not NULL and io is among the kinds: the endpoint (host or
     * address, and port) of every jdk.SocketRead/Write and the path of every
     * jdk.FileRead/Write kept by the filters are added here, with the time
     * blocked. Sensitive (model/iodetail.h): for local viewers only; the
     * profile never holds them. Borrowed; added to, like `out`. */
    jp_io_detail *io_detail;
} jfr_options;

#define JFR_MAX_WARNINGS 16

typedef struct jfr_report {
    uint32_t chunks_total;    /* chunk headers found */
    uint32_t chunks_read;     /* chunks decoded to their end */
    uint64_t bytes;           /* bytes of input */
    uint64_t events_read;     /* events seen, of every type */
    uint64_t events_used;     /* events that became samples */
    uint64_t events_filtered; /* events dropped by --from/--to or --state */
    int major, minor;         /* format version of the first chunk */
    int64_t start_ns, end_ns; /* recording range over all chunks read */
    bool partial;             /* damage stopped reading early */
    jp_error error;           /* the damage, when partial */
    uint32_t nwarnings;       /* non-fatal oddities (unknown frame type, missing pool entry) */
    uint64_t warnings_dropped;
    char warnings[JFR_MAX_WARNINGS][160];
} jfr_report;

void jfr_options_init(jfr_options *o);

/* Parses a --state list "S[,S]": case-insensitive, "RUNNABLE" short for
 * "STATE_RUNNABLE". Fills o->states; false (with a message in err) on an
 * empty or overlong name or more than JFR_MAX_STATES names. */
bool jfr_states_parse(jfr_options *o, const char *list, jp_error *err);
void jfr_report_init(jfr_report *r);

/* Reads a file into `out` (which may already hold data; it is added to).
 * Returns JP_OK when the whole file was read; otherwise the error code of
 * report->error (report->partial tells whether anything was read). `out`
 * stays valid either way. */
jp_err jfr_read_file(const char *path, const jfr_options *opt, jp_profile *out, jfr_report *rep);

/* The same over a buffer in memory; `name` labels errors. */
jp_err jfr_read_buffer(const uint8_t *data, size_t len, const char *name, const jfr_options *opt,
                       jp_profile *out, jfr_report *rep);

#endif
