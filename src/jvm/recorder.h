/* recorder.h - JDK Flight Recorder control over jcmd, for live profiles.
 * The JFR engine of jvm/engine.h is built on it; programs use the engine.
 *
 * A live view keeps one recording running with a rolling window:
 *   jvm_jfr_start()  JFR.start name=jprof-<ourpid>-<n> settings=S maxage=W disk=true
 *   jvm_jfr_dump()   JFR.dump name=… filename=/tmp/jprof-….jfr in the target, read
 *                    through /proc/PID/root, deleted: the last W of data
 *   jvm_jfr_stop()   JFR.stop name=…
 * Each recording registers a cleanup action (jvm/cleanup.h) that stops it,
 * so an interrupted jprof never leaves it running; dump files are registered
 * too. The recording name is unique per jprof process, so two jprof sessions
 * on one JVM do not stop each other's recordings.
 *
 * async-profiler: jvm_recorder_check_conflict() refuses (JP_ERR_CONFLICT)
 * when someone else's libasyncProfiler is mapped in the target.
 *
 * Ownership: jvm_recording is caller storage; it must stay at the same
 * address while running (the cleanup registry points at it). Not
 * thread-safe. */
#ifndef JP_JVM_RECORDER_H
#define JP_JVM_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "jvm/attach.h"
#include "jvm/proc.h"

/* JFR dumps larger than this are refused (JP_ERR_LIMIT). */
#define JVM_JFR_MAX_DUMP (512u << 20)

typedef struct jvm_recording {
    jvm_proc target;
    jvm_attach_opts attach;
    char name[64];
    bool running;
    int cleanup; /* jvm_cleanup handle while running */
} jvm_recording;

/* JP_ERR_CONFLICT when an async-profiler someone else loaded is mapped. */
jp_err jvm_recorder_check_conflict(const jvm_proc *t, jp_error *err);

/* Starts a recording. settings: "profile", "default" or a .jfc path inside the
 * target (NULL = "profile"); window_ns: maxage of the rolling window (0 = 30 s).
 * ao may be NULL. */
jp_err jvm_jfr_start(const jvm_proc *t, const jvm_attach_opts *ao, const char *settings,
                     int64_t window_ns, jvm_recording *rec, jp_error *err);

/* Dumps what the recording holds now and returns the JFR bytes (heap, the
 * caller frees). The file in the target is deleted before returning. */
jp_err jvm_jfr_dump(jvm_recording *rec, uint8_t **data, size_t *len, jp_error *err);

/* Stops the recording (no file is written). Safe to call twice. */
jp_err jvm_jfr_stop(jvm_recording *rec, jp_error *err);

/* One JFR.* command line; JFR answers most failures with result code 0 and
 * a sentence, so a reply without ok_marker (when given) is
 * JP_ERR_PROTOCOL with the reply's first line. ao may be NULL. */
jp_err jvm_jfr_cmd(const jvm_proc *t, const jvm_attach_opts *ao, const char *line,
                   const char *ok_marker, jp_error *err);

/* Raw `JFR.check` output (heap, the caller frees). */
jp_err jvm_jfr_check(const jvm_proc *t, const jvm_attach_opts *ao, char **text, jp_error *err);

/* True when a JFR.check text lists a recording with this exact name. */
bool jvm_jfr_check_lists(const char *check_text, const char *name);

#endif
