/* Unit tests of the GC evidence: the summary of model/gc.c on logs made by
 * hand, and the JFR reader's GC events on synthetic chunks (jfr_writer),
 * including missing pool entries, missing fields and damage; and the old
 * kind's objects (jdk.OldObjectSample, model/oldobj.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jfr/jfr.h"
#include "jfr_writer.h"
#include "model/gc.h"
#include "wire/gc_json.h"

#define MS 1000000LL
#define MB 1000000ULL

static void add_pause(jp_gc_log *l, int64_t t, int64_t d, uint64_t id, const char *name)
{
    jp_gc_pause p = {.start_ns = t, .duration_ns = d, .gc_id = id};
    snprintf(p.name, sizeof p.name, "%s", name);
    jp_gc_log_pause(l, &p);
}

static void add_gc(jp_gc_log *l, int64_t t, uint64_t id, const char *name, const char *cause,
                   int64_t sum, int64_t longest)
{
    jp_gc_collection c = {.start_ns = t,
                          .duration_ns = sum,
                          .gc_id = id,
                          .sum_pauses_ns = sum,
                          .longest_pause_ns = longest};
    snprintf(c.name, sizeof c.name, "%s", name);
    snprintf(c.cause, sizeof c.cause, "%s", cause);
    jp_gc_log_collection(l, &c);
}

static void add_heap(jp_gc_log *l, int64_t t, uint64_t id, jp_gc_when w, uint64_t used)
{
    jp_gc_heap h = {.time_ns = t, .gc_id = id, .when = (uint8_t)w, .used = used};
    jp_gc_log_heap(l, &h);
}

static void test_summary_percentiles_and_longest(void **state)
{
    (void)state;
    jp_gc_log l;
    jp_gc_log_init(&l);
    /* 100 pauses of 1..100 ms: p50 = 50 ms, p99 = 99 ms (nearest rank) */
    for (int i = 1; i <= 100; i++) {
        add_pause(&l, i * 10 * MS, i * MS, (uint64_t)i, "GC Pause");
        add_gc(&l, i * 10 * MS, (uint64_t)i, i == 100 ? "G1Old" : "G1New",
               i == 100 ? "G1 Humongous Allocation" : "G1 Evacuation Pause", i * MS, i * MS);
    }
    jp_gc_summary s;
    jp_gc_summary_compute(&l, 0, 0, 0, 0, &s);
    assert_int_equal(s.collections, 100);
    assert_int_equal(s.pauses, 100);
    assert_false(s.pauses_from_gcs);
    assert_int_equal(s.pause_total_ns, 5050 * MS);
    assert_int_equal(s.pause_p50_ns, 50 * MS);
    assert_int_equal(s.pause_p99_ns, 99 * MS);
    assert_int_equal(s.pause_max_ns, 100 * MS);
    assert_true(s.has_longest);
    assert_int_equal(s.longest_gc_id, 100);
    assert_string_equal(s.longest_collector, "G1Old");
    assert_string_equal(s.longest_cause, "G1 Humongous Allocation");
    assert_string_equal(s.longest_phase, "GC Pause");
    assert_false(s.has_heap);
    assert_int_equal(s.alloc_source, JP_GC_ALLOC_NONE);
    /* a window: pauses starting in [100 ms, 200 ms) are 10..19 ms */
    jp_gc_summary_compute(&l, 100 * MS, 200 * MS, 0, 0, &s);
    assert_int_equal(s.pauses, 10);
    assert_int_equal(s.collections, 10);
    assert_int_equal(s.pause_max_ns, 19 * MS);
    assert_int_equal(s.pause_p50_ns, 14 * MS);
    int64_t b[4];
    /* bucket i holds pauses 10i..10i+9 ms; the last is the largest */
    assert_int_equal(jp_gc_pause_buckets(&l, 0, 400 * MS, b, 4), 345 * MS);
    assert_int_equal(b[0], (1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9) * MS);
    jp_gc_log_cleanup(&l);
}

