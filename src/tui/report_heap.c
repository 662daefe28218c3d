/* report_heap.c - the Heap screen's lines and JSON (see report_heap.h). */
#include "tui/report_heap.h"

#include <stdio.h>
#include <string.h>

#include "base/timeutil.h"
#include "model/units.h"
#include "wire/heap_json.h"

void tui_heap_init(tui_heap *s)
{
    memset(s, 0, sizeof *s);
}

void tui_heap_cleanup(tui_heap *s)
{
    if (!s)
        return;
    jp_heap_histo_cleanup(&s->first);
    jp_heap_histo_cleanup(&s->latest);
    jp_heap_growth_cleanup(&s->growth);
    jp_heap_histo_cleanup(&s->names);
    tui_heap_init(s);
}

static void regrow(tui_heap *s)
{
    jp_heap_growth_cleanup(&s->growth);
    jp_heap_histo_cleanup(&s->names);
    if (s->count >= 2) {
        jp_heap_growth_compute(&s->first, &s->latest, &s->growth);
        s->growth.histograms = s->count;
    }
}

void tui_heap_add(tui_heap *s, jp_heap_histo *h)
{
    s->error[0] = '\0';
    if (s->count == 0) {
        /* the first histogram is kept as the base of the growth; the
         * latest is a copy of it until a second one comes */
        jp_heap_histo_move(&s->first, h);
        for (size_t i = 0; i < s->first.n; i++) {
            const jp_heap_class *c = &s->first.classes[i];
            jp_heap_histo_add(&s->latest, c->name, strlen(c->name), c->module, strlen(c->module),
                              c->instances, c->bytes);
        }
        jp_heap_histo *l = &s->latest, *f = &s->first;
        l->time_ns = f->time_ns;
        l->took_ns = f->took_ns;
        l->all = f->all;
        l->total_instances = f->total_instances;
        l->total_bytes = f->total_bytes;
        l->classes_total = f->classes_total;
        l->undercounted = f->undercounted;
    } else {
        jp_heap_histo_move(&s->latest, h);
    }
    s->count++;
    regrow(s);
}

void tui_heap_set_stored(tui_heap *s, jp_heap_histo *latest, jp_heap_growth *g,
                         jp_heap_histo *names, uint32_t count)
{
    s->error[0] = '\0';
    jp_heap_histo_cleanup(&s->first);
    jp_heap_histo_move(&s->latest, latest);
    jp_heap_growth_cleanup(&s->growth);
    s->growth = *g;
    jp_heap_growth_init(g);
    jp_heap_histo_move(&s->names, names);
    s->count = count;
}

static void signed_bytes(double v, char *buf, size_t len)
{
    char b[24];
    jp_format_bytes((uint64_t)(v < 0 ? -v : v), b, sizeof b);
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", b);
}

static void signed_count(double v, char *buf, size_t len)
{
    char b[24];
    jp_format_count((uint64_t)(v < 0 ? -v + 0.5 : v + 0.5), b, sizeof b);
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", b);
}

static void class_name(const char *name, const char *module, char *buf, size_t len)
{
    if (*module)
        snprintf(buf, len, "%s (%s)", name, module);
    else
        snprintf(buf, len, "%s", name);
}

static void header(const tui_heap *s, tui_lines *ls)
{
    const jp_heap_histo *h = &s->latest;
    char when[40], took[32], bytes[32], objs[32];
    jp_rfc3339_format(h->time_ns, when, sizeof when);
    jp_format_ns((uint64_t)h->took_ns, took, sizeof took);
    jp_format_bytes(h->total_bytes, bytes, sizeof bytes);
    jp_format_count(h->total_instances, objs, sizeof objs);
    tui_lines_add(ls, TUI_STYLE_TITLE, 0,
                  "HEAP  class histogram of %s at %s: %s in %s objects of %llu classes",
                  h->all ? "every object (-all)" : "live objects", when, bytes, objs,
                  (unsigned long long)(h->classes_total > h->n ? h->classes_total : h->n));
    tui_lines_add(ls, TUI_STYLE_WARN, 0, "      it paused the JVM %s: %s", took,
                  JP_HEAP_PAUSE_NOTE);
    if (h->undercounted)
        tui_lines_add(ls, TUI_STYLE_WARN, 0,
                      "      the JVM ran out of C heap and did not count %llu objects",
                      (unsigned long long)h->undercounted);
}

