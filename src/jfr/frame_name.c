/* frame_name.c - printed frame names (see frame_name.h for the rule). */
#include "jfr/frame_name.h"

#include <string.h>

/* async-profiler gives every non-Java frame one of two made-up descriptors. */
static bool is_synthetic_desc(const char *d, size_t n)
{
    return d && ((n == 4 && !memcmp(d, "()L;", 4)) || (n == 7 && !memcmp(d, "(Lk;)L;", 7)));
}

bool jfr_frame_is_bare(jp_frame_kind kind, size_t cls_len, bool has_cls, const char *desc,
                       size_t desc_len)
{
    if (!has_cls || cls_len == 0 || kind == JP_FRAME_CPP || kind == JP_FRAME_KERNEL)
        return true;
    return kind == JP_FRAME_NATIVE && is_synthetic_desc(desc, desc_len);
}

size_t jfr_class_stable_len(const char *cls, size_t len)
{
    /* Hidden classes carry a per-run address ("/0x7f..", "+0x7f..", or
     * async-profiler's ".0x7f..") and lambdas a per-run counter ("$$Lambda$87"):
     * cut both so the same code gets the same frame, and the same stack id, in
     * every JVM and every day. */
    for (size_t i = 0; i + 2 < len; i++) {
        if ((cls[i] == '/' || cls[i] == '+' || cls[i] == '.') && cls[i + 1] == '0' &&
            cls[i + 2] == 'x') {
            len = i;
            break;
        }
    }
    static const char lambda[] = "$$Lambda";
    size_t ll = sizeof lambda - 1;
    size_t end = len;
    while (end > 0 && cls[end - 1] >= '0' && cls[end - 1] <= '9')
        end--;
    if (end < len && end > ll && cls[end - 1] == '$' && !memcmp(cls + end - 1 - ll, lambda, ll))
        return end - 1;
    return len;
}

void jfr_frame_name(jp_strbuf *out, jp_frame_kind kind, const char *cls, size_t cls_len,
                    bool has_cls, const char *method, size_t method_len, bool has_method,
                    const char *desc, size_t desc_len)
{
    jp_strbuf_reset(out);
    if (!has_method) {
        jp_strbuf_puts(out, "[unknown]");
        return;
    }
    if (!jfr_frame_is_bare(kind, cls_len, has_cls, desc, desc_len)) {
        cls_len = jfr_class_stable_len(cls, cls_len);
        size_t start = 0;
        for (size_t i = 0; i <= cls_len; i++) {
            if (i == cls_len || cls[i] == '/') {
                jp_strbuf_append(out, cls + start, i - start);
                if (i < cls_len)
                    jp_strbuf_putc(out, '.');
                start = i + 1;
            }
        }
        jp_strbuf_putc(out, '.');
    }
    jp_strbuf_append(out, method, method_len);
    if (out->len == 0)
        jp_strbuf_puts(out, "[unknown]"); /* a frame needs a visible name */
}