static void test_summary_fallbacks(void **state)
{
    (void)state;
    jp_gc_log l;
    jp_gc_log_init(&l);
    /* no GCPhasePause: pauses from the collections */
    add_gc(&l, 0, 1, "ZGC Minor", "Allocation Rate", 3 * MS, 2 * MS);
    add_gc(&l, 1000 * MS, 2, "", "", 1 * MS, 1 * MS);
    /* heap: before/after of three collections; allocation from heap growth */
    add_heap(&l, 0, 1, JP_GC_BEFORE, 100 * MB);
    add_heap(&l, 1 * MS, 1, JP_GC_AFTER, 10 * MB);
    add_heap(&l, 500 * MS, 2, JP_GC_AFTER, 40 * MB); /* out of order on purpose */
    add_heap(&l, 499 * MS, 2, JP_GC_BEFORE, 60 * MB);
    add_heap(&l, 1001 * MS, 3, JP_GC_BEFORE, 90 * MB);
    add_heap(&l, 1002 * MS, 3, JP_GC_AFTER, 30 * MB);
    add_heap(&l, 1003 * MS, 4, JP_GC_BEFORE, 99 * MB); /* no after: not a pair */
    add_heap(&l, 1003 * MS, 5, JP_GC_WHEN_UNKNOWN, 1);
    jp_gc_summary s;
    jp_gc_summary_compute(&l, 0, 0, 12345, 1000 * MS, &s);
    assert_true(s.pauses_from_gcs);
    assert_int_equal(s.pauses, 2);
    assert_int_equal(s.pause_total_ns, 4 * MS);
    assert_int_equal(s.pause_max_ns, 2 * MS);
    assert_string_equal(s.longest_collector, "ZGC Minor");
    assert_string_equal(s.longest_phase, "");
    assert_true(s.has_heap);
    assert_int_equal(s.heap_gcs, 3);
    assert_int_equal(s.heap_before, 90 * MB);
    assert_int_equal(s.heap_after, 30 * MB);
    assert_int_equal(s.heap_after_min, 10 * MB);
    assert_int_equal(s.heap_after_max, 40 * MB);
    assert_int_equal(s.alloc_source, JP_GC_ALLOC_HEAP);
    assert_int_equal(s.alloc_bytes, (60 - 10 + 90 - 40) * MB);
    assert_int_equal(s.alloc_span_ns, 1000 * MS);
    assert_true(s.alloc_rate > 99.9e6 && s.alloc_rate < 100.1e6);
    /* nothing at all: the sample total is the last resort */
    jp_gc_log empty;
    jp_gc_log_init(&empty);
    jp_gc_summary_compute(&empty, 0, 0, 2000, 2000 * MS, &s);
    assert_int_equal(s.pauses, 0);
    assert_false(s.has_longest);
    assert_int_equal(s.alloc_source, JP_GC_ALLOC_SAMPLES);
    assert_true(s.alloc_rate > 999.9 && s.alloc_rate < 1000.1);
    json_t *j = jp_gc_summary_json(&s, false, 0);
    assert_true(json_is_null(json_object_get(j, "longest")));
    assert_true(json_is_null(json_object_get(j, "heap")));
    assert_true(json_is_null(json_object_get(j, "pauses_from")));
    assert_non_null(strstr(json_string_value(json_object_get(j, "cannot_tell")), "heap dump"));
    json_decref(j);
    jp_gc_log_cleanup(&l);
}

static void test_log_cap_and_append(void **state)
{
    (void)state;
    jp_gc_log a, b;
    jp_gc_log_init(&a);
    jp_gc_log_init(&b);
    jp_gc_talloc t = {.time_ns = 1, .thread = 7, .allocated = 10};
    for (unsigned i = 0; i < JP_GC_MAX_EVENTS + 5; i++)
        jp_gc_log_talloc(&a, &t);
    assert_int_equal(a.ntallocs, JP_GC_MAX_EVENTS);
    assert_int_equal(a.dropped, 5);
    add_pause(&b, 0, 1, 1, "GC Pause");
    jp_gc_log_append(&b, &a);
    assert_int_equal(b.npauses, 1);
    assert_int_equal(b.ntallocs, JP_GC_MAX_EVENTS);
    assert_int_equal(b.dropped, 5);
    jp_gc_log_cleanup(&a);
    jp_gc_log_cleanup(&b);
}

/* ---- the reader ---- */

enum {
    T_GCNAME = 200,
    T_GCCAUSE,
    T_GCWHEN,
    T_GC = 210,
    T_PAUSE,
    T_HEAP,
    T_TALLOC,
};

#define F(n, t)                                                                                    \
    {                                                                                              \
        n, t, false, false                                                                         \
    }
#define P(n, t)                                                                                    \
    {                                                                                              \
        n, t, true, false                                                                          \
    }

