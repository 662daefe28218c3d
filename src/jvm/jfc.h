/* jfc.h - the JFR settings jprof asks a JVM for (a .jfc file).
 *
 * The JDK's own setting files (default.jfc, profile.jfc) turn on some 130
 * events: periodic statistics, a thread dump every minute, configuration
 * dumps at every chunk. jprof reads the few of its kinds and three GC
 * events (jdk.GarbageCollection, jdk.GCPhasePause, jdk.GCHeapSummary: a
 * few per collection). A recording that asks for only those costs the
 * target far less (docs/PERFORMANCE.md, "jprof-agent"),
 * and every window restart is cheaper too, because nothing is written at
 * chunk boundaries.
 *
 * The settings are a file rather than JFR.start's "+event#setting=value"
 * options because those arrived in JDK 17, and JDK 11 has Flight Recorder
 * too. Pure functions: no I/O, no globals; thread-safe. */
#ifndef JP_JVM_JFC_H
#define JP_JVM_JFC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"

typedef struct jvm_jfc_opts {
    uint32_t kinds;            /* bit (1 << jp_kind); wall and async-profiler's kinds are
                                  not JFR events and are ignored */
    int jdk_major;             /* 0 = unknown (treated as a current JDK) */
    int64_t cpu_period_ns;     /* jdk.ExecutionSample period, > 0 */
    int64_t lock_threshold_ns; /* jdk.JavaMonitorEnter, jdk.ThreadPark and the I/O events */
    unsigned alloc_per_second; /* jdk.ObjectAllocationSample throttle (JDK 16+) */
} jvm_jfc_opts;

/* Defaults: cpu+alloc+lock, 50 ms cpu period, 10 ms lock threshold,
 * 150 allocation samples a second. */
void jvm_jfc_opts_init(jvm_jfc_opts *o);

/* True when the settings record JDK 25's jdk.CPUTimeSample (kind cputime):
 * cpu or cputime asked for, on a JDK known to be 25 or later. cpu keeps
 * jdk.ExecutionSample beside it. */
bool jvm_jfc_cputime(const jvm_jfc_opts *o);

/* Appends the .jfc XML for o to out (about 1 KB; JP_ERR_LIMIT when a capped
 * out cannot take it). JP_ERR_USAGE when no kind the JDK engine records is
 * asked for, or a period is not positive. */
jp_err jvm_jfc_build(const jvm_jfc_opts *o, jp_strbuf *out, jp_error *err);

/* The JDK feature release from VM.version's reply ("JDK 17.0.15" -> 17,
 * "JDK 8.0_392" -> 8); 0 when the text does not say. */
int jvm_jdk_major(const char *vm_version_reply);

#endif
