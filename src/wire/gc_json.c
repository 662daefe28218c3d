/* gc_json.c - GC summary -> JSON. */
#include "wire/gc_json.h"

static json_t *name_json(const char *s)
{
    return json_string(*s ? s : "unknown");
}

static json_t *longest_json(const jp_gc_summary *s)
{
    if (!s->has_longest)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "start_ns", json_integer(s->longest_start_ns));
    json_object_set_new(o, "gc_id", json_integer((json_int_t)s->longest_gc_id));
    json_object_set_new(o, "phase", name_json(s->longest_phase));
    json_object_set_new(o, "collector", name_json(s->longest_collector));
    json_object_set_new(o, "cause", name_json(s->longest_cause));
    return o;
}

static json_t *heap_json(const jp_gc_summary *s)
{
    if (!s->has_heap)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "gcs", json_integer((json_int_t)s->heap_gcs));
    json_object_set_new(o, "before_bytes", json_integer((json_int_t)s->heap_before));
    json_object_set_new(o, "after_bytes", json_integer((json_int_t)s->heap_after));
    json_object_set_new(o, "after_min_bytes", json_integer((json_int_t)s->heap_after_min));
    json_object_set_new(o, "after_max_bytes", json_integer((json_int_t)s->heap_after_max));
    return o;
}

static json_t *alloc_json(const jp_gc_summary *s)
{
    if (s->alloc_source == JP_GC_ALLOC_NONE)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "bytes_per_s", json_real(s->alloc_rate));
    json_object_set_new(o, "bytes", json_integer((json_int_t)s->alloc_bytes));
    json_object_set_new(o, "span_ns", json_integer(s->alloc_span_ns));
    json_object_set_new(o, "source", json_string(jp_gc_alloc_source_name(s->alloc_source)));
    return o;
}

json_t *jp_gc_summary_json(const jp_gc_summary *s, bool recorded, int64_t window_ns)
{
    json_t *o = json_object();
    json_object_set_new(o, "recorded", json_boolean(recorded));
    json_object_set_new(o, "from_ns", json_integer(s->from_ns));
    json_object_set_new(o, "to_ns", json_integer(s->to_ns));
    json_object_set_new(o, "collections", json_integer((json_int_t)s->collections));
    json_object_set_new(o, "pauses", json_integer((json_int_t)s->pauses));
    json_object_set_new(o, "pauses_from",
                        !s->pauses           ? json_null()
                        : s->pauses_from_gcs ? json_string("jdk.GarbageCollection")
                                             : json_string("jdk.GCPhasePause"));
    json_object_set_new(o, "pause_total_ns", json_integer(s->pause_total_ns));
    json_object_set_new(o, "pause_p50_ns", json_integer(s->pause_p50_ns));
    json_object_set_new(o, "pause_p99_ns", json_integer(s->pause_p99_ns));
    json_object_set_new(o, "pause_max_ns", json_integer(s->pause_max_ns));
    json_object_set_new(o, "paused_pct",
                        window_ns > 0
                            ? json_real(100.0 * (double)s->pause_total_ns / (double)window_ns)
                            : json_null());
    json_object_set_new(o, "longest", longest_json(s));
    json_object_set_new(o, "heap", heap_json(s));
    json_object_set_new(o, "alloc", alloc_json(s));
    json_object_set_new(o, "dropped", json_integer((json_int_t)s->dropped));
    json_object_set_new(o, "cannot_tell", json_string(JP_GC_CANNOT_TELL));
    return o;
}
