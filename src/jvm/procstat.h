/* procstat.h - the process-wide figures a header shows for a JVM: its CPU
 * time (/proc/PID/stat) and its heap (the text of `jcmd GC.heap_info`).
 *
 * The same figures come from every source: jprof-top's local pid reads
 * them itself, jprof-probe reads them inside the pod and sends them with a
 * snapshot, the agent sends them with its snapshots to jprof-server.
 *
 * Reading and parsing only; no heap; thread-safe. */
#ifndef JP_JVM_PROCSTAT_H
#define JP_JVM_PROCSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "jvm/attach.h"
#include "jvm/proc.h"
#include "model/snapshot.h"

/* One reading of a JVM's process figures; -1 for what could not be read. */
typedef struct jvm_procstat {
    int64_t cpu_ns;                    /* utime + stime of the whole process */
    int64_t mono_ns;                   /* when it was read (CLOCK_MONOTONIC) */
    int64_t heap_used, heap_committed; /* bytes */
} jvm_procstat;

/* Reads t's CPU time and, over the attach socket (ao may be NULL), its heap
 * (GC.heap_info: one attach round trip). */
void jvm_procstat_read(const jvm_proc *t, const jvm_attach_opts *ao, jvm_procstat *out);

/* Percent of one core the process used between two readings of it; -1
 * when either lacks its CPU time or they are not in order. */
double jvm_procstat_cpu_pct(const jvm_procstat *prev, const jvm_procstat *cur);

/* The snapshot's process figures from cur, and the CPU % since prev (NULL:
 * unknown). */
void jvm_procstat_to_snapshot(const jvm_procstat *prev, const jvm_procstat *cur, jp_snapshot *s);

/* utime + stime of the whole process in ns; -1 when unreadable. */
int64_t jvm_proc_cpu_ns(pid_t pid);

/* The heap in GC.heap_info text: the used and committed bytes summed over
 * the heap lines of every collector (G1 "garbage-first heap total 65536K,
 * used 24576K", JDK 25 "total reserved NK, committed NK, used NK",
 * Serial/Parallel one line per generation, ZGC "ZHeap used NM, capacity
 * NM"; Metaspace counts no heap). False when the text has none. */
bool jvm_heap_info_parse(const char *text, int64_t *used, int64_t *committed);

#endif
