/* snapshot_take.h - take a thread snapshot of a live JVM.
 *
 * Two sources fill the same jp_snapshot (model/snapshot.h):
 *   helper       - the jprof-helper.jar agent (ThreadMXBean, exact CPU times,
 *                  identity hashes as lock ids). jprof copies the jar to the
 *                  target's /tmp (owned by the target's user), runs
 *                  `load instrument false /tmp/jprof-helper-V.jar=out=F`, reads
 *                  F through /proc/PID/root and deletes F and the jar. F is
 *                  created empty before the load (claimed=1): a helper that
 *                  ends after jprof stopped waiting finds F gone and leaves
 *                  nothing. The
 *                  jar's name is stable so repeated loads reuse the loaded
 *                  class and do not grow the JVM's class path.
 *   thread-print - `jcmd Thread.print -l` parsed by jvm/threadprint.h.
 * JVM_SNAP_AUTO tries the helper and falls back to thread-print when the
 * helper cannot load (jar not found, agent loading refused, no
 * java.instrument); why is reported in *fallback.
 *
 * The helper jar is found at: $JPROF_HELPER_JAR, then next to the program
 * (PREFIX/share/jprof, base/datapath.h), the build tree, and
 * PKGDATADIR/jprof-helper.jar.
 *
 * Not thread-safe (see attach.h). */
#ifndef JP_JVM_SNAPSHOT_TAKE_H
#define JP_JVM_SNAPSHOT_TAKE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "jvm/attach.h"
#include "jvm/proc.h"
#include "model/snapshot.h"

/* Helper output larger than this is refused (JP_ERR_LIMIT). */
#define JVM_HELPER_MAX_JSON (256u << 20)

typedef enum jvm_snap_source {
    JVM_SNAP_AUTO = 0,
    JVM_SNAP_HELPER,
    JVM_SNAP_THREAD_PRINT
} jvm_snap_source;

/* Parses "auto", "helper", "thread-print"; false when unknown. */
bool jvm_snap_source_parse(const char *s, jvm_snap_source *out);

typedef struct jvm_snap_opts {
    jvm_snap_source source;
    int contention;         /* helper: 1 turn contention monitoring on, 0 off, -1 leave as is */
    const char *helper_jar; /* NULL: find it (see above) */
} jvm_snap_opts;

void jvm_snap_opts_init(jvm_snap_opts *o);

/* Finds the helper jar; writes its path into buf. JP_ERR_NOT_FOUND if none. */
jp_err jvm_helper_jar_find(char *buf, size_t len, jp_error *err);

/* In auto mode, JVMs with more threads than this get Thread.print directly:
 * it costs the target less than the helper jar at that size. */
#define JVM_SNAP_AUTO_MAX_HELPER_THREADS 1000

/* Takes one snapshot. ao may be NULL (defaults). With JVM_SNAP_AUTO, a helper
 * failure that thread-print can work around is copied into *fallback (may be
 * NULL; its code stays JP_OK when the helper worked, or when auto chose
 * Thread.print for a JVM of many threads: then only its message is set; the
 * snapshot's source says what was used). Errors of the attach
 * itself (not a JVM, permission, timeout, exited, attach disabled) are
 * returned as they are, without a fallback attempt. */
jp_err jvm_snapshot_take(const jvm_proc *t, const jvm_attach_opts *ao, const jvm_snap_opts *o,
                         jp_snapshot **out, jp_error *fallback, jp_error *err);

/* Decodes the helper's JSON (exposed for tests and the fuzzer). */
jp_err jvm_helper_json_parse(const char *json, size_t len, jp_snapshot **out, jp_error *err);

#endif
