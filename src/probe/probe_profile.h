/* probe_profile.h - the one place jprof-probe controls a profiler.
 *
 * Today it records with the JDK Flight Recorder through src/jvm/recorder.h
 * (start with a .jfc of only the asked kinds, built by src/jvm/jfc.h and
 * kept in the probe's private directory; dump; stop) and parses the dump
 * with src/jfr. When src/jvm/engine.h (issue 15: one start/read/stop
 * interface for JFR and async-profiler) lands, this file is the only one
 * to switch over: the protocol code in main.c only calls these four
 * functions.
 *
 * Ownership: probe_profile is caller storage that must not move while
 * running (the cleanup registry points into its recording). A profile
 * returned by probe_profile_read belongs to the caller (jp_profile_free).
 * Not thread-safe. */
#ifndef JP_PROBE_PROFILE_H
#define JP_PROBE_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "jfr/jfr.h"
#include "jvm/proc.h"
#include "jvm/recorder.h"
#include "model/profile.h"

typedef struct probe_profile {
    bool running;
    uint32_t kinds;
    int64_t interval_ns, window_ns;
    int64_t started_ns; /* wall clock */
    char settings[256]; /* the .jfc file in the private dir */
    jvm_recording rec;
} probe_profile;

/* Starts a recording of kinds (bit 1 << jp_kind) sampling cpu every
 * interval_ns, keeping window_ns of history; dir is the probe's private
 * directory (the settings file goes there). jdk_major from VM.version
 * (0 unknown). JP_ERR_UNSUPPORTED for kinds JFR cannot record (wall). */
jp_err probe_profile_start(probe_profile *p, const jvm_proc *t, const char *dir, int jdk_major,
                           uint32_t kinds, int64_t interval_ns, int64_t window_ns, jp_error *err);

/* The window so far as a parsed profile (*out is new; the caller frees it)
 * and the reader's report. */
jp_err probe_profile_read(probe_profile *p, jp_profile **out, jfr_report *rep, jp_error *err);

/* Stops the recording and removes the settings file; safe when stopped. */
jp_err probe_profile_stop(probe_profile *p, jp_error *err);

/* Stops every recording named like the ones a probe with pid `pid` starts
 * (jvm/recorder.h: "jprof-<pid>-<n>") in target t: what a probe that was
 * killed left running. Returns how many it stopped. */
int probe_profile_stop_orphans(const jvm_proc *t, int pid);

#endif
