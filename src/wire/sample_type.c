/* sample_type.c - foreign sample types to jprof kinds (see sample_type.h). */
#include "wire/sample_type.h"

#include <strings.h>

static const struct {
    const char *name;
    jp_kind kind;
} st_names[] = {
    /* jprof's own names first (its OTLP and pprof exports) */
    {"cpu", JP_KIND_CPU},
    {"wall", JP_KIND_WALL},
    {"alloc", JP_KIND_ALLOC},
    {"lock", JP_KIND_LOCK},
    {"park", JP_KIND_PARK},
    {"nativemem", JP_KIND_NATIVEMEM},
    {"live", JP_KIND_LIVE},
    {"nativelock", JP_KIND_NATIVELOCK},
    {"cputime", JP_KIND_CPUTIME},
    {"io", JP_KIND_IO},
    {"old", JP_KIND_OLD},
    /* async-profiler: jfrconv's value types and the agent's engine names */
    {"itimer", JP_KIND_CPU},
    {"ctimer", JP_KIND_CPU},
    {"perf_events", JP_KIND_CPU},
    {"j9_wall", JP_KIND_WALL},
    {"allocations", JP_KIND_ALLOC},
    {"alloc_tracer", JP_KIND_ALLOC},
    {"object_sampler", JP_KIND_ALLOC},
    {"locks", JP_KIND_LOCK},
    {"lock_tracer", JP_KIND_LOCK},
    {"malloc", JP_KIND_NATIVEMEM},
    {"malloc_tracer", JP_KIND_NATIVEMEM},
    {"native_lock_tracer", JP_KIND_NATIVELOCK},
    {"cpu_time", JP_KIND_CPUTIME},
    {"cpu-time", JP_KIND_CPUTIME},
    /* pprof (Go runtime, Pyroscope's JFR conversion) */
    {"samples", JP_KIND_CPU},
    {"process_cpu", JP_KIND_CPU},
    {"wall_clock", JP_KIND_WALL},
    {"alloc_objects", JP_KIND_ALLOC},
    {"alloc_space", JP_KIND_ALLOC},
    {"alloc_in_new_tlab_objects", JP_KIND_ALLOC},
    {"alloc_in_new_tlab_bytes", JP_KIND_ALLOC},
    {"alloc_outside_tlab_objects", JP_KIND_ALLOC},
    {"alloc_outside_tlab_bytes", JP_KIND_ALLOC},
    {"inuse_objects", JP_KIND_LIVE},
    {"inuse_space", JP_KIND_LIVE},
    {"contentions", JP_KIND_LOCK},
    {"delay", JP_KIND_LOCK},
    {"lock_count", JP_KIND_LOCK},
    {"lock_duration", JP_KIND_LOCK},
};

static const struct {
    const char *name;
    bool is_count, is_bytes;
    uint64_t scale;
} st_units[] = {
    {"count", true, false, 1},
    {"samples", true, false, 1},
    {"objects", true, false, 1},
    {"events", true, false, 1},
    {"", true, false, 1},
    {"nanoseconds", false, false, 1},
    {"ns", false, false, 1},
    {"microseconds", false, false, 1000},
    {"us", false, false, 1000},
    {"milliseconds", false, false, 1000000},
    {"ms", false, false, 1000000},
    {"seconds", false, false, 1000000000},
    {"s", false, false, 1000000000},
    {"bytes", false, true, 1},
    {"kilobytes", false, true, 1024},
    {"megabytes", false, true, 1024 * 1024},
};

static bool st_eq(const char *s, size_t len, const char *name)
{
    size_t n = 0;
    while (name[n])
        n++;
    return n == len && strncasecmp(s, name, len) == 0;
}

jp_err jp_sample_type_map(const char *type, size_t tlen, const char *unit, size_t ulen,
                          jp_sample_type *out, jp_error *err)
{
    int k = -1;
    for (size_t i = 0; i < sizeof st_names / sizeof st_names[0] && k < 0; i++)
        if (st_eq(type, tlen, st_names[i].name))
            k = (int)st_names[i].kind;
    if (k < 0)
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "sample type '%.*s' (unit '%.*s') is not a profile kind jprof stores "
                            "(%s, or the names async-profiler, pprof and Pyroscope give them)",
                            (int)(tlen > 64 ? 64 : tlen), type, (int)(ulen > 32 ? 32 : ulen), unit,
                            jp_kind_list());
    for (size_t i = 0; i < sizeof st_units / sizeof st_units[0]; i++) {
        if (!st_eq(unit, ulen, st_units[i].name))
            continue;
        if (!st_units[i].is_count && st_units[i].is_bytes != jp_kind_is_bytes((jp_kind)k))
            break;
        out->kind = (jp_kind)k;
        out->is_count = st_units[i].is_count;
        out->scale = st_units[i].scale;
        return JP_OK;
    }
    return jp_error_set(err, JP_ERR_UNSUPPORTED,
                        "sample type '%.*s': unit '%.*s' does not fit the %s kind (a count, or %s)",
                        (int)(tlen > 64 ? 64 : tlen), type, (int)(ulen > 32 ? 32 : ulen), unit,
                        jp_kind_name((jp_kind)k), jp_kind_unit((jp_kind)k));
}

bool jp_sample_unit_of_kind(const char *unit, size_t ulen, jp_kind k, uint64_t *scale)
{
    for (size_t i = 0; i < sizeof st_units / sizeof st_units[0]; i++)
        if (st_eq(unit, ulen, st_units[i].name)) {
            if (st_units[i].is_count || st_units[i].is_bytes != jp_kind_is_bytes(k))
                return false;
            *scale = st_units[i].scale;
            return true;
        }
    return false;
}
