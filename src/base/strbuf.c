#include "base/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jp_strbuf_init(jp_strbuf *b, size_t cap)
{
    b->data = NULL;
    b->len = 0;
    b->alloc = 0;
    b->cap = cap;
}

void jp_strbuf_cleanup(jp_strbuf *b)
{
    free(b->data);
    jp_strbuf_init(b, b->cap);
}

void jp_strbuf_reset(jp_strbuf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void jp_strbuf_truncate(jp_strbuf *b, size_t len)
{
    if (len < b->len) {
        b->len = len;
        b->data[len] = '\0';
    }
}

jp_err jp_strbuf_append(jp_strbuf *b, const void *data, size_t len)
{
    if (b->cap && (len > b->cap || b->len > b->cap - len))
        return JP_ERR_LIMIT;
    b->data = jp_xgrow(b->data, &b->alloc, b->len + len + 1, 1);
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return JP_OK;
}

jp_err jp_strbuf_puts(jp_strbuf *b, const char *s)
{
    return jp_strbuf_append(b, s, strlen(s));
}

jp_err jp_strbuf_putc(jp_strbuf *b, char c)
{
    return jp_strbuf_append(b, &c, 1);
}

jp_err jp_strbuf_vprintf(jp_strbuf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_copy above; clang 14 misses it
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return JP_ERR_INTERNAL;
    if ((size_t)n < sizeof small)
        return jp_strbuf_append(b, small, (size_t)n);
    char *big = jp_xmalloc((size_t)n + 1);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    jp_err rc = jp_strbuf_append(b, big, (size_t)n);
    free(big);
    return rc;
}

jp_err jp_strbuf_printf(jp_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    jp_err rc = jp_strbuf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

const char *jp_strbuf_str(const jp_strbuf *b)
{
    return b->data ? b->data : "";
}

char *jp_strbuf_take(jp_strbuf *b)
{
    char *s = b->data ? b->data : jp_xstrdup("");
    jp_strbuf_init(b, b->cap);
    return s;
}

jp_err jp_strbuf_put_varint(jp_strbuf *b, uint64_t v)
{
    uint8_t tmp[10];
    size_t n = 0;
    do {
        tmp[n] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v)
            tmp[n] |= 0x80;
        n++;
    } while (v);
    return jp_strbuf_append(b, tmp, n);
}
