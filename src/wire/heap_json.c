/* heap_json.c - heap histograms and growth <-> JSON (see heap_json.h). */
#include "wire/heap_json.h"

#include <stdio.h>
#include <string.h>

#include "base/xalloc.h"

/* Names are valid UTF-8 (the parser and the decoder see to it); a string
 * jansson still refuses becomes "?". */
static json_t *str_json(const char *s)
{
    json_t *j = json_string(s);
    return j ? j : json_string("?");
}

static json_t *u64_json(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

json_t *jp_heap_histo_json(const jp_heap_histo *h, size_t top)
{
    size_t n = top && top < h->n ? top : h->n;
    json_t *o = json_object();
    json_object_set_new(o, "time_ns", json_integer(h->time_ns));
    json_object_set_new(o, "took_ns", json_integer(h->took_ns));
    json_object_set_new(o, "all", json_boolean(h->all));
    json_object_set_new(o, "total_instances", u64_json(h->total_instances));
    json_object_set_new(o, "total_bytes", u64_json(h->total_bytes));
    json_object_set_new(o, "classes_total",
                        u64_json(h->classes_total > h->n ? h->classes_total : h->n));
    json_object_set_new(o, "undercounted", u64_json(h->undercounted));
    json_object_set_new(o, "cut", json_boolean(n < h->n || jp_heap_histo_is_cut(h)));
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const jp_heap_class *c = &h->classes[i];
        json_t *r = json_object();
        json_object_set_new(r, "name", str_json(c->name));
        json_object_set_new(r, "module", str_json(c->module));
        json_object_set_new(r, "instances", u64_json(c->instances));
        json_object_set_new(r, "bytes", u64_json(c->bytes));
        json_array_append_new(a, r);
    }
    json_object_set_new(o, "classes", a);
    return o;
}

json_t *jp_heap_growth_json(const jp_heap_growth *g, size_t top)
{
    size_t n = top && top < g->n ? top : g->n;
    json_t *o = json_object();
    json_object_set_new(o, "from_ns", json_integer(g->from_ns));
    json_object_set_new(o, "to_ns", json_integer(g->to_ns));
    json_object_set_new(o, "span_ns", json_integer(g->span_ns));
    json_object_set_new(o, "histograms", json_integer(g->histograms));
    json_object_set_new(o, "approximate", json_boolean(g->approximate));
    json_object_set_new(o, "total_instances_delta", json_integer(g->total_instances_delta));
    json_object_set_new(o, "total_bytes_delta", json_integer(g->total_bytes_delta));
    json_object_set_new(o, "total_bytes_per_min", json_real(g->total_bytes_per_min));
    json_object_set_new(o, "classes_total", u64_json(g->n));
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) {
        const jp_heap_growth_row *r = &g->rows[i];
        json_t *j = json_object();
        json_object_set_new(j, "name", str_json(r->name));
        json_object_set_new(j, "module", str_json(r->module));
        json_object_set_new(j, "instances_from", u64_json(r->instances_from));
        json_object_set_new(j, "instances_to", u64_json(r->instances_to));
        json_object_set_new(j, "bytes_from", u64_json(r->bytes_from));
        json_object_set_new(j, "bytes_to", u64_json(r->bytes_to));
        json_object_set_new(j, "instances_delta", json_integer(r->instances_delta));
        json_object_set_new(j, "bytes_delta", json_integer(r->bytes_delta));
        json_object_set_new(j, "instances_per_min", json_real(r->instances_per_min));
        json_object_set_new(j, "bytes_per_min", json_real(r->bytes_per_min));
        json_array_append_new(a, j);
    }
    json_object_set_new(o, "classes", a);
    return o;
}

/* ---- decoding ---- */

typedef struct hdec {
    char *why;
    size_t len;
    char at[32]; /* "" or "classes[12]." */
} hdec;

static bool hfail(hdec *d, const char *key, const char *what)
{
    snprintf(d->why, d->len, "%s%s: %s", d->at, key, what);
    return false;
}

static bool hint(hdec *d, const json_t *o, const char *key, int64_t *out)
{
    const json_t *v = json_object_get(o, key);
    *out = 0;
    if (!v)
        return hfail(d, key, "required integer is missing");
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return hfail(d, key, "must be an integer >= 0");
    *out = json_integer_value(v);
    return true;
}

static bool hu64(hdec *d, const json_t *o, const char *key, uint64_t *out)
{
    int64_t v;
    bool ok = hint(d, o, key, &v);
    *out = (uint64_t)v;
    return ok;
}

static bool hname(hdec *d, const json_t *o, const char *key, bool empty_ok, const char **out)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return hfail(d, key, "must be a string");
    size_t n = json_string_length(v);
    *out = json_string_value(v);
    if (n > JP_HEAP_NAME_MAX || strlen(*out) != n)
        return hfail(d, key, "longer than 1024 bytes or holds a NUL");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)(*out)[i] < 0x20 || (*out)[i] == 0x7f)
            return hfail(d, key, "holds a control character");
    if (!n && !empty_ok)
        return hfail(d, key, "must not be empty");
    return true;
}

