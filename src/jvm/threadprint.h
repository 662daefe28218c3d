/* threadprint.h - parser of `jcmd PID Thread.print -l` text into a snapshot.
 *
 * The fallback snapshot source (the helper jar is the primary one). Knows the
 * HotSpot 17..25 layout: thread headers with `#id`, `[tid]` (JDK 19+),
 * `daemon`, `cpu=…ms`, `elapsed=…s`, hex or decimal `nid`; the
 * `java.lang.Thread.State:` line; frames; `- locked`, `- waiting to lock`,
 * `- waiting to re-lock in wait()`, `- waiting on`, `- parking to wait for`;
 * `Locked ownable synchronizers:`; and the "Found one Java-level deadlock:"
 * sections, recorded as the JVM's own deadlock reports.
 *
 * The text is untrusted (it comes from the target process): every read is
 * bounded by len, no NUL terminator is needed, strings are cut at fixed
 * caps, and garbage lines are skipped rather than trusted. */
#ifndef JP_JVM_THREADPRINT_H
#define JP_JVM_THREADPRINT_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/snapshot.h"

/* Input larger than this is refused with JP_ERR_LIMIT. */
#define JVM_THREADPRINT_MAX_BYTES (256u << 20)

/* Parses len bytes of text into a new snapshot (source "thread-print",
 * taken_ns as given), owner links resolved. *out is the caller's to free with
 * jp_snapshot_free(). Fails with JP_ERR_FORMAT when no thread is found. */
jp_err jvm_threadprint_parse(const char *text, size_t len, int64_t taken_ns, jp_snapshot **out,
                             jp_error *err);

#endif
