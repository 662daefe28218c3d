#include "jvm/jfc.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/profile.h"

void jvm_jfc_opts_init(jvm_jfc_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kinds = (1u << JP_KIND_CPU) | (1u << JP_KIND_ALLOC) | (1u << JP_KIND_LOCK);
    o->cpu_period_ns = 50 * 1000000LL;
    o->lock_threshold_ns = 10 * 1000000LL;
    o->alloc_per_second = 150;
}

/* A timespan in the unit .jfc files use: whole milliseconds when exact,
 * else microseconds, else nanoseconds. */
static void timespan(char *buf, size_t len, int64_t ns)
{
    if (ns % 1000000 == 0)
        snprintf(buf, len, "%" PRId64 " ms", ns / 1000000);
    else if (ns % 1000 == 0)
        snprintf(buf, len, "%" PRId64 " us", ns / 1000);
    else
        snprintf(buf, len, "%" PRId64 " ns", ns);
}

/* One event, enabled, with a stack trace where it has one; *rc keeps the
 * first failure (a capped buffer that is full). */
static void event(jp_strbuf *out, jp_err *rc, const char *name, const char *setting,
                  const char *value)
{
    bool stack = strcmp(name, "jdk.ActiveSetting") != 0 &&
                 strcmp(name, "jdk.ExecutionSample") != 0 &&
                 strcmp(name, "jdk.CPUTimeSamplesLost") != 0 && strncmp(name, "jdk.GC", 6) != 0 &&
                 strcmp(name, "jdk.GarbageCollection") != 0;
    char extra[96] = "";
    if (setting)
        snprintf(extra, sizeof extra, "    <setting name=\"%s\">%s</setting>\n", setting, value);
    jp_err r = jp_strbuf_printf(
        out,
        "  <event name=\"%s\">\n"
        "    <setting name=\"enabled\">true</setting>\n%s%s"
        "  </event>\n",
        name, stack ? "    <setting name=\"stackTrace\">true</setting>\n" : "", extra);
    if (*rc == JP_OK)
        *rc = r;
}

bool jvm_jfc_cputime(const jvm_jfc_opts *o)
{
    return (o->kinds & (1u << JP_KIND_CPU | 1u << JP_KIND_CPUTIME)) && o->jdk_major >= 25;
}

jp_err jvm_jfc_build(const jvm_jfc_opts *o, jp_strbuf *out, jp_error *err)
{
    const uint32_t jfr_kinds = (1u << JP_KIND_CPU) | (1u << JP_KIND_ALLOC) | (1u << JP_KIND_LOCK) |
                               (1u << JP_KIND_PARK) | (1u << JP_KIND_CPUTIME) | (1u << JP_KIND_IO) |
                               (1u << JP_KIND_OLD);
    if (!(o->kinds & jfr_kinds))
        return jp_error_set(err, JP_ERR_USAGE,
                            "no event kind the JDK engine records (cpu, alloc, lock, park, "
                            "cputime, io, old)");
    if (o->kinds == (1u << JP_KIND_CPUTIME) && o->jdk_major && o->jdk_major < 25)
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "cputime needs JDK 25 (jdk.CPUTimeSample); this is JDK %d",
                            o->jdk_major);
    if (o->cpu_period_ns <= 0 || o->lock_threshold_ns < 0)
        return jp_error_set(err, JP_ERR_USAGE, "a JFR period or threshold is not positive");
    char span[48];
    jp_err rc =
        jp_strbuf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<!-- written by jprof: only the events jprof reads -->\n"
                            "<configuration version=\"2.0\" label=\"jprof\" "
                            "description=\"jprof continuous profiling\" provider=\"jprof\">\n");
    /* the reader takes the cpu sampling period from here */
    event(out, &rc, "jdk.ActiveSetting", NULL, NULL);
    /* GC evidence (model/gc.h): a few events per collection, every kind */
    event(out, &rc, "jdk.GarbageCollection", "threshold", "0 ms");
    event(out, &rc, "jdk.GCPhasePause", "threshold", "0 ms");
    event(out, &rc, "jdk.GCHeapSummary", NULL, NULL);
    if (o->kinds & (1u << JP_KIND_CPU)) {
        timespan(span, sizeof span, o->cpu_period_ns);
        event(out, &rc, "jdk.ExecutionSample", "period", span);
    }
    if (jvm_jfc_cputime(o)) {
        /* JEP 509: Linux CPU-time timers, the exact CPU of each sample in
         * samplingPeriod; its throttle takes a period like ExecutionSample. */
        timespan(span, sizeof span, o->cpu_period_ns);
        event(out, &rc, "jdk.CPUTimeSample", "throttle", span);
        event(out, &rc, "jdk.CPUTimeSamplesLost", NULL, NULL);
    }
    if (o->kinds & (1u << JP_KIND_ALLOC)) {
        /* JDK 16 brought the throttled sample; before it only the per-TLAB
         * events exist. Never both: the reader would count twice. */
        if (o->jdk_major && o->jdk_major < 16) {
            event(out, &rc, "jdk.ObjectAllocationInNewTLAB", NULL, NULL);
            event(out, &rc, "jdk.ObjectAllocationOutsideTLAB", NULL, NULL);
        } else {
            char rate[32];
            snprintf(rate, sizeof rate, "%u/s", o->alloc_per_second ? o->alloc_per_second : 150);
            event(out, &rc, "jdk.ObjectAllocationSample", "throttle", rate);
        }
    }
    /* objects still alive at the end of the window, at their allocation
     * site (kind old): the sampler keeps at most 256; cutoff 0 means no
     * search for paths to GC roots, which is what makes it cheap */
    if (o->kinds & (1u << JP_KIND_OLD))
        event(out, &rc, "jdk.OldObjectSample", "cutoff", "0 ns");
    timespan(span, sizeof span, o->lock_threshold_ns);
    if (o->kinds & (1u << JP_KIND_LOCK))
        event(out, &rc, "jdk.JavaMonitorEnter", "threshold", span);
    if (o->kinds & (1u << JP_KIND_PARK))
        event(out, &rc, "jdk.ThreadPark", "threshold", span);
    /* I/O waits at the locks' threshold (10 ms continuous, lower in a
     * profile-until window): the stack and the time blocked are read; the
     * host, port and path stay in the target */
    if (o->kinds & (1u << JP_KIND_IO)) {
        event(out, &rc, "jdk.SocketRead", "threshold", span);
        event(out, &rc, "jdk.SocketWrite", "threshold", span);
        event(out, &rc, "jdk.FileRead", "threshold", span);
        event(out, &rc, "jdk.FileWrite", "threshold", span);
    }
    jp_err r = jp_strbuf_puts(out, "</configuration>\n");
    if (rc == JP_OK)
        rc = r;
    if (rc != JP_OK)
        return jp_error_set(err, rc, "the JFR settings do not fit the buffer");
    return JP_OK;
}

int jvm_jdk_major(const char *reply)
{
    for (const char *p = reply; p && *p;) {
        if (strncmp(p, "JDK ", 4) == 0 && p[4] >= '1' && p[4] <= '9') {
            char *end;
            long v = strtol(p + 4, &end, 10);
            if ((*end == '.' || *end == '\n' || *end == '\0' || *end == '-' || *end == '+') &&
                v > 0 && v < 1000)
                return (int)v;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return 0;
}