static size_t gc_classes(jw_class *out, bool lean)
{
    size_t n = jw_std_classes(JW_JDK17, out);
    out[n++] = (jw_class){T_GCNAME, "jdk.types.GCName", NULL, 1, {F("name", JW_STRING)}};
    out[n++] = (jw_class){T_GCCAUSE, "jdk.types.GCCause", NULL, 1, {F("cause", JW_STRING)}};
    out[n++] = (jw_class){T_GCWHEN, "jdk.types.GCWhen", NULL, 1, {F("when", JW_STRING)}};
    if (lean) /* a future JDK without the pause fields, the name a plain String */
        out[n++] = (jw_class){T_GC,
                              "jdk.GarbageCollection",
                              "jdk.jfr.Event",
                              4,
                              {F("startTime", JW_LONG), F("duration", JW_LONG), F("gcId", JW_INT),
                               F("name", JW_STRING)}};
    else
        out[n++] = (jw_class){T_GC,
                              "jdk.GarbageCollection",
                              "jdk.jfr.Event",
                              7,
                              {F("startTime", JW_LONG), F("duration", JW_LONG), F("gcId", JW_INT),
                               P("name", T_GCNAME), P("cause", T_GCCAUSE),
                               F("sumOfPauses", JW_LONG), F("longestPause", JW_LONG)}};
    out[n++] = (jw_class){T_PAUSE,
                          "jdk.GCPhasePause",
                          "jdk.jfr.Event",
                          5,
                          {F("startTime", JW_LONG), F("duration", JW_LONG),
                           P("eventThread", JW_THREAD), F("gcId", JW_INT), F("name", JW_STRING)}};
    out[n++] = (jw_class){T_HEAP,
                          "jdk.GCHeapSummary",
                          "jdk.jfr.Event",
                          5,
                          {F("startTime", JW_LONG), F("gcId", JW_INT), P("when", T_GCWHEN),
                           F("heapSpace", JW_VSPACE), F("heapUsed", JW_LONG)}};
    out[n++] =
        (jw_class){T_TALLOC,
                   "jdk.ThreadAllocationStatistics",
                   "jdk.jfr.Event",
                   3,
                   {F("startTime", JW_LONG), F("allocated", JW_LONG), P("thread", JW_THREAD)}};
    return n;
}

#define T0 1000 /* the chunk's start ticks; 1 tick = 1 ns */

static void ev_gc(jw_buf *b, uint64_t at_ms, uint64_t id, uint64_t name, uint64_t cause,
                  uint64_t pause_ms)
{
    size_t ev = jw_event_begin(b, T_GC);
    jw_varint(b, T0 + at_ms * MS);
    jw_varint(b, pause_ms * MS);
    jw_varint(b, id);
    jw_varint(b, name);
    jw_varint(b, cause);
    jw_varint(b, pause_ms * MS);
    jw_varint(b, pause_ms * MS);
    jw_event_end(b, ev);
}

static void ev_pause(jw_buf *b, uint64_t at_ms, uint64_t id, const char *name, uint64_t pause_ms)
{
    size_t ev = jw_event_begin(b, T_PAUSE);
    jw_varint(b, T0 + at_ms * MS);
    jw_varint(b, pause_ms * MS);
    jw_varint(b, 1);
    jw_varint(b, id);
    jw_str_utf8(b, name);
    jw_event_end(b, ev);
}

static void ev_heap(jw_buf *b, uint64_t at_ms, uint64_t id, uint64_t when, uint64_t used)
{
    size_t ev = jw_event_begin(b, T_HEAP);
    jw_varint(b, T0 + at_ms * MS);
    jw_varint(b, id);
    jw_varint(b, when);
    jw_varint(b, 0x7f0000000000ULL); /* heapSpace: every shape to skip */
    jw_varint(b, 0x7f0000100000ULL);
    jw_be32(b, 0x3f800000);
    jw_be64(b, 0x4000000000000000ULL);
    jw_str_utf8(b, "heap");
    jw_u8(b, 1);
    jw_varint(b, used);
    jw_event_end(b, ev);
}

static void ev_talloc(jw_buf *b, uint64_t at_ms, uint64_t allocated, uint64_t thread)
{
    size_t ev = jw_event_begin(b, T_TALLOC);
    jw_varint(b, T0 + at_ms * MS);
    jw_varint(b, allocated);
    jw_varint(b, thread);
    jw_event_end(b, ev);
}

static void gc_pools(jw_chunk *c)
{
    jw_buf *b = c->b;
    size_t cp = jw_checkpoint_begin(c, 3);
    jw_pool(b, T_GCNAME, 2);
    jw_symbol(b, 0, JW_UTF8, "G1New");
    jw_symbol(b, 1, JW_LATIN1, "G1Old");
    jw_pool(b, T_GCCAUSE, 1);
    jw_symbol(b, 5, JW_UTF8, "G1 Evacuation Pause");
    jw_pool(b, T_GCWHEN, 2);
    jw_symbol(b, 0, JW_UTF8, "Before GC");
    jw_symbol(b, 1, JW_CHARS, "After GC");
    jw_checkpoint_end(c, cp);
}

