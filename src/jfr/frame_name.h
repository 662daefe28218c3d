/* frame_name.h - the one rule that turns a JFR frame into its printed name.
 *
 * The rule (another tool re-implements it as a test oracle, keep them equal):
 *  - no method name                       -> "[unknown]"
 *  - no class                             -> the method name alone
 *  - C++ or Kernel frame                  -> the method name alone
 *  - Native frame whose class is empty, contains ".so", or starts with '['
 *    or '/' (async-profiler puts the library there) -> the method name alone
 *  - otherwise the class with every '/' made '.', then '.', then the method
 *    (the JDK's own Native frames are Java native methods: class.method).
 *    Hidden classes lose their per-run suffix: the class name is cut at the
 *    first "/0x", "+0x" or ".0x", and a trailing "$$Lambda$<digits>" becomes
 *    "$$Lambda" (Foo$$Lambda$87+0x00007f../123 -> Foo$$Lambda).
 *  - a name that would come out empty (bare empty method) -> "[unknown]".
 * Pure function; thread-safe. */
#ifndef JP_JFR_FRAME_NAME_H
#define JP_JFR_FRAME_NAME_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "model/profile.h"

/* True when the frame prints as its bare symbol (method name only). */
bool jfr_frame_is_bare(jp_frame_kind kind, const char *cls, size_t cls_len, bool has_cls);

/* Length of the stable part of a class name (see the rule above). */
size_t jfr_class_stable_len(const char *cls, size_t len);

/* Replaces out's contents with the printed name. cls/method may be NULL
 * when has_cls/has_method is false. */
void jfr_frame_name(jp_strbuf *out, jp_frame_kind kind, const char *cls, size_t cls_len,
                    bool has_cls, const char *method, size_t method_len, bool has_method);

#endif
