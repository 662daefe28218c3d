/* frame_name.h - the one rule that turns a JFR frame into its printed name.
 *
 * The rule (another tool re-implements it as a test oracle, keep them equal):
 *  - no method name                       -> "[unknown]"
 *  - no class, or an empty class name     -> the method name alone
 *  - C++ or Kernel frame                  -> the method name alone
 *  - Native frame with one of async-profiler's synthetic descriptors, "()L;"
 *    (native and C++ code) or "(Lk;)L;" (kernel) -> the method name alone:
 *    the "class" of such a frame is the library it came from (libc.so.6,
 *    libjvm.so, vdso, ...), not a Java class
 *  - otherwise the class with every '/' made '.', then '.', then the method
 *    (the JDK's own Native frames are Java native methods with a real
 *    descriptor: class.method). Hidden classes lose their per-run suffix:
 *    the class name is cut at the first "/0x", "+0x" or ".0x", and a
 *    trailing "$$Lambda$<digits>" becomes "$$Lambda"
 *    (Foo$$Lambda$87+0x00007f../123 -> Foo$$Lambda).
 *  - a name that would come out empty (bare empty method) -> "[unknown]".
 * Pure function; thread-safe. */
#ifndef JP_JFR_FRAME_NAME_H
#define JP_JFR_FRAME_NAME_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "model/profile.h"

/* True when the frame prints as its bare symbol (method name only). desc is
 * the method's descriptor (NULL when unknown). */
bool jfr_frame_is_bare(jp_frame_kind kind, size_t cls_len, bool has_cls, const char *desc,
                       size_t desc_len);

/* Replaces out's contents with the printed name. cls/method may be NULL
 * when has_cls/has_method is false; desc NULL when the descriptor is unknown. */
void jfr_frame_name(jp_strbuf *out, jp_frame_kind kind, const char *cls, size_t cls_len,
                    bool has_cls, const char *method, size_t method_len, bool has_method,
                    const char *desc, size_t desc_len);

#endif