/* Three collections; the third's cause is missing from its pool. */
static size_t gc_chunk(jw_buf *b, int64_t start_ns, bool cut)
{
    jw_chunk c;
    jw_chunk_begin(&c, b, 1, start_ns, T0, 1000000000);
    jw_class cls[48];
    jw_metadata(&c, cls, gc_classes(cls, false));
    ev_talloc(b, 0, 1000, 1);
    ev_talloc(b, 0, 5, 2);
    ev_gc(b, 100, 1, 0, 5, 5);
    ev_pause(b, 100, 1, "GC Pause", 5);
    ev_heap(b, 100, 1, 0, 100 * MB);
    ev_heap(b, 105, 1, 1, 20 * MB);
    ev_gc(b, 400, 2, 0, 5, 2);
    ev_pause(b, 400, 2, "GC Pause", 2);
    ev_heap(b, 400, 2, 0, 90 * MB);
    ev_heap(b, 402, 2, 1, 25 * MB);
    ev_gc(b, 800, 3, 1, 99, 30);
    ev_pause(b, 800, 3, "Pause Remark", 30);
    ev_heap(b, 800, 3, 0, 120 * MB);
    ev_heap(b, 830, 3, 1, 30 * MB);
    ev_talloc(b, 1000, 1000 + 500 * MB, 1);
    if (cut) { /* a heap summary whose heapUsed runs past the event */
        size_t ev = jw_event_begin(b, T_HEAP);
        jw_varint(b, T0);
        jw_event_end(b, ev);
    }
    jw_std_pools(&c, JW_JDK17);
    gc_pools(&c);
    jw_chunk_end(&c, 1000000000);
    return c.start;
}

static void test_reader_gc_events(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    int64_t start = 1700000000000000000LL;
    gc_chunk(&b, start, false);
    jfr_options o;
    jfr_options_init(&o);
    jfr_report rep;
    jfr_report_init(&rep);
    jp_profile *p = jp_profile_new();
    assert_int_equal(jfr_read_buffer(b.data, b.len, "gc.jfr", &o, p, &rep), JP_OK);
    assert_int_equal(p->gc.ngcs, 3);
    assert_int_equal(p->gc.npauses, 3);
    assert_int_equal(p->gc.nheaps, 6);
    assert_int_equal(p->gc.ntallocs, 3);
    assert_string_equal(p->gc.gcs[0].name, "G1New");
    assert_string_equal(p->gc.gcs[0].cause, "G1 Evacuation Pause");
    assert_string_equal(p->gc.gcs[2].name, "G1Old");
    assert_string_equal(p->gc.gcs[2].cause, ""); /* key 99: unknown, no crash */
    assert_int_equal(p->gc.gcs[1].start_ns, start + 400 * MS);
    assert_int_equal(p->gc.heaps[1].when, JP_GC_AFTER);
    jp_gc_summary s;
    jp_gc_summary_compute(&p->gc, 0, 0, 0, 0, &s);
    assert_int_equal(s.pauses, 3);
    assert_int_equal(s.pause_total_ns, 37 * MS);
    assert_int_equal(s.pause_p50_ns, 5 * MS);
    assert_int_equal(s.pause_p99_ns, 30 * MS);
    assert_int_equal(s.pause_max_ns, 30 * MS);
    assert_string_equal(s.longest_phase, "Pause Remark");
    assert_string_equal(s.longest_collector, "G1Old");
    assert_string_equal(s.longest_cause, "");
    assert_int_equal(s.heap_before, 120 * MB);
    assert_int_equal(s.heap_after, 30 * MB);
    assert_int_equal(s.heap_after_min, 20 * MB);
    /* heap growth first: 20 -> 90 MB, 25 -> 120 MB between 105 and 800 ms */
    assert_int_equal(s.alloc_source, JP_GC_ALLOC_HEAP);
    assert_int_equal(s.alloc_bytes, 165 * MB);
    assert_int_equal(s.alloc_span_ns, 695 * MS);
    /* without heap summaries: thread 1 seen twice, thread 2 once */
    p->gc.nheaps = 0;
    jp_gc_summary_compute(&p->gc, 0, 0, 0, 0, &s);
    assert_int_equal(s.alloc_source, JP_GC_ALLOC_THREADS);
    assert_int_equal(s.alloc_bytes, 500 * MB);
    assert_true(s.alloc_rate > 499.9e6 && s.alloc_rate < 500.1e6);
    jp_profile_free(p);

    /* two chunks, read in parallel: the second's log is merged in */
    gc_chunk(&b, start + 1000 * MS, false);
    o.jobs = 2;
    p = jp_profile_new();
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_buffer(b.data, b.len, "gc.jfr", &o, p, &rep), JP_OK);
    assert_int_equal(p->gc.ngcs, 6);
    assert_int_equal(p->gc.gcs[5].start_ns, start + 1800 * MS);
    jp_profile_free(p);

    /* skip_gc: no GC log at all */
    o.skip_gc = true;
    p = jp_profile_new();
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_buffer(b.data, b.len, "gc.jfr", &o, p, &rep), JP_OK);
    assert_false(jp_gc_log_any(&p->gc));
    jp_profile_free(p);
    o.skip_gc = false;

    /* --from/--to keep the GC events of the range only */
    o.jobs = 1;
    o.has_from = o.has_to = true;
    assert_int_equal(jp_timespec_parse("+300ms", &o.from, NULL), JP_OK);
    assert_int_equal(jp_timespec_parse("+500ms", &o.to, NULL), JP_OK);
    p = jp_profile_new();
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_buffer(b.data, b.len, "gc.jfr", &o, p, &rep), JP_OK);
    assert_int_equal(p->gc.ngcs, 1);
    assert_int_equal(p->gc.gcs[0].gc_id, 2);
    jp_profile_free(p);
    jw_free(&b);
}

