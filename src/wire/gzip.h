/* gzip.h - gzip (RFC 1952) for the formats other tools speak: pprof files
 * are gzipped, OTLP/HTTP and Pyroscope's agents send "Content-Encoding:
 * gzip" bodies and gzipped multipart parts.
 *
 * Decompression stops as soon as the output would pass `max_out`, so a
 * small "gzip bomb" costs at most max_out bytes of memory and is rejected
 * with JP_ERR_LIMIT, as jp_zstd_decompress does. Thread-safe. */
#ifndef JP_WIRE_GZIP_H
#define JP_WIRE_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"

/* True when data starts with the gzip magic (1f 8b). */
bool jp_gzip_is(const void *data, size_t len);

/* Appends the gzip of src to out (level 6). */
jp_err jp_gzip_append(const void *src, size_t len, jp_strbuf *out, jp_error *err);

/* Decompresses one or more concatenated gzip members into a new heap buffer
 * (*out, free(), NUL-terminated; *out_len excludes the NUL). JP_ERR_LIMIT
 * past max_out, JP_ERR_FORMAT on corrupt input, JP_ERR_TRUNCATED when the
 * input ends inside a member. */
jp_err jp_gzip_decompress(const void *src, size_t len, size_t max_out, uint8_t **out,
                          size_t *out_len, jp_error *err);

#endif
