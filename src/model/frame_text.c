/* frame_text.c - printed frame names from text (see frame_text.h). */
#include "model/frame_text.h"

#include <stdbool.h>
#include <string.h>

size_t jp_frame_class_stable_len(const char *cls, size_t len)
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

static bool ft_ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || (unsigned char)c >= 0x80;
}

/* `cls.method` where cls holds identifier characters and '/', '.', '+'
 * only (and at least one '/' or a hidden-class or lambda suffix), and the
 * method identifier characters or <init>/<clinit>: the shape of a Java frame
 * async-profiler printed. *dot gets the method's separator. */
static bool ft_java_shape(const char *s, size_t len, size_t *dot)
{
    const char *d = memrchr(s, '.', len);
    if (!d || d == s || (size_t)(d - s) + 1 >= len || s[0] == '/' || s[0] == '.')
        return false;
    size_t m = (size_t)(d - s) + 1;
    bool angle = s[m] == '<';
    for (size_t i = m + angle; i < len - angle; i++)
        if (!ft_ident_char(s[i]))
            return false;
    if (angle && s[len - 1] != '>')
        return false;
    for (size_t i = 0; i < m - 1; i++)
        if (!ft_ident_char(s[i]) && s[i] != '/' && s[i] != '.' && s[i] != '+')
            return false;
    *dot = m - 1;
    return memchr(s, '/', m - 1) || jp_frame_class_stable_len(s, m - 1) != m - 1;
}

/* async-profiler's frame-type suffix "_[X]", cut from *len. */
static jp_frame_kind ft_suffix(const char *s, size_t *len)
{
    static const struct {
        char c;
        jp_frame_kind kind;
    } sfx[] = {{'k', JP_FRAME_KERNEL},
               {'j', JP_FRAME_JIT},
               {'i', JP_FRAME_INLINED},
               {'0', JP_FRAME_INTERPRETED},
               {'1', JP_FRAME_C1}};
    size_t n = *len;
    if (n < 5 || memcmp(s + n - 4, "_[", 2) || s[n - 1] != ']')
        return JP_FRAME_UNKNOWN;
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
        if (s[n - 2] == sfx[i].c) {
            *len = n - 4;
            return sfx[i].kind;
        }
    return JP_FRAME_UNKNOWN;
}

jp_frame_kind jp_frame_text_normalize(const char *name, size_t len, jp_strbuf *out)
{
    jp_strbuf_reset(out);
    jp_frame_kind kind = ft_suffix(name, &len);
    size_t dot;
    if (!len) {
        jp_strbuf_puts(out, "[unknown]");
        return kind;
    }
    if (!ft_java_shape(name, len, &dot)) {
        jp_strbuf_append(out, name, len);
        return kind;
    }
    size_t cls = jp_frame_class_stable_len(name, dot);
    for (size_t i = 0; i < cls; i++) {
        char c = name[i];
        if (c == '/')
            c = '.';
        jp_strbuf_putc(out, c);
    }
    jp_strbuf_append(out, name + dot, len - dot);
    return kind;
}