static void test_reader_gc_damage_and_lean_types(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    gc_chunk(&b, 1000, true);
    jfr_options o;
    jfr_options_init(&o);
    jfr_report rep;
    jfr_report_init(&rep);
    jp_profile *p = jp_profile_new();
    assert_int_not_equal(jfr_read_buffer(b.data, b.len, "gc.jfr", &o, p, &rep), JP_OK);
    assert_true(rep.partial);
    assert_non_null(strstr(rep.error.msg, "malformed jdk.GCHeapSummary event"));
    assert_int_equal(p->gc.ngcs, 3); /* what came before stays */
    jp_profile_free(p);
    jw_free(&b);

    /* no pause fields, name a plain String, no pools at all */
    jw_init(&b);
    jw_chunk c;
    jw_chunk_begin(&c, &b, 1, 1000, T0, 1000000000);
    jw_class cls[48];
    jw_metadata(&c, cls, gc_classes(cls, true));
    size_t ev = jw_event_begin(&b, T_GC);
    jw_varint(&b, T0);
    jw_varint(&b, 7 * MS);
    jw_varint(&b, 1);
    jw_str_utf8(&b, "Serial");
    jw_event_end(&b, ev);
    ev_heap(&b, 0, 1, 0, 10);
    jw_std_pools(&c, JW_JDK17);
    jw_chunk_end(&c, 1000000000);
    p = jp_profile_new();
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_buffer(b.data, b.len, "lean.jfr", &o, p, &rep), JP_OK);
    assert_int_equal(p->gc.ngcs, 1);
    assert_string_equal(p->gc.gcs[0].name, "Serial");
    assert_int_equal(p->gc.gcs[0].longest_pause_ns, -1);
    assert_int_equal(p->gc.heaps[0].when, JP_GC_WHEN_UNKNOWN); /* GCWhen pool missing */
    jp_gc_summary s;
    jp_gc_summary_compute(&p->gc, 0, 0, 0, 0, &s);
    assert_int_equal(s.collections, 1);
    assert_int_equal(s.pauses, 0);
    assert_false(s.has_heap);
    jp_profile_free(p);
    jw_free(&b);
}

/* Per-window records (what the agent uploads and the stores keep), sent
 * through their JSON, merge into the summary of the whole log: exactly for
 * counts, sums, max, longest, heap and percentiles while every window kept
 * all its pauses. */
static jp_gc_window *windows_of(const jp_gc_log *l, int64_t span, size_t n)
{
    jp_gc_window *ws = calloc(n, sizeof *ws);
    for (size_t i = 0; i < n; i++) {
        jp_gc_window w;
        int64_t a = (int64_t)i * span, b = a + span;
        jp_gc_window_compute(l, a, b, 0, 0, &w);
        json_t *j = jp_gc_window_json(&w);
        char why[200] = "";
        assert_true(jp_gc_window_from_json(j, &ws[i], why, sizeof why));
        json_decref(j);
        assert_int_equal(ws[i].s.from_ns, a);
        assert_int_equal(ws[i].s.to_ns, b);
    }
    return ws;
}

/* ---- the old kind: jdk.OldObjectSample (stacks, and class, age, size and
 * heap use into the profile's old-object log) ---- */

enum { T_OLDOBJ = 220, T_OLD };

