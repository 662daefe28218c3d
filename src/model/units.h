/* units.h - values in human units for screens and text output. */
#ifndef JP_MODEL_UNITS_H
#define JP_MODEL_UNITS_H

#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

/* Formats ns as "850 ns", "12.3 us", "4.56 ms", "1.23 s", "2.5 min", "1.2 h". */
void jp_format_ns(uint64_t ns, char *buf, size_t len);
/* Formats bytes as "512 B", "1.5 KB", "12.3 MB", "1.02 GB" (powers of 1024). */
void jp_format_bytes(uint64_t bytes, char *buf, size_t len);
/* Formats a count as "999", "12.3k", "4.56M". */
void jp_format_count(uint64_t n, char *buf, size_t len);
/* Formats a value of kind k: ns for time kinds, bytes for alloc, or a sample
 * count when by_value is false. */
void jp_format_value(jp_kind k, int by_value, uint64_t v, char *buf, size_t len);

#endif
