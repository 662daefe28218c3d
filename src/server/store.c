#include "server/store.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"

static pthread_once_t clock_once = PTHREAD_ONCE_INIT;
static int64_t clock_offset_ns;

/* Test-only: JPROF_TEST_CLOCK_OFFSET moves the server's idea of "now" so a
 * test can write data "8 days ago" and watch retention remove it, without
 * depending on today's date. A leading '-' means the past. */
static void clock_init(void)
{
    const char *s = getenv("JPROF_TEST_CLOCK_OFFSET");
    if (!s || !*s)
        return;
    int sign = 1;
    if (*s == '-' || *s == '+') {
        sign = *s == '-' ? -1 : 1;
        s++;
    }
    int64_t ns;
    jp_error e;
    jp_error_init(&e);
    if (jp_duration_parse(s, &ns, &e) == JP_OK)
        clock_offset_ns = sign * ns;
}

int64_t store_now_ns(void)
{
    pthread_once(&clock_once, clock_init);
    return jp_time_now_ns() + clock_offset_ns;
}

int64_t store_clock_offset_ns(void)
{
    pthread_once(&clock_once, clock_init);
    return clock_offset_ns;
}

int64_t store_day_of(int64_t t_ns)
{
    int64_t d = t_ns / STORE_DAY_NS;
    if (t_ns < 0 && d * STORE_DAY_NS != t_ns)
        d--;
    return d;
}

void store_day_format(int64_t day, char *buf, size_t len)
{
    char tmp[40];
    jp_rfc3339_format(day * STORE_DAY_NS, tmp, sizeof tmp);
    snprintf(buf, len, "%.10s", tmp);
}

void store_close(store *s)
{
    if (s)
        s->ops->close(s);
}

jp_err store_flame(store *s, const store_filter *f, const store_budget *b, store_stack_cb cb,
                   void *ctx, store_flame_totals *totals, store_query_info *info, jp_error *err)
{
    store_flame_totals local;
    if (!totals)
        totals = &local;
    memset(totals, 0, sizeof *totals);
    memset(info, 0, sizeof *info);
    if (!f->ns || !f->service || f->kind < 0 || f->kind >= JP_KIND_COUNT)
        return jp_error_set(err, JP_ERR_USAGE, "flame needs namespace, service, kind");
    return s->ops->flame(s, f, b, cb, ctx, totals, info, err);
}

void store_info_partial(store_query_info *info, const char *fmt, ...)
{
    if (info->partial)
        return;
    info->partial = true;
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(info->partial_reason, sizeof info->partial_reason, fmt, ap);
    va_end(ap);
}

bool store_info_time_over(store_query_info *info, const store_budget *b, int64_t t0)
{
    if (!b || !b->time_ns || jp_time_mono_ns() - t0 < b->time_ns)
        return false;
    store_info_partial(info, "time budget of %llu ms exceeded",
                       (unsigned long long)(b->time_ns / 1000000));
    return true;
}

const char *store_window_refusal(int64_t start_ns, int64_t now, int retention_days,
                                 int64_t max_skew_ns, const char **why)
{
    int64_t day = store_day_of(start_ns);
    if (!store_day_retained(day, now, retention_days)) {
        *why = "older than the retention";
        return "retention";
    }
    if (start_ns > now + max_skew_ns || day > store_day_of(now) + 1) {
        *why = "starts in the future (the collector's clock is ahead of the server's)";
        return "future";
    }
    *why = NULL;
    return NULL;
}