static void ev_old(jw_buf *b, uint64_t at_ms, uint64_t stack, uint64_t size, uint64_t age_ms,
                   uint64_t heap, uint64_t obj)
{
    size_t ev = jw_event_begin(b, T_OLD);
    jw_varint(b, T0 + at_ms * MS);
    jw_varint(b, 0);
    jw_varint(b, 1);
    jw_varint(b, stack);
    jw_varint(b, T0 + (at_ms - age_ms) * MS); /* allocationTime */
    jw_varint(b, size);
    jw_varint(b, age_ms * MS);
    jw_varint(b, heap);
    jw_varint(b, obj);
    jw_be32(b, 0xffffffffu); /* arrayElements: -1, as the JDK writes for no array */
    jw_event_end(b, ev);
}

static void test_reader_old_objects(void **state)
{
    (void)state;
    jw_buf b;
    jw_init(&b);
    int64_t start = 1700000000000000000LL;
    jw_chunk c;
    jw_chunk_begin(&c, &b, 1, start, T0, 1000000000);
    jw_class cls[48];
    size_t n = jw_std_classes(JW_JDK17, cls);
    cls[n++] =
        (jw_class){T_OLDOBJ,
                   "jdk.types.OldObject",
                   NULL,
                   3,
                   {F("address", JW_LONG), P("type", JW_CLASS), F("description", JW_STRING)}};
    cls[n++] = (jw_class){T_OLD,
                          "jdk.OldObjectSample",
                          "jdk.jfr.Event",
                          10,
                          {F("startTime", JW_LONG), F("duration", JW_LONG),
                           P("eventThread", JW_THREAD), P("stackTrace", JW_STACKTRACE),
                           F("allocationTime", JW_LONG), F("objectSize", JW_LONG),
                           F("objectAge", JW_LONG), F("lastKnownHeapUsage", JW_LONG),
                           P("object", T_OLDOBJ), F("arrayElements", JW_INT)}};
    jw_metadata(&c, cls, n);
    ev_old(&b, 9000, 1, 144, 5000, 10 * MB, 1);
    ev_old(&b, 9000, 1, 144, 2000, 30 * MB, 1);
    ev_old(&b, 9000, 2, 0, 1000, 40 * MB, 2);
    ev_old(&b, 9000, 3, 16, 7000, 5 * MB, 99); /* an object missing from its pool */
    jw_std_pools(&c, JW_JDK17);
    size_t cp = jw_checkpoint_begin(&c, 1);
    jw_pool(&b, T_OLDOBJ, 2);
    for (uint64_t k = 1; k <= 2; k++) {
        jw_varint(&b, k);
        jw_varint(&b, 0x7f0000001000ULL * k);
        jw_varint(&b, k); /* class key: com/example/App, com/example/Util */
        jw_str_utf8(&b, "");
    }
    jw_checkpoint_end(&c, cp);
    jw_chunk_end(&c, 9000 * MS);
    jfr_options o;
    jfr_options_init(&o);
    jfr_report rep;
    jfr_report_init(&rep);
    jp_profile *p = jp_profile_new();
    assert_int_equal(jfr_read_buffer(b.data, b.len, "old.jfr", &o, p, &rep), JP_OK);
    const jp_kind_table *t = &p->kinds[JP_KIND_OLD];
    assert_int_equal(t->samples, 4);
    assert_int_equal(t->value, 304);
    assert_int_equal(p->old.n, 4);
    assert_int_equal(p->old.v[0].age_ns, 5000 * MS);
    assert_int_equal(p->old.v[0].alloc_ns, start + 4000 * MS);
    assert_int_equal(p->old.v[0].time_ns, start + 9000 * MS);
    assert_int_equal(p->old.v[2].heap_used, 40 * MB);
    jp_old_summary s;
    jp_old_summary_init(&s);
    jp_old_summarize(&p->old, &s);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.objects, 4);
    assert_string_equal(s.classes[0].name, "com.example.App");
    assert_int_equal(s.classes[0].objects, 2);
    assert_int_equal(s.classes[0].bytes, 288);
    assert_int_equal(s.classes[0].age_min_ns, 2000 * MS);
    assert_int_equal(s.classes[0].age_median_ns, 2000 * MS);
    assert_int_equal(s.classes[0].age_max_ns, 5000 * MS);
    assert_string_equal(s.classes[1].name, "[unknown]");
    assert_string_equal(s.classes[2].name, "com.example.Util");
    /* the heap in use when the oldest and the newest object was allocated */
    assert_int_equal(s.heap_first, 5 * MB);
    assert_int_equal(s.heap_last, 40 * MB);
    jp_old_summary_cleanup(&s);
    jp_profile_free(p);
    /* the chunk's events in pieces on two threads: the same log, in file order */
    o.jobs = 2;
    o.block = 64;
    p = jp_profile_new();
    jfr_report_init(&rep);
    assert_int_equal(jfr_read_buffer(b.data, b.len, "old.jfr", &o, p, &rep), JP_OK);
    assert_int_equal(p->kinds[JP_KIND_OLD].value, 304);
    assert_int_equal(p->old.n, 4);
    assert_int_equal(p->old.v[1].age_ns, 2000 * MS);
    assert_int_equal(p->old.v[3].age_ns, 7000 * MS);
    jp_profile_free(p);
    o.jobs = 1;
    o.block = 0;
    /* asked only for cpu: no old kind, no log */
    o.kinds = 1u << JP_KIND_CPU;
    p = jp_profile_new();
    jfr_report_init(&rep);
    jfr_read_buffer(b.data, b.len, "old.jfr", &o, p, &rep);
    assert_int_equal(p->old.n, 0);
    jp_profile_free(p);
    jw_free(&b);
}

