/* api_heap.c - GET /api/v1/heap: per pod of a service, the latest class
 * histogram the agent took in the range (jprof.io/heap-histogram) and the
 * growth from the first one in the range to it (model/heap.h), in the JSON
 * shapes of wire/heap_json.h. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/heap.h"
#include "server/api_int.h"
#include "wire/heap_json.h"

/* Pods one answer holds (two histograms of at most JP_BATCH_HEAP_CLASSES
 * classes each): past it the answer is partial. */
#define API_HEAP_MAX_PODS 256

typedef struct api_heap_pod {
    jp_batch_target target;
    jp_heap_histo latest, first; /* the store delivers newest first */
    uint64_t n;
} api_heap_pod;

typedef struct api_heap_list {
    api_heap_pod *pods;
    size_t n, cap;
    uint64_t damaged;
    bool cut;
} api_heap_list;

static api_heap_pod *pod_of(api_heap_list *l, const jp_batch_target *t)
{
    for (size_t i = 0; i < l->n; i++) {
        const jp_batch_target *p = &l->pods[i].target;
        if (!strcmp(p->ns ? p->ns : "", t->ns ? t->ns : "") &&
            !strcmp(p->service ? p->service : "", t->service ? t->service : "") &&
            !strcmp(p->pod ? p->pod : "", t->pod ? t->pod : "") && p->pid == t->pid &&
            p->jvm_start_ns == t->jvm_start_ns)
            return &l->pods[i];
    }
    if (l->n >= API_HEAP_MAX_PODS) {
        l->cut = true;
        return NULL;
    }
    l->pods = jp_xgrow(l->pods, &l->cap, l->n + 1, sizeof *l->pods);
    api_heap_pod *p = &l->pods[l->n++];
    memset(p, 0, sizeof *p);
    jp_batch_target_copy(&p->target, t);
    return p;
}

static bool api_heap_cb(const store_doc_row *row, void *ctx)
{
    api_heap_list *l = ctx;
    json_t *j = json_loadb(row->json, row->json_len, 0, NULL);
    jp_heap_histo h;
    jp_heap_histo_init(&h);
    char why[200];
    if (!j || !jp_heap_histo_from_json(json_object_get(j, "histogram"), &h, JP_BATCH_HEAP_CLASSES,
                                       why, sizeof why)) {
        l->damaged++;
        json_decref(j);
        return true;
    }
    json_decref(j);
    api_heap_pod *p = pod_of(l, row->target);
    if (p) {
        /* newest first: the first row is the latest, every later one the
         * first histogram so far */
        jp_heap_histo_move(p->n ? &p->first : &p->latest, &h);
        p->n++;
    }
    jp_heap_histo_cleanup(&h);
    return true;
}

static int pod_cmp(const void *a, const void *b)
{
    const api_heap_pod *x = a, *y = b;
    int c = strcmp(x->target.pod ? x->target.pod : "", y->target.pod ? y->target.pod : "");
    return c ? c
             : (x->target.jvm_start_ns > y->target.jvm_start_ns) -
                   (x->target.jvm_start_ns < y->target.jvm_start_ns);
}

static void dump(jp_strbuf *b, json_t *j)
{
    char *t = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    jp_strbuf_puts(b, t ? t : "null");
    free(t);
}

static void pod_json(jp_strbuf *b, api_heap_pod *p, size_t top)
{
    jp_strbuf_puts(b, "{\"target\":");
    api_target_json(b, &p->target);
    jp_strbuf_printf(b, ",\"histograms\":%llu,\"latest\":", (unsigned long long)p->n);
    dump(b, jp_heap_histo_json(&p->latest, top));
    jp_strbuf_puts(b, ",\"growth\":");
    if (p->n >= 2) {
        jp_heap_growth g;
        jp_heap_growth_init(&g);
        jp_heap_growth_compute(&p->first, &p->latest, &g);
        g.histograms = (uint32_t)(p->n > UINT32_MAX ? UINT32_MAX : p->n);
        dump(b, jp_heap_growth_json(&g, top));
        jp_heap_growth_cleanup(&g);
    } else {
        jp_strbuf_puts(b, "null");
    }
    jp_strbuf_putc(b, '}');
}

void api_heap(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long top;
    if (!api_parse(r, o, &q, API_NEED_NS | API_NEED_SERVICE) ||
        !api_limit(r, o, "top", 20, 1000, &top))
        return;
    store_query_info info;
    memset(&info, 0, sizeof info);
    jp_error e;
    jp_error_init(&e);
    api_heap_list l = {0};
    jp_err rc = r->s->st->ops->heaps(r->s->st, &q.f, &q.b, api_heap_cb, &l, &info, &e);
    if (rc) {
        api_store_error(o, rc, &e);
        goto out;
    }
    if (l.cut)
        store_info_partial(&info,
                           "more than %u pods with class histograms: the others are left out",
                           API_HEAP_MAX_PODS);
    if (l.damaged)
        store_info_partial(&info, "%llu stored class histograms could not be read",
                           (unsigned long long)l.damaged);
    if (l.n > 1)
        qsort(l.pods, l.n, sizeof *l.pods, pod_cmp);
    jp_strbuf *b = &o->body;
    jp_strbuf_puts(b, "{\"pods\":[");
    uint64_t histos = 0;
    for (size_t i = 0; i < l.n; i++) {
        if (i)
            jp_strbuf_putc(b, ',');
        pod_json(b, &l.pods[i], (size_t)top);
        histos += l.pods[i].n;
    }
    jp_strbuf_puts(b, "],\"pause_note\":\"" JP_HEAP_PAUSE_NOTE "\",\"meta\":{");
    jp_strbuf_printf(b, "\"histograms\":%llu,\"pods\":%zu,", (unsigned long long)histos, l.n);
    api_meta_common(b, &q, &info, t0);
    jp_strbuf_puts(b, "}}\n");
    o->status = 200;
out:
    for (size_t i = 0; i < l.n; i++) {
        jp_batch_target_cleanup(&l.pods[i].target);
        jp_heap_histo_cleanup(&l.pods[i].latest);
        jp_heap_histo_cleanup(&l.pods[i].first);
    }
    free(l.pods);
}
