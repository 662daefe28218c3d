/* gc_json.c - GC summary -> JSON. */
#include "wire/gc_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of s[0..n) without a UTF-8 sequence cut at its end (names are
 * cut at a byte count by the reader). */
static size_t utf8_whole(const char *s, size_t n)
{
    size_t i = n;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xc0) == 0x80)
        i--;
    if (i == 0)
        return 0;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    return n - (i - 1) < need ? i - 1 : n;
}

static json_t *name_json(const char *s)
{
    json_t *j = *s ? json_stringn(s, utf8_whole(s, strlen(s))) : NULL;
    return j ? j : json_string(*s ? "?" : "unknown");
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

/* ---- decoding ---- */

typedef struct gdec {
    char *why;
    size_t len;
    const char *at; /* the object being read: "", "summary.", "summary.heap." */
} gdec;

static bool gfail(gdec *d, const char *key, const char *what)
{
    snprintf(d->why, d->len, "%s%s: %s", d->at, key, what);
    return false;
}

static bool gint(gdec *d, const json_t *o, const char *key, bool required, int64_t *out)
{
    const json_t *v = json_object_get(o, key);
    *out = 0;
    if (!v || json_is_null(v))
        return required ? gfail(d, key, "required integer is missing") : true;
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return gfail(d, key, "must be an integer >= 0");
    *out = json_integer_value(v);
    return true;
}

static bool gu64(gdec *d, const json_t *o, const char *key, bool required, uint64_t *out)
{
    int64_t v;
    bool ok = gint(d, o, key, required, &v);
    *out = (uint64_t)v;
    return ok;
}

/* An object or null (*out NULL); anything else is refused. */
static bool gobj(gdec *d, const json_t *o, const char *key, const json_t **out)
{
    const json_t *v = json_object_get(o, key);
    *out = NULL;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_object(v))
        return gfail(d, key, "must be an object or null");
    *out = v;
    return true;
}

static bool gname(gdec *d, const json_t *o, const char *key, char *dst, size_t cap)
{
    const json_t *v = json_object_get(o, key);
    dst[0] = 0;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_string(v))
        return gfail(d, key, "must be a string");
    const char *s = json_string_value(v);
    if (!strcmp(s, "unknown"))
        return true;
    size_t n = utf8_whole(s, strnlen(s, cap - 1));
    for (size_t i = 0; i < n; i++) {
        dst[i] = s[i];
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            dst[i] = '?';
    }
    dst[n] = 0;
    return true;
}

static bool dec_longest(gdec *d, const json_t *o, jp_gc_summary *s)
{
    const json_t *v;
    if (!gobj(d, o, "longest", &v))
        return false;
    if (!v)
        return true;
    char at[48];
    snprintf(at, sizeof at, "%slongest.", d->at);
    d->at = at;
    s->has_longest = true;
    return gint(d, v, "start_ns", true, &s->longest_start_ns) &&
           gu64(d, v, "gc_id", false, &s->longest_gc_id) &&
           gname(d, v, "phase", s->longest_phase, sizeof s->longest_phase) &&
           gname(d, v, "collector", s->longest_collector, sizeof s->longest_collector) &&
           gname(d, v, "cause", s->longest_cause, sizeof s->longest_cause);
}

static bool dec_heap(gdec *d, const json_t *o, jp_gc_summary *s)
{
    const json_t *v;
    if (!gobj(d, o, "heap", &v))
        return false;
    if (!v)
        return true;
    char at[48];
    snprintf(at, sizeof at, "%sheap.", d->at);
    d->at = at;
    s->has_heap = true;
    return gu64(d, v, "gcs", true, &s->heap_gcs) &&
           gu64(d, v, "before_bytes", true, &s->heap_before) &&
           gu64(d, v, "after_bytes", true, &s->heap_after) &&
           gu64(d, v, "after_min_bytes", true, &s->heap_after_min) &&
           gu64(d, v, "after_max_bytes", true, &s->heap_after_max);
}

static bool dec_alloc(gdec *d, const json_t *o, jp_gc_summary *s)
{
    const json_t *v;
    if (!gobj(d, o, "alloc", &v))
        return false;
    if (!v)
        return true;
    char at[48];
    snprintf(at, sizeof at, "%salloc.", d->at);
    d->at = at;
    const json_t *src = json_object_get(v, "source");
    if (!json_is_string(src) || !jp_gc_alloc_source_parse(json_string_value(src), &s->alloc_source))
        return gfail(d, "source", "must name an allocation source (see docs/API.md)");
    if (!gu64(d, v, "bytes", true, &s->alloc_bytes) ||
        !gint(d, v, "span_ns", true, &s->alloc_span_ns))
        return false;
    if (s->alloc_span_ns <= 0)
        return gfail(d, "span_ns", "must be > 0");
    s->alloc_rate = (double)s->alloc_bytes * 1e9 / (double)s->alloc_span_ns;
    return true;
}

