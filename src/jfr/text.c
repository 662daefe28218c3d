/* text.c - error/warning formatting and string decoding to UTF-8. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "jfr/internal.h"

jp_err jfr_fail(const jfr_where *w, jp_err code, const uint8_t *at, const char *fmt, ...)
{
    if (!w->err)
        return code;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    unsigned long long off = w->base_off + (at && w->base ? (unsigned long long)(at - w->base) : 0);
    return jp_error_set(w->err, code, "%s: chunk %u @0x%llx: %s", w->name, w->chunk, off, msg);
}

void jfr_warn(jfr_warner *wn, unsigned category, const char *fmt, ...)
{
    if (!wn || !wn->rep || category >= 32 || (wn->seen & (1u << category)))
        return;
    wn->seen |= 1u << category;
    jfr_report *r = wn->rep;
    if (r->nwarnings >= JFR_MAX_WARNINGS) {
        r->warnings_dropped++;
        return;
    }
    char msg[128];
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->warnings[r->nwarnings], sizeof r->warnings[0], "%s: chunk %u: %s", wn->name,
             wn->chunk, msg);
    wn->cat[r->nwarnings] = (uint8_t)category;
    r->nwarnings++;
}

void jfr_warner_merge(jfr_warner *dst, const jfr_warner *src)
{
    jfr_report *r = dst->rep;
    for (uint32_t i = 0; i < src->rep->nwarnings && i < JFR_MAX_WARNINGS; i++) {
        unsigned cat = src->cat[i];
        if (dst->seen & (1u << cat))
            continue;
        dst->seen |= 1u << cat;
        if (r->nwarnings >= JFR_MAX_WARNINGS) {
            r->warnings_dropped++;
            continue;
        }
        memcpy(r->warnings[r->nwarnings], src->rep->warnings[i], sizeof r->warnings[0]);
        dst->cat[r->nwarnings++] = (uint8_t)cat;
    }
    r->warnings_dropped += src->rep->warnings_dropped;
}

/* Encodes one code point; invalid ones become U+FFFD. */
static size_t jfr_utf8_put(uint32_t cp, char out[4])
{
    if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        cp = 0xfffd;
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | cp >> 12);
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | cp >> 18);
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

static bool jfr_text_room(const jp_strbuf *out, size_t start, size_t more)
{
    return out->len - start + more <= JFR_MAX_TEXT;
}

static void jfr_text_latin1(jp_strbuf *out, const uint8_t *p, size_t n)
{
    size_t start = out->len;
    size_t i = 0;
    while (i < n) {
        /* Runs of ASCII go in one append. */
        size_t j = i;
        while (j < n && p[j] < 0x80)
            j++;
        if (j > i) {
            size_t take = j - i;
            if (!jfr_text_room(out, start, take))
                take = JFR_MAX_TEXT - (out->len - start);
            jp_strbuf_append(out, p + i, take);
            if (take < j - i)
                return;
            i = j;
            continue;
        }
        char u[4];
        size_t k = jfr_utf8_put(p[i], u);
        if (!jfr_text_room(out, start, k))
            return;
        jp_strbuf_append(out, u, k);
        i++;
    }
}

/* UTF-16 units (each a compressed integer) to UTF-8, pairing surrogates;
 * unpaired halves become U+FFFD like Java's own decoder does. */
static bool jfr_text_cp(jp_strbuf *out, size_t start, uint32_t cp)
{
    char b[4];
    size_t k = jfr_utf8_put(cp, b);
    if (!jfr_text_room(out, start, k))
        return false;
    jp_strbuf_append(out, b, k);
    return true;
}

static void jfr_text_chars(jp_strbuf *out, const jfr_str *s)
{
    size_t start = out->len;
    const uint8_t *p = s->p;
    uint32_t pending = 0;
    for (uint64_t i = 0; i < s->n; i++) {
        uint64_t v;
        if (!jfr_varint(&p, s->e, &v))
            return;
        uint32_t u = (uint32_t)(v & 0xffff);
        if (pending) {
            if (u >= 0xdc00 && u <= 0xdfff) {
                uint32_t cp = 0x10000 + ((pending - 0xd800) << 10) + (u - 0xdc00);
                pending = 0;
                if (!jfr_text_cp(out, start, cp))
                    return;
                continue;
            }
            pending = 0;
            if (!jfr_text_cp(out, start, 0xfffd))
                return;
        }
        if (u >= 0xd800 && u <= 0xdbff) {
            pending = u;
            continue;
        }
        if (!jfr_text_cp(out, start, u))
            return;
    }
    if (pending)
        jfr_text_cp(out, start, 0xfffd);
}

void jfr_text_append(jp_strbuf *out, const jfr_str *s)
{
    switch (s->enc) {
    case JFR_STR_UTF8:
        jp_strbuf_append(out, s->p, s->n > JFR_MAX_TEXT ? JFR_MAX_TEXT : (size_t)s->n);
        break;
    case JFR_STR_LATIN1:
        jfr_text_latin1(out, s->p, (size_t)s->n);
        break;
    case JFR_STR_CHARS:
        jfr_text_chars(out, s);
        break;
    default:
        break;
    }
}
