#include "base/timeutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t jp_time_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * JP_NS_PER_SEC + ts.tv_nsec;
}

int64_t jp_time_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * JP_NS_PER_SEC + ts.tv_nsec;
}

jp_err jp_duration_parse(const char *s, int64_t *ns, jp_error *err)
{
    if (!s || !*s)
        return jp_error_set(err, JP_ERR_USAGE, "empty duration");
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0)
        return jp_error_set(err, JP_ERR_USAGE, "bad duration '%s' (expected e.g. 30s, 15m, 250ms)",
                            s);
    double mul = 1e9;
    if (!*end || !strcmp(end, "s"))
        mul = 1e9;
    else if (!strcmp(end, "ns"))
        mul = 1;
    else if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "ms"))
        mul = 1e6;
    else if (!strcmp(end, "m"))
        mul = 60e9;
    else if (!strcmp(end, "h"))
        mul = 3600e9;
    else if (!strcmp(end, "d"))
        mul = 86400e9;
    else
        return jp_error_set(err, JP_ERR_USAGE,
                            "bad duration unit in '%s' (use ns, us, ms, s, m, h, d)", s);
    double r = v * mul;
    if (!(r <= 9.2e18)) /* also "nan", whose conversion to int64 is undefined */
        return jp_error_set(err, JP_ERR_USAGE, "duration '%s' is too large", s);
    *ns = (int64_t)r;
    return JP_OK;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar. */
static int64_t jp_days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static int jp_digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

jp_err jp_rfc3339_parse(const char *s, int64_t *ns, jp_error *err)
{
    const char *p = s;
    int Y, M, D, h, mi, sec;
    if (jp_digits(&p, 4, &Y) || *p++ != '-' || jp_digits(&p, 2, &M) || *p++ != '-' ||
        jp_digits(&p, 2, &D) || (*p != 'T' && *p != 't' && *p != ' '))
        goto bad;
    p++;
    if (jp_digits(&p, 2, &h) || *p++ != ':' || jp_digits(&p, 2, &mi) || *p++ != ':' ||
        jp_digits(&p, 2, &sec))
        goto bad;
    /* int64 nanoseconds since 1970 span 1677-09-21 .. 2262-04-11: outside
     * whole years of that, the multiplication below would overflow */
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || sec > 60 || Y < 1678 || Y > 2261)
        goto bad;
    int64_t frac = 0;
    if (*p == '.') {
        p++;
        int digits = 0;
        while (isdigit((unsigned char)*p)) {
            if (digits < 9) {
                frac = frac * 10 + (*p - '0');
                digits++;
            }
            p++;
        }
        if (!digits)
            goto bad;
        while (digits++ < 9)
            frac *= 10;
    }
    int64_t off = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;
        p++;
        if (jp_digits(&p, 2, &oh) || *p++ != ':' || jp_digits(&p, 2, &om))
            goto bad;
        off = sign * ((int64_t)oh * 3600 + om * 60);
    } else {
        goto bad;
    }
    if (*p)
        goto bad;
    int64_t days = jp_days_from_civil(Y, (unsigned)M, (unsigned)D);
    int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - off;
    *ns = secs * JP_NS_PER_SEC + frac;
    return JP_OK;
bad:
    return jp_error_set(err, JP_ERR_USAGE,
                        "bad time '%s' (expected RFC 3339, e.g. 2026-11-21T10:00:00Z)", s);
}

void jp_rfc3339_format(int64_t ns, char *buf, size_t len)
{
    time_t secs = (time_t)(ns / JP_NS_PER_SEC);
    int64_t ms = (ns % JP_NS_PER_SEC) / 1000000;
    if (ms < 0) {
        secs -= 1;
        ms += 1000;
    }
    struct tm tm;
    gmtime_r(&secs, &tm);
    snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
             tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, (int)ms);
}

jp_err jp_timespec_parse(const char *s, jp_timespec_arg *out, jp_error *err)
{
    memset(out, 0, sizeof *out);
    if (!s || !*s)
        return jp_error_set(err, JP_ERR_USAGE, "empty time");
    if (s[0] == '@') {
        char *end;
        errno = 0;
        double v = strtod(s + 1, &end);
        /* the bound keeps the conversion to int64 ns defined (and NaN out) */
        if (end == s + 1 || *end || errno || !(v > -9.2e9 && v < 9.2e9))
            return jp_error_set(err, JP_ERR_USAGE, "bad epoch time '%s' (expected @SECONDS)", s);
        out->value = (int64_t)(v * 1e9);
        return JP_OK;
    }
    if (s[0] == '+' || s[0] == '-') {
        out->relative = true;
        out->from_end = s[0] == '-';
        return jp_duration_parse(s + 1, &out->value, err);
    }
    if (strlen(s) >= 10 && s[4] == '-')
        return jp_rfc3339_parse(s, &out->value, err);
    out->relative = true;
    return jp_duration_parse(s, &out->value, err);
}

int64_t jp_timespec_resolve(const jp_timespec_arg *t, int64_t base_start, int64_t base_end)
{
    if (!t->relative)
        return t->value;
    /* Saturate: a damaged file may carry absurd start/end times. */
    int64_t r;
    if (t->from_end ? __builtin_sub_overflow(base_end, t->value, &r)
                    : __builtin_add_overflow(base_start, t->value, &r))
        return t->from_end ? INT64_MIN : INT64_MAX;
    return r;
}
