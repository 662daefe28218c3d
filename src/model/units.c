#include "model/units.h"

#include <stdio.h>

void jp_format_ns(uint64_t ns, char *buf, size_t len)
{
    double v = (double)ns;
    if (ns < 1000)
        snprintf(buf, len, "%llu ns", (unsigned long long)ns);
    else if (ns < 1000000)
        snprintf(buf, len, "%.3g us", v / 1e3);
    else if (ns < 1000000000ULL)
        snprintf(buf, len, "%.3g ms", v / 1e6);
    else if (ns < 120000000000ULL)
        snprintf(buf, len, "%.3g s", v / 1e9);
    else if (ns < 7200000000000ULL)
        snprintf(buf, len, "%.3g min", v / 60e9);
    else
        snprintf(buf, len, "%.3g h", v / 3600e9);
}

void jp_format_bytes(uint64_t b, char *buf, size_t len)
{
    double v = (double)b;
    if (b < 1024)
        snprintf(buf, len, "%llu B", (unsigned long long)b);
    else if (b < 1024ULL * 1024)
        snprintf(buf, len, "%.3g KB", v / 1024);
    else if (b < 1024ULL * 1024 * 1024)
        snprintf(buf, len, "%.3g MB", v / (1024.0 * 1024));
    else
        snprintf(buf, len, "%.3g GB", v / (1024.0 * 1024 * 1024));
}

void jp_format_count(uint64_t n, char *buf, size_t len)
{
    double v = (double)n;
    if (n < 10000)
        snprintf(buf, len, "%llu", (unsigned long long)n);
    else if (n < 1000000)
        snprintf(buf, len, "%.3gk", v / 1e3);
    else if (n < 1000000000ULL)
        snprintf(buf, len, "%.3gM", v / 1e6);
    else
        snprintf(buf, len, "%.3gG", v / 1e9);
}

void jp_format_value(jp_kind k, int by_value, uint64_t v, char *buf, size_t len)
{
    if (!by_value)
        jp_format_count(v, buf, len);
    else if (jp_kind_is_bytes(k))
        jp_format_bytes(v, buf, len);
    else
        jp_format_ns(v, buf, len);
}