static void growth(const tui_heap *s, size_t top, tui_lines *ls)
{
    const jp_heap_growth *g = &s->growth;
    char span[32], rate[40];
    jp_format_ns((uint64_t)(g->span_ns > 0 ? g->span_ns : 0), span, sizeof span);
    signed_bytes(g->total_bytes_per_min, rate, sizeof rate);
    tui_lines_add(ls, TUI_STYLE_TITLE, 0,
                  "GROWTH over %s (%u histograms): %s/min on the whole heap%s", span, g->histograms,
                  rate, g->approximate ? " (approximate: only the biggest classes were kept)" : "");
    tui_lines_add(ls, TUI_STYLE_TABLEHEAD, 0, "%12s %13s %12s %11s  %s", "BYTES/MIN", "OBJECTS/MIN",
                  "BYTES GROWN", "BYTES NOW", "CLASS");
    size_t shown = 0, same = 0;
    for (size_t i = 0; i < g->n && shown < top; i++) {
        const jp_heap_growth_row *r = &g->rows[i];
        if (!r->bytes_delta && !r->instances_delta) {
            same++;
            continue;
        }
        shown++;
        char bpm[32], ipm[32], bd[32], now[32], name[1100];
        signed_bytes(r->bytes_per_min, bpm, sizeof bpm);
        signed_count(r->instances_per_min, ipm, sizeof ipm);
        signed_bytes((double)r->bytes_delta, bd, sizeof bd);
        jp_format_bytes(r->bytes_to, now, sizeof now);
        class_name(r->name, r->module, name, sizeof name);
        tui_lines_add(ls, r->bytes_delta > 0 ? TUI_STYLE_NORMAL : TUI_STYLE_DIM, 0,
                      "%12s %13s %12s %11s  %s", bpm, ipm, bd, now, name);
    }
    if (!shown)
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "no class grew or shrank");
    else if (same)
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "(classes that did not change are left out)");
}

static void biggest(const tui_heap *s, size_t top, tui_lines *ls)
{
    const jp_heap_histo *h = &s->latest;
    tui_lines_add(ls, TUI_STYLE_TITLE, 0, "BIGGEST classes of the latest histogram");
    tui_lines_add(ls, TUI_STYLE_TABLEHEAD, 0, "%12s %13s  %s", "BYTES", "OBJECTS", "CLASS");
    for (size_t i = 0; i < h->n && i < top; i++) {
        const jp_heap_class *c = &h->classes[i];
        char b[32], n[32], name[1100];
        jp_format_bytes(c->bytes, b, sizeof b);
        jp_format_count(c->instances, n, sizeof n);
        class_name(c->name, c->module, name, sizeof name);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%12s %13s  %s", b, n, name);
    }
}

void tui_report_heap(const tui_heap *s, size_t top, const char *how, tui_lines *ls)
{
    if (s->error[0])
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "%s", s->error);
    if (!s->count) {
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "No class histogram yet. %s", how);
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "Why not by itself: %s.", JP_HEAP_PAUSE_NOTE);
        return;
    }
    header(s, ls);
    if (*how)
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "%s", how);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    if (s->count >= 2)
        growth(s, top, ls);
    else
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "What grows shows from the second histogram on.");
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    biggest(s, top, ls);
}

json_t *tui_heap_json(const tui_heap *s, size_t top)
{
    json_t *o = json_object();
    json_object_set_new(o, "histogram",
                        s->count ? jp_heap_histo_json(&s->latest, top) : json_null());
    json_object_set_new(o, "growth",
                        s->count >= 2 ? jp_heap_growth_json(&s->growth, top) : json_null());
    json_object_set_new(o, "histograms", json_integer(s->count));
    json_object_set_new(o, "pause_note", json_string(JP_HEAP_PAUSE_NOTE));
    return o;
}
