/* api_gc.c - GET /api/v1/gc: the GC summary of a range, merged from the
 * per-window records the agents uploaded (model/gc.h), in the one JSON
 * shape of wire/gc_json.h, with pause points for a sparkline. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/gc.h"
#include "server/api_int.h"
#include "wire/gc_json.h"

/* Pause durations held for one answer (16 bytes each; a window keeps at
 * most 512): past it the answer is partial, the newest windows merged
 * (the store delivers newest first). */
#define API_GC_MAX_PAUSES (4u << 20)

typedef struct api_gc_list {
    jp_gc_merger m; /* windows are merged as they come */
    jp_gc_point *pts;
    size_t npts;
    size_t n;
    uint64_t damaged;
    bool cut;
    jp_u64map pods; /* targets seen */
} api_gc_list;

static bool api_gc_cb(const store_doc_row *row, void *ctx)
{
    api_gc_list *l = ctx;
    if (l->m.nv >= API_GC_MAX_PAUSES) {
        l->cut = true;
        return false;
    }
    json_t *j = json_loadb(row->json, row->json_len, 0, NULL);
    jp_gc_window w;
    char why[200];
    if (j && jp_gc_window_from_json(j, &w, why, sizeof why)) {
        jp_gc_merger_add(&l->m, &w);
        jp_gc_points_add(l->pts, l->npts, &w.s);
        l->n++;
        const jp_batch_target *t = row->target;
        char key[512];
        snprintf(key, sizeof key, "%s/%s/%s", t->ns ? t->ns : "", t->service ? t->service : "",
                 t->pod ? t->pod : "");
        bool ins;
        jp_u64map_upsert(&l->pods, jp_hash_bytes(key, strlen(key)), 1, &ins);
    } else {
        l->damaged++;
    }
    json_decref(j);
    return true;
}

void api_gc(srv_req *r, srv_resp *o)
{
    int64_t t0 = jp_time_mono_ns();
    api_q q;
    long npoints;
    if (!api_parse(r, o, &q, API_NEED_NS | API_NEED_SERVICE) ||
        !api_limit(r, o, "points", 60, 1000, &npoints))
        return;
    store_query_info info;
    memset(&info, 0, sizeof info);
    jp_error e;
    jp_error_init(&e);
    api_gc_list l = {.npts = (size_t)npoints};
    jp_u64map_init(&l.pods);
    jp_gc_merger_init(&l.m, q.f.from_ns, q.f.to_ns);
    l.pts = jp_xcalloc(l.npts, sizeof *l.pts);
    jp_gc_points_init(l.pts, l.npts, q.f.from_ns, q.f.to_ns);
    jp_err rc = r->s->st->ops->gc(r->s->st, &q.f, &q.b, api_gc_cb, &l, &info, &e);
    if (rc) {
        api_store_error(o, rc, &e);
        goto out;
    }
    if (l.cut)
        store_info_partial(&info,
                           "more than %u GC pauses kept in the range's windows: the newest "
                           "windows are merged",
                           API_GC_MAX_PAUSES);
    if (l.damaged)
        store_info_partial(&info, "%llu stored GC summaries could not be read",
                           (unsigned long long)l.damaged);
    jp_gc_summary s;
    bool exact;
    int64_t covered;
    jp_gc_merger_finish(&l.m, &s, &exact, &covered);
    json_t *g = jp_gc_summary_json(&s, l.n > 0, covered);
    json_t *p = jp_gc_points_json(l.pts, l.npts);
    char *gt = json_dumps(g, JSON_COMPACT), *pt = json_dumps(p, JSON_COMPACT);
    json_decref(g);
    json_decref(p);
    jp_strbuf *b = &o->body;
    jp_strbuf_printf(b, "{\"gc\":%s,\"points\":%s,\"meta\":{\"windows\":%zu,\"targets\":%zu,", gt,
                     pt, l.n, l.pods.count);
    jp_strbuf_printf(b, "\"covered_ns\":%lld,\"percentiles\":\"%s\",", (long long)covered,
                     exact ? "exact" : "estimated");
    free(gt);
    free(pt);
    info.windows_scanned = l.n;
    api_meta_common(b, &q, &info, t0);
    jp_strbuf_puts(b, "}}\n");
    o->status = 200;
out:
    free(l.m.v); /* after an error (finish frees it otherwise) */
    free(l.pts);
    jp_u64map_cleanup(&l.pods);
}
