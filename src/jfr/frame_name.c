/* frame_name.c - printed frame names (see frame_name.h for the rule). */
#include "jfr/frame_name.h"

#include <string.h>

static bool has_so(const char *s, size_t n)
{
    for (size_t i = 0; i + 3 <= n; i++)
        if (s[i] == '.' && s[i + 1] == 's' && s[i + 2] == 'o')
            return true;
    return false;
}

bool jfr_frame_is_bare(jp_frame_kind kind, const char *cls, size_t cls_len, bool has_cls)
{
    if (!has_cls || kind == JP_FRAME_CPP || kind == JP_FRAME_KERNEL)
        return true;
    if (kind != JP_FRAME_NATIVE)
        return false;
    return cls_len == 0 || cls[0] == '[' || cls[0] == '/' || has_so(cls, cls_len);
}

void jfr_frame_name(jp_strbuf *out, jp_frame_kind kind, const char *cls, size_t cls_len,
                    bool has_cls, const char *method, size_t method_len, bool has_method)
{
    jp_strbuf_reset(out);
    if (!has_method) {
        jp_strbuf_puts(out, "[unknown]");
        return;
    }
    if (!jfr_frame_is_bare(kind, cls, cls_len, has_cls)) {
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
