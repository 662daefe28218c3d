/* zstd_frame.h - zstd compression for batches and uploads, with hard caps.
 *
 * Decompression is streaming and stops as soon as the output would pass
 * `max_out`, so a small "zstd bomb" costs at most max_out bytes of memory and
 * is rejected with JP_ERR_LIMIT. Thread-safe (no shared state). */
#ifndef JP_WIRE_ZSTD_FRAME_H
#define JP_WIRE_ZSTD_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Compresses src into a new heap buffer (*out, free()); level 1..19. */
jp_err jp_zstd_compress(const void *src, size_t len, int level, uint8_t **out, size_t *out_len,
                        jp_error *err);

/* Decompresses one or more concatenated zstd frames from src into a new heap
 * buffer (*out, free(), NUL-terminated for convenience; *out_len excludes the
 * NUL). Fails with JP_ERR_LIMIT when the output would exceed max_out and with
 * JP_ERR_FORMAT on corrupt or truncated input. */
jp_err jp_zstd_decompress(const void *src, size_t len, size_t max_out, uint8_t **out,
                          size_t *out_len, jp_error *err);

#endif