static void test_window_merge(void **state)
{
    (void)state;
    jp_gc_log l;
    jp_gc_log_init(&l);
    /* pause lengths shuffled over time so no window holds a sorted run */
    for (int i = 1; i <= 100; i++) {
        int64_t d = ((i * 37) % 100 + 1) * MS;
        add_pause(&l, i * 10 * MS, d, (uint64_t)i, i % 2 ? "GC Pause" : "Pause Young");
        add_gc(&l, i * 10 * MS, (uint64_t)i, d == 100 * MS ? "G1Old" : "G1New",
               d == 100 * MS ? "System.gc()" : "G1 Evacuation Pause", d, d);
        add_heap(&l, i * 10 * MS, (uint64_t)i, JP_GC_BEFORE, (uint64_t)(200 + i) * MB);
        add_heap(&l, i * 10 * MS + 1, (uint64_t)i, JP_GC_AFTER, (uint64_t)(50 + (i * 7) % 30) * MB);
    }
    jp_gc_summary all;
    jp_gc_summary_compute(&l, 0, 1100 * MS, 0, 0, &all);
    jp_gc_window *ws = windows_of(&l, 275 * MS, 4);
    jp_gc_summary m;
    bool exact = false;
    int64_t covered = 0;
    jp_gc_merge(ws, 4, 0, 1100 * MS, &m, &exact, &covered);
    assert_true(exact);
    assert_int_equal(covered, 1100 * MS);
    assert_int_equal(m.collections, all.collections);
    assert_int_equal(m.pauses, 100);
    assert_int_equal(m.pause_total_ns, all.pause_total_ns);
    assert_int_equal(m.pause_p50_ns, all.pause_p50_ns);
    assert_int_equal(m.pause_p99_ns, all.pause_p99_ns);
    assert_int_equal(m.pause_max_ns, 100 * MS);
    assert_true(m.has_longest);
    assert_int_equal(m.longest_gc_id, all.longest_gc_id);
    assert_string_equal(m.longest_collector, "G1Old");
    assert_string_equal(m.longest_cause, "System.gc()");
    assert_string_equal(m.longest_phase, all.longest_phase);
    assert_true(m.has_heap);
    assert_int_equal(m.heap_gcs, all.heap_gcs);
    assert_int_equal(m.heap_before, all.heap_before);
    assert_int_equal(m.heap_after, all.heap_after);
    assert_int_equal(m.heap_after_min, all.heap_after_min);
    assert_int_equal(m.heap_after_max, all.heap_after_max);
    /* heap growth across the 3 window boundaries is not seen by a window */
    assert_int_equal(m.alloc_source, JP_GC_ALLOC_HEAP);
    assert_true(m.alloc_bytes < all.alloc_bytes && m.alloc_bytes > all.alloc_bytes * 9 / 10);
    /* the order of the windows does not matter */
    jp_gc_window tmp = ws[0];
    ws[0] = ws[3];
    ws[3] = tmp;
    jp_gc_summary m2;
    jp_gc_merge(ws, 4, 0, 1100 * MS, &m2, NULL, NULL);
    assert_int_equal(m2.pause_p50_ns, m.pause_p50_ns);
    assert_int_equal(m2.heap_after, m.heap_after);
    /* points: each window into the column holding its middle */
    jp_gc_point pt[2];
    jp_gc_window_points(ws, 4, 0, 1100 * MS, pt, 2);
    assert_int_equal(pt[0].pauses + pt[1].pauses, 100);
    assert_int_equal(pt[0].pause_total_ns + pt[1].pause_total_ns, all.pause_total_ns);
    assert_int_equal(pt[1].end_ns, 1100 * MS);
    free(ws);
    jp_gc_log_cleanup(&l);
}