static bool dec_summary(gdec *d, const json_t *o, jp_gc_summary *s)
{
    memset(s, 0, sizeof *s);
    if (!json_is_object(o))
        return gfail(d, "", "must be an object");
    const char *prefix = d->at;
    const json_t *from = json_object_get(o, "pauses_from");
    if (!(gint(d, o, "from_ns", false, &s->from_ns) && gint(d, o, "to_ns", false, &s->to_ns) &&
          gu64(d, o, "collections", true, &s->collections) &&
          gu64(d, o, "pauses", true, &s->pauses) &&
          gint(d, o, "pause_total_ns", true, &s->pause_total_ns) &&
          gint(d, o, "pause_p50_ns", true, &s->pause_p50_ns) &&
          gint(d, o, "pause_p99_ns", true, &s->pause_p99_ns) &&
          gint(d, o, "pause_max_ns", true, &s->pause_max_ns) &&
          gu64(d, o, "dropped", false, &s->dropped)))
        return false;
    if (from && !json_is_null(from)) {
        const char *f = json_is_string(from) ? json_string_value(from) : "";
        if (strcmp(f, "jdk.GCPhasePause") && strcmp(f, "jdk.GarbageCollection"))
            return gfail(d, "pauses_from",
                         "must be \"jdk.GCPhasePause\", \"jdk.GarbageCollection\" or null");
        s->pauses_from_gcs = !strcmp(f, "jdk.GarbageCollection");
    }
    if (!dec_longest(d, o, s))
        return false;
    d->at = prefix;
    if (!dec_heap(d, o, s))
        return false;
    d->at = prefix;
    if (!dec_alloc(d, o, s))
        return false;
    d->at = prefix;
    if (s->pause_p50_ns > s->pause_max_ns || s->pause_p99_ns > s->pause_max_ns)
        return gfail(d, "pause_max_ns", "must not be below pause_p50_ns or pause_p99_ns");
    return true;
}

bool jp_gc_summary_from_json(const json_t *o, jp_gc_summary *s, char *why, size_t len)
{
    gdec d = {why, len, ""};
    return dec_summary(&d, o, s);
}

json_t *jp_gc_window_json(const jp_gc_window *w)
{
    json_t *o = json_object();
    json_object_set_new(o, "start", json_integer(w->s.from_ns));
    json_object_set_new(o, "end", json_integer(w->s.to_ns));
    json_object_set_new(o, "summary", jp_gc_summary_json(&w->s, true, 0));
    json_t *a = json_array();
    for (uint32_t i = 0; i < w->npause; i++)
        json_array_append_new(a, json_integer(w->pause_ns[i]));
    json_object_set_new(o, "pause_ns", a);
    return o;
}

bool jp_gc_window_from_json(const json_t *o, jp_gc_window *w, char *why, size_t len)
{
    gdec d = {why, len, ""};
    memset(w, 0, sizeof *w);
    if (!json_is_object(o))
        return gfail(&d, "", "must be an object");
    int64_t start, end;
    if (!gint(&d, o, "start", true, &start) || !gint(&d, o, "end", true, &end))
        return false;
    if (end < start)
        return gfail(&d, "end", "must not be before start");
    d.at = "summary.";
    const json_t *sum = json_object_get(o, "summary");
    if (!sum)
        return gfail(&d, "", "required object is missing");
    if (!dec_summary(&d, sum, &w->s))
        return false;
    d.at = "";
    w->s.from_ns = start;
    w->s.to_ns = end;
    const json_t *a = json_object_get(o, "pause_ns");
    if (a && !json_is_null(a)) {
        if (!json_is_array(a))
            return gfail(&d, "pause_ns", "must be an array of integers");
        if (json_array_size(a) > JP_GC_WINDOW_PAUSES || json_array_size(a) > w->s.pauses)
            return gfail(&d, "pause_ns", "more entries than summary.pauses or 512");
        size_t i;
        const json_t *v;
        json_array_foreach(a, i, v)
        {
            if (!json_is_integer(v) || json_integer_value(v) < 0 ||
                json_integer_value(v) > w->s.pause_max_ns) {
                snprintf(why, len, "pause_ns[%zu]: must be an integer from 0 to pause_max_ns", i);
                return false;
            }
            w->pause_ns[i] = json_integer_value(v);
        }
        w->npause = (uint32_t)json_array_size(a);
        for (uint32_t k = 1; k < w->npause; k++) /* insertion sort: usually sorted already */
            for (uint32_t j = k; j > 0 && w->pause_ns[j - 1] > w->pause_ns[j]; j--) {
                int64_t t = w->pause_ns[j];
                w->pause_ns[j] = w->pause_ns[j - 1];
                w->pause_ns[j - 1] = t;
            }
    }
    return true;
}

json_t *jp_gc_points_json(const jp_gc_point *p, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(
            a, json_pack("{sI sI sI sI sI}", "start_ns", (json_int_t)p[i].start_ns, "end_ns",
                         (json_int_t)p[i].end_ns, "pauses", (json_int_t)p[i].pauses,
                         "pause_total_ns", (json_int_t)p[i].pause_total_ns, "pause_max_ns",
                         (json_int_t)p[i].pause_max_ns));
    return a;
}

bool jp_gc_points_from_json(const json_t *a, jp_gc_point *out, size_t max, size_t *n, char *why,
                            size_t len)
{
    *n = 0;
    if (!json_is_array(a)) {
        snprintf(why, len, "points: must be an array");
        return false;
    }
    size_t i;
    const json_t *v;
    json_array_foreach(a, i, v)
    {
        if (*n >= max)
            break;
        char at[32];
        snprintf(at, sizeof at, "points[%zu].", i);
        gdec d = {why, len, at};
        jp_gc_point *p = &out[(*n)++];
        if (!json_is_object(v))
            return gfail(&d, "", "must be an object");
        if (!gint(&d, v, "start_ns", true, &p->start_ns) ||
            !gint(&d, v, "end_ns", true, &p->end_ns) || !gu64(&d, v, "pauses", true, &p->pauses) ||
            !gint(&d, v, "pause_total_ns", true, &p->pause_total_ns) ||
            !gint(&d, v, "pause_max_ns", true, &p->pause_max_ns))
            return false;
    }
    return true;
}
