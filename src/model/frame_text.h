/* frame_text.h - jprof's printed frame names, for names that arrive as text
 * from other profilers (OpenTelemetry profiles, pprof), and the class-name
 * rule they share with the JFR reader (src/jfr/frame_name.h).
 *
 * jprof prints a Java frame as `pkg.Class.method`, with a hidden class's
 * per-run suffix cut ("/0x..", "+0x..", ".0x..") and a lambda's counter
 * dropped ("$$Lambda$87" -> "$$Lambda"), so the same code is the same frame
 * and the same stack id in every JVM and every day. async-profiler prints
 * `pkg/Class.method` unless told `dot`, and keeps the suffixes unless told
 * `norm`: such names are rewritten to jprof's form, anything else (native,
 * C++, kernel symbols, addresses, bracketed pseudo-frames) is kept as is.
 * async-profiler's frame-type suffixes ("_[k]" kernel, "_[j]" JIT, "_[i]"
 * inlined, "_[0]" interpreted, "_[1]" C1) are cut and become the kind.
 * Pure functions; thread-safe. */
#ifndef JP_MODEL_FRAME_TEXT_H
#define JP_MODEL_FRAME_TEXT_H

#include <stddef.h>

#include "base/strbuf.h"
#include "model/profile.h"

/* Length of the stable part of a class name cls[0..len): cut at the first
 * "/0x", "+0x" or ".0x", and a trailing "$$Lambda$<digits>" made
 * "$$Lambda". */
size_t jp_frame_class_stable_len(const char *cls, size_t len);

/* Replaces out's contents with jprof's printed form of a foreign frame name
 * (see above; "[unknown]" for an empty name); returns the kind its suffix
 * names, JP_FRAME_UNKNOWN without one. */
jp_frame_kind jp_frame_text_normalize(const char *name, size_t len, jp_strbuf *out);

#endif
