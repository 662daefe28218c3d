/* base64.h - standard base64 decoding (RFC 4648, "+/" alphabet): kubeconfig
 * certificate data, HTTP Basic credentials. Pure; thread-safe. */
#ifndef JP_BASE_BASE64_H
#define JP_BASE_BASE64_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Decodes s[0..len) (padding optional, whitespace ignored) into a new heap
 * buffer (*out, free()); JP_ERR_FORMAT at the first byte outside the
 * alphabet. */
jp_err jp_base64_decode(const char *s, size_t len, uint8_t **out, size_t *out_len, jp_error *err);

#endif