static bool dec_classes(hdec *d, const json_t *a, jp_heap_histo *h, size_t max)
{
    if (!json_is_array(a))
        return hfail(d, "classes", "must be an array");
    if (json_array_size(a) > max || json_array_size(a) > JP_HEAP_MAX_CLASSES)
        return hfail(d, "classes", "more classes than allowed");
    uint64_t si = 0, sb = 0;
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *c = json_array_get(a, i);
        snprintf(d->at, sizeof d->at, "classes[%zu].", i);
        const char *name, *module;
        uint64_t inst, bytes;
        if (!json_is_object(c))
            return hfail(d, "", "must be an object");
        if (!hname(d, c, "name", false, &name) || !hname(d, c, "module", true, &module) ||
            !hu64(d, c, "instances", &inst) || !hu64(d, c, "bytes", &bytes))
            return false;
        if (si > UINT64_MAX - inst || sb > UINT64_MAX - bytes)
            return hfail(d, "bytes", "the classes add up to more than 2^64");
        si += inst;
        sb += bytes;
        jp_heap_histo_add(h, name, strlen(name), module, strlen(module), inst, bytes);
    }
    d->at[0] = '\0';
    if (si > h->total_instances || sb > h->total_bytes)
        return hfail(d, "total_bytes", "smaller than what the classes add up to");
    return true;
}

static bool hsigned(hdec *d, const json_t *o, const char *key, int64_t *out)
{
    const json_t *v = json_object_get(o, key);
    *out = 0;
    if (!json_is_integer(v))
        return hfail(d, key, "must be an integer");
    *out = json_integer_value(v);
    return true;
}

static bool dec_growth_row(hdec *d, const json_t *c, jp_heap_growth_row *r, jp_heap_histo *names)
{
    const char *name, *module;
    if (!json_is_object(c))
        return hfail(d, "", "must be an object");
    if (!hname(d, c, "name", false, &name) || !hname(d, c, "module", true, &module) ||
        !hu64(d, c, "instances_from", &r->instances_from) ||
        !hu64(d, c, "instances_to", &r->instances_to) ||
        !hu64(d, c, "bytes_from", &r->bytes_from) || !hu64(d, c, "bytes_to", &r->bytes_to))
        return false;
    jp_heap_histo_add(names, name, strlen(name), module, strlen(module), r->instances_to,
                      r->bytes_to);
    r->name = names->classes[names->n - 1].name;
    r->module = names->classes[names->n - 1].module;
    r->instances_delta = (int64_t)(r->instances_to - r->instances_from);
    r->bytes_delta = (int64_t)(r->bytes_to - r->bytes_from);
    return true;
}

bool jp_heap_growth_from_json(const json_t *o, jp_heap_growth *g, jp_heap_histo *names,
                              size_t max_rows, char *why, size_t len)
{
    hdec d = {why, len, ""};
    jp_heap_growth_cleanup(g);
    jp_heap_histo_cleanup(names);
    int64_t hist = 0;
    const json_t *a = json_object_get(o, "classes");
    const json_t *approx = json_object_get(o, "approximate");
    bool ok = json_is_object(o) && hint(&d, o, "from_ns", &g->from_ns) &&
              hint(&d, o, "to_ns", &g->to_ns) && hint(&d, o, "span_ns", &g->span_ns) &&
              hint(&d, o, "histograms", &hist) &&
              hsigned(&d, o, "total_instances_delta", &g->total_instances_delta) &&
              hsigned(&d, o, "total_bytes_delta", &g->total_bytes_delta) &&
              (json_is_boolean(approx) || hfail(&d, "approximate", "must be true or false")) &&
              (json_is_array(a) || hfail(&d, "classes", "must be an array")) &&
              (json_array_size(a) <= max_rows || hfail(&d, "classes", "more rows than allowed"));
    if (!json_is_object(o))
        hfail(&d, "growth", "must be an object");
    if (ok) {
        g->histograms = hist > UINT32_MAX ? UINT32_MAX : (uint32_t)hist;
        g->approximate = json_is_true(approx);
        g->rows = jp_xcalloc(json_array_size(a) + 1, sizeof *g->rows);
        for (size_t i = 0; ok && i < json_array_size(a); i++) {
            snprintf(d.at, sizeof d.at, "classes[%zu].", i);
            ok = dec_growth_row(&d, json_array_get(a, i), &g->rows[g->n], names);
            g->n += ok;
        }
    }
    if (!ok) {
        jp_heap_growth_cleanup(g);
        jp_heap_histo_cleanup(names);
        return false;
    }
    double per = g->span_ns > 0 ? 60e9 / (double)g->span_ns : 0.0;
    for (size_t i = 0; i < g->n; i++) {
        g->rows[i].instances_per_min = (double)g->rows[i].instances_delta * per;
        g->rows[i].bytes_per_min = (double)g->rows[i].bytes_delta * per;
    }
    g->total_bytes_per_min = (double)g->total_bytes_delta * per;
    return true;
}

bool jp_heap_histo_from_json(const json_t *o, jp_heap_histo *h, size_t max_classes, char *why,
                             size_t len)
{
    hdec d = {why, len, ""};
    jp_heap_histo_cleanup(h);
    if (!json_is_object(o))
        return hfail(&d, "histogram", "must be an object");
    const json_t *all = json_object_get(o, "all");
    bool ok = hint(&d, o, "time_ns", &h->time_ns) && hint(&d, o, "took_ns", &h->took_ns) &&
              hu64(&d, o, "total_instances", &h->total_instances) &&
              hu64(&d, o, "total_bytes", &h->total_bytes) &&
              hu64(&d, o, "classes_total", &h->classes_total) &&
              hu64(&d, o, "undercounted", &h->undercounted) &&
              (json_is_boolean(all) || hfail(&d, "all", "must be true or false")) &&
              dec_classes(&d, json_object_get(o, "classes"), h, max_classes);
    if (ok && h->classes_total < h->n)
        ok = hfail(&d, "classes_total", "smaller than the classes listed");
    if (!ok) {
        jp_heap_histo_cleanup(h);
        return false;
    }
    h->all = json_is_true(all);
    return true;
}
