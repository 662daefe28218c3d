/* probe_profile.h - the one place jprof-probe controls a profiler.
 *
 * It records through the engine interface of src/jvm/engine.h as a viewer
 * (a rolling window read again and again): the JDK Flight Recorder with
 * jprof's own settings of only the asked kinds (src/jvm/jfc.h), parsed
 * inside the container by src/jfr. The protocol code in main.c only calls
 * these functions.
 *
 * Ownership: probe_profile is caller storage; its engine is heap, freed by
 * probe_profile_stop. A profile returned by probe_profile_read belongs to
 * the caller (jp_profile_free). Not thread-safe. */
#ifndef JP_PROBE_PROBE_PROFILE_H
#define JP_PROBE_PROBE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"
#include "jfr/jfr.h"
#include "jvm/engine.h"
#include "jvm/proc.h"
#include "model/profile.h"

typedef struct probe_profile {
    bool running;
    uint32_t kinds;
    int64_t interval_ns, window_ns;
    int64_t started_ns; /* wall clock */
    jvm_engine *engine; /* while running */
} probe_profile;

/* Starts a recording of kinds (bit 1 << jp_kind) sampling cpu every
 * interval_ns (0: 10 ms), keeping window_ns of history. jdk_major from
 * VM.version (0 unknown). JP_ERR_UNSUPPORTED for kinds JFR cannot record
 * (wall, nativemem, live, nativelock). */
jp_err probe_profile_start(probe_profile *p, const jvm_proc *t, int jdk_major, uint32_t kinds,
                           int64_t interval_ns, int64_t window_ns, jp_error *err);

/* The recording's name ("jprof-<pid>-<n>"), "" when none runs. */
const char *probe_profile_name(const probe_profile *p);
/* The engine that records it ("jfr"), from the engine interface; "" when
 * nothing runs. */
const char *probe_profile_engine(const probe_profile *p);

/* The last window so far as a parsed profile (*out is new; the caller
 * frees it) and the reader's report. */
jp_err probe_profile_read(probe_profile *p, jp_profile **out, jfr_report *rep, jp_error *err);

/* Stops the recording and removes what it left; safe when stopped. */
jp_err probe_profile_stop(probe_profile *p, jp_error *err);

/* Stops the recordings a probe with pid `pid` (gone) left running in t.
 * Returns how many it stopped. */
int probe_profile_stop_orphans(const jvm_proc *t, pid_t pid);

#endif
