/* timeutil.h - clocks, durations and time parsing shared by every program. */
#ifndef JP_BASE_TIMEUTIL_H
#define JP_BASE_TIMEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define JP_NS_PER_SEC 1000000000LL
#define JP_NS_PER_MS 1000000LL

/* Wall clock, ns since the Unix epoch. */
int64_t jp_time_now_ns(void);
/* Monotonic clock in ns (for measuring intervals). */
int64_t jp_time_mono_ns(void);

/* Parses a duration such as "250ms", "30s", "15m", "1h", "2d", "1.5s", "10us",
 * "100ns" (a bare number means seconds) into ns. */
jp_err jp_duration_parse(const char *s, int64_t *ns, jp_error *err);

/* Parses RFC 3339 ("2026-11-21T10:00:00Z", "...T10:00:00.123+01:00",
 * a space instead of T is accepted) into ns since the epoch. */
jp_err jp_rfc3339_parse(const char *s, int64_t *ns, jp_error *err);

/* Formats ns since the epoch as RFC 3339 UTC with milliseconds into buf. */
void jp_rfc3339_format(int64_t ns, char *buf, size_t len);

/* A time given on a command line or in a query: absolute (RFC 3339 or
 * @EPOCH_SECONDS) or relative. `rel` says how a relative one resolves:
 * "+D" is base_start + D, "-D" is base_end - D, a bare duration "D" is
 * base_start + D. */
typedef struct jp_timespec_arg {
    bool relative;
    bool from_end; /* relative to base_end ("-D") */
    int64_t value; /* ns since epoch, or the duration in ns */
} jp_timespec_arg;

jp_err jp_timespec_parse(const char *s, jp_timespec_arg *out, jp_error *err);
int64_t jp_timespec_resolve(const jp_timespec_arg *t, int64_t base_start, int64_t base_end);

#endif