/* A window with more pauses than it keeps: merged percentiles are
 * estimated (and say so), close to the truth; one window alone stays exact. */
static void test_window_merge_capped(void **state)
{
    (void)state;
    jp_gc_log l;
    jp_gc_log_init(&l);
    for (int i = 1; i <= 3000; i++)
        add_pause(&l, i * MS, ((i * 7919) % 3000 + 1) * 1000, (uint64_t)i, "GC Pause");
    jp_gc_summary all;
    jp_gc_summary_compute(&l, 0, 4000 * MS, 0, 0, &all);
    jp_gc_window *ws = windows_of(&l, 2000 * MS, 2);
    assert_int_equal(ws[0].npause, JP_GC_WINDOW_PAUSES);
    assert_int_equal(ws[0].s.pauses, 1999);
    jp_gc_summary m;
    bool exact = true;
    jp_gc_merge(ws, 2, 0, 4000 * MS, &m, &exact, NULL);
    assert_false(exact);
    assert_int_equal(m.pauses, 3000);
    assert_int_equal(m.pause_total_ns, all.pause_total_ns);
    assert_int_equal(m.pause_max_ns, all.pause_max_ns);
    assert_true(llabs(m.pause_p50_ns - all.pause_p50_ns) <= all.pause_p50_ns / 100);
    assert_true(llabs(m.pause_p99_ns - all.pause_p99_ns) <= all.pause_p99_ns / 100);
    jp_gc_merge(ws, 1, 0, 2000 * MS, &m, &exact, NULL);
    assert_true(exact);
    assert_int_equal(m.pause_p50_ns, ws[0].s.pause_p50_ns);
    free(ws);
    jp_gc_log_cleanup(&l);
}

/* Wrong shapes are refused with what and where. */
static void test_window_json_refused(void **state)
{
    (void)state;
    static const struct {
        const char *json, *where;
    } bad[] = {
        {"[]", "must be an object"},
        {"{\"end\":1,\"summary\":{}}", "start: required integer is missing"},
        {"{\"start\":5,\"end\":1,\"summary\":{}}", "end: must not be before start"},
        {"{\"start\":1,\"end\":2}", "summary.: required object is missing"},
        {"{\"start\":1,\"end\":2,\"summary\":{\"collections\":-1}}",
         "summary.collections: must be an integer >= 0"},
        {"{\"start\":1,\"end\":2,\"summary\":{\"collections\":0,\"pauses\":1,"
         "\"pause_total_ns\":1,\"pause_p50_ns\":1,\"pause_p99_ns\":1,\"pause_max_ns\":1,"
         "\"heap\":{\"gcs\":1,\"before_bytes\":\"x\"}}}",
         "summary.heap.before_bytes: must be an integer >= 0"},
        {"{\"start\":1,\"end\":2,\"summary\":{\"collections\":0,\"pauses\":1,"
         "\"pause_total_ns\":1,\"pause_p50_ns\":1,\"pause_p99_ns\":1,\"pause_max_ns\":1,"
         "\"alloc\":{\"source\":\"guess\"}}}",
         "summary.alloc.source: must name"},
        {"{\"start\":1,\"end\":2,\"summary\":{\"collections\":0,\"pauses\":1,"
         "\"pause_total_ns\":1,\"pause_p50_ns\":1,\"pause_p99_ns\":1,\"pause_max_ns\":1},"
         "\"pause_ns\":[1,2]}",
         "pause_ns: more entries"},
        {"{\"start\":1,\"end\":2,\"summary\":{\"collections\":0,\"pauses\":1,"
         "\"pause_total_ns\":1,\"pause_p50_ns\":1,\"pause_p99_ns\":1,\"pause_max_ns\":1,"
         "\"pauses_from\":\"jdk.Whatever\"}}",
         "summary.pauses_from: must be"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *j = json_loads(bad[i].json, JSON_DECODE_ANY, NULL);
        assert_non_null(j);
        jp_gc_window w;
        char why[200] = "";
        assert_false(jp_gc_window_from_json(j, &w, why, sizeof why));
        if (!strstr(why, bad[i].where))
            fail_msg("case %zu: '%s' does not say '%s'", i, why, bad[i].where);
        json_decref(j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary_percentiles_and_longest),
        cmocka_unit_test(test_summary_fallbacks),
        cmocka_unit_test(test_log_cap_and_append),
        cmocka_unit_test(test_reader_gc_events),
        cmocka_unit_test(test_reader_gc_damage_and_lean_types),
        cmocka_unit_test(test_reader_old_objects),
        cmocka_unit_test(test_window_merge),
        cmocka_unit_test(test_window_merge_capped),
        cmocka_unit_test(test_window_json_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
