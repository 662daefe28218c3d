/* multipart.h - multipart/form-data bodies (RFC 7578), as Pyroscope's
 * agents post a recording and its labels to /ingest: the boundary from the
 * Content-Type header, then the parts with their form names.
 *
 * Bounds: a boundary of 1-70 characters (RFC 2046), at most `max_parts`
 * parts, at most 8 KiB of headers per part; every read within the body. A
 * part's data is found by its closing delimiter (CRLF "--" boundary), never
 * by a Content-Length it may carry. Refusals are JP_ERR_FORMAT (or
 * JP_ERR_LIMIT past max_parts) with the byte offset.
 *
 * Ownership: parts point into the body and into nothing else; they live as
 * long as the body. Pure; thread-safe. */
#ifndef JP_WIRE_MULTIPART_H
#define JP_WIRE_MULTIPART_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define JP_MULTIPART_BOUNDARY_MAX 70

typedef struct jp_mp_part {
    const char *name; /* the form field (Content-Disposition name=), "" when none */
    size_t name_len;
    const char *ctype; /* its Content-Type, NULL when none */
    size_t ctype_len;
    const uint8_t *data;
    size_t len;
} jp_mp_part;

/* The boundary parameter of a multipart Content-Type value, into out (>= 71
 * bytes). JP_ERR_NOT_FOUND when the type is not multipart/form-data. */
jp_err jp_multipart_boundary(const char *content_type, char *out, size_t outlen, jp_error *err);

jp_err jp_multipart_parse(const uint8_t *body, size_t len, const char *boundary, jp_mp_part *parts,
                          size_t max_parts, size_t *nparts, jp_error *err);

/* The first part named `name`, or NULL. */
const jp_mp_part *jp_multipart_find(const jp_mp_part *parts, size_t n, const char *name);

#endif
