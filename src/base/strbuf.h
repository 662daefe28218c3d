/* strbuf.h - a growable, NUL-terminated byte buffer with an optional hard cap.
 *
 * Caller storage: jp_strbuf_init / jp_strbuf_cleanup. With cap 0 the buffer is
 * unbounded; otherwise appends that would exceed cap fail with JP_ERR_LIMIT
 * and leave the buffer unchanged. */
#ifndef JP_BASE_STRBUF_H
#define JP_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

typedef struct jp_strbuf {
    char *data; /* always NUL-terminated once anything was appended */
    size_t len;
    size_t alloc;
    size_t cap; /* 0 = unbounded */
} jp_strbuf;

void jp_strbuf_init(jp_strbuf *b, size_t cap);
void jp_strbuf_cleanup(jp_strbuf *b);
void jp_strbuf_reset(jp_strbuf *b);
/* Keeps the first len bytes (len <= b->len). */
void jp_strbuf_truncate(jp_strbuf *b, size_t len);
jp_err jp_strbuf_append(jp_strbuf *b, const void *data, size_t len);
jp_err jp_strbuf_puts(jp_strbuf *b, const char *s);
jp_err jp_strbuf_putc(jp_strbuf *b, char c);
jp_err jp_strbuf_printf(jp_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
jp_err jp_strbuf_vprintf(jp_strbuf *b, const char *fmt, va_list ap);
/* Appends v as an unsigned LEB128 varint (7 bits a byte, low first: the
 * integers of protobuf and of the embedded store's blobs). */
jp_err jp_strbuf_put_varint(jp_strbuf *b, uint64_t v);
/* Returns the contents ("" when empty); valid until the next append. */
const char *jp_strbuf_str(const jp_strbuf *b);
/* Hands the heap string over to the caller (free()), resetting b. */
char *jp_strbuf_take(jp_strbuf *b);

#endif
