/* frame_name.c - printed frame names (see frame_name.h for the rule). */
#include "jfr/frame_name.h"

#include <string.h>

#include "model/frame_text.h"

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
        cls_len = jp_frame_class_stable_len(cls, cls_len);
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
