#include "wire/snapshot_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/xalloc.h"
#include "base/timeutil.h"
#include "model/analyze.h"
#include "model/busy.h"

void jp_snapjson_opts_init(jp_snapjson_opts *o)
{
    o->max_frames = 0;
    o->include_vm = 1;
    o->cpu = NULL;
    o->busy = NULL;
    o->now_ns = 0;
    o->busy_limit = 20;
}

static json_t *num_or_null(int64_t v)
{
    return v < 0 ? json_null() : json_integer((json_int_t)v);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static json_t *time_json(int64_t ns)
{
    if (ns <= 0)
        return json_null();
    char buf[64];
    jp_rfc3339_format(ns, buf, sizeof buf);
    return json_string(buf);
}

static json_t *frame_text(const jp_snap_frame *f)
{
    char buf[2048];
    jp_snap_frame_format(f, buf, sizeof buf);
    return json_string(buf);
}

static json_t *lock_json(const jp_thread *t, const jp_lock_ref *l)
{
    char id[32];
    snprintf(id, sizeof id, "%llx", (unsigned long long)l->id);
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(id));
    json_object_set_new(o, "class", json_string(l->class_name ? l->class_name : ""));
    json_object_set_new(o, "kind",
                        json_string(l->kind == JP_LOCK_MONITOR ? "monitor" : "synchronizer"));
    bool has = t && l->frame >= 0 && (size_t)l->frame < t->nframes;
    json_object_set_new(o, "frame", has ? frame_text(&t->frames[l->frame]) : json_null());
    return o;
}

static json_t *thread_ref(const jp_snapshot *s, long i)
{
    if (i < 0)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "id", num_or_null(s->threads[i].id));
    json_object_set_new(o, "name", json_string(s->threads[i].name));
    return o;
}

static json_t *stack_json(const jp_thread *t, const jp_snapjson_opts *o)
{
    json_t *a = json_array();
    size_t n = o->max_frames && o->max_frames < t->nframes ? o->max_frames : t->nframes;
    for (size_t k = 0; k < n; k++)
        json_array_append_new(a, frame_text(&t->frames[k]));
    return a;
}

static json_t *waiting_json(const jp_snapshot *s, const jp_thread *t)
{
    if (t->wait_kind == JP_WAIT_NONE)
        return json_null();
    json_t *w = json_object();
    json_object_set_new(w, "kind", json_string(jp_wait_kind_name(t->wait_kind)));
    json_object_set_new(w, "lock", lock_json(t, &t->wait_lock));
    json_object_set_new(w, "owner", thread_ref(s, jp_snapshot_find_id(s, t->wait_owner_id)));
    return w;
}

static json_t *pct_or_null(double v)
{
    return v < 0 ? json_null() : json_real(v);
}

/* One thread; r is its row of the busy ranking (NULL for VM-internal
 * threads, which rank by the snapshot alone). */
static json_t *thread_json(const jp_snapshot *s, const jp_busy_thread *b, const jp_busy_row *r,
                           const jp_snapjson_opts *o)
{
    const jp_thread *t = &s->threads[b->thread];
    json_t *j = json_object();
    json_object_set_new(j, "id", num_or_null(t->id));
    json_object_set_new(j, "native_id", num_or_null(t->native_id));
    json_object_set_new(j, "name", json_string(t->name));
    json_object_set_new(j, "daemon", json_boolean(t->daemon));
    json_object_set_new(j, "state", json_string(jp_thread_state_name(t->state)));
    json_object_set_new(j, "state_detail", str_or_null(t->state_detail));
    json_object_set_new(j, "cpu_ns", num_or_null(t->cpu_ns));
    json_object_set_new(j, "cpu_pct", pct_or_null(r ? r->cpu_pct : b->cpu_pct));
    json_object_set_new(j, "cpu_confidence", json_string(jp_cpu_confidence_name(b->confidence)));
    json_object_set_new(j, "snapshot_cpu_pct", pct_or_null(b->cpu_pct));
    json_object_set_new(j, "profile_cpu_pct", pct_or_null(r ? r->profile_pct : -1));
    json_object_set_new(j, "evidence",
                        json_string(jp_busy_evidence_name(r ? r->evidence : JP_BUSY_NONE)));
    json_object_set_new(j, "blocked_count", num_or_null(t->blocked_count));
    json_object_set_new(j, "waited_count", num_or_null(t->waited_count));
    json_object_set_new(j, "waiting", waiting_json(s, t));
    json_t *held = json_array();
    for (size_t k = 0; k < t->nheld; k++)
        json_array_append_new(held, lock_json(t, &t->held[k]));
    json_object_set_new(j, "held", held);
    json_object_set_new(j, "stack", stack_json(t, o));
    return j;
}

static json_t *locks_json(const jp_snapshot *s)
{
    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    json_t *a = json_array();
    /* contended locks sort first; idle waiting is summarised by idle_json */
    for (size_t i = 0; i < lg.ncontended; i++) {
        const jp_lock_group *g = &lg.items[i];
        json_t *o = json_object();
        json_object_set_new(o, "contended", json_true());
        const jp_thread *holder = g->owner >= 0 ? &s->threads[g->owner] : NULL;
        jp_lock_ref l = g->lock;
        l.frame = -1;
        for (size_t k = 0; holder && k < holder->nheld; k++)
            if (holder->held[k].id == l.id)
                l.frame = holder->held[k].frame;
        json_object_set_new(o, "lock", lock_json(holder, &l));
        json_object_set_new(o, "owner", thread_ref(s, g->owner));
        json_object_set_new(o, "owner_blocks", json_integer((json_int_t)g->owner_blocks));
        json_t *chain = json_array();
        for (size_t k = 0; k < g->nchain; k++)
            json_array_append_new(chain, json_string(s->threads[g->owner_chain[k]].name));
        json_object_set_new(o, "owner_chain", chain);
        json_object_set_new(o, "chain_cycles", json_boolean(g->chain_cycles));
        json_t *w = json_array();
        for (size_t k = 0; k < g->nwaiters; k++) {
            const jp_thread *t = &s->threads[g->waiters[k]];
            json_t *wt = thread_ref(s, (long)g->waiters[k]);
            json_object_set_new(wt, "state", json_string(jp_thread_state_name(t->state)));
            json_object_set_new(wt, "kind", json_string(jp_wait_kind_name(t->wait_kind)));
            json_object_set_new(wt, "contends", json_boolean(k < g->ncontending));
            json_array_append_new(w, wt);
        }
        json_object_set_new(o, "waiters", w);
        json_array_append_new(a, o);
    }
    jp_lock_group_list_cleanup(&lg);
    return a;
}

/* Idle threads, one entry per pool and place: what the Locks screen no
 * longer counts. */
static json_t *idle_json(const jp_snapshot *s)
{
    jp_idle_list il;
    jp_analyze_idle(s, &il);
    json_t *a = json_array();
    for (size_t i = 0; i < il.count; i++) {
        const jp_idle_pool *p = &il.items[i];
        const jp_thread *first = &s->threads[p->threads[0]];
        json_t *names = json_array();
        for (size_t k = 0; k < p->count; k++)
            json_array_append_new(names, json_string(s->threads[p->threads[k]].name));
        json_t *o = json_object();
        json_object_set_new(o, "pool", json_string(p->pool));
        json_object_set_new(o, "count", json_integer((json_int_t)p->count));
        json_object_set_new(o, "where", json_string(p->where));
        json_object_set_new(o, "frame",
                            p->frame >= 0 ? frame_text(&first->frames[p->frame]) : json_null());
        json_object_set_new(o, "state", json_string(jp_thread_state_name(p->state)));
        json_object_set_new(o, "threads", names);
        json_array_append_new(a, o);
    }
    jp_idle_list_cleanup(&il);
    return a;
}

/* {"locks", "threads", "idle_threads"}: what every screen counts. */
static json_t *contention_json(const jp_snapshot *s)
{
    jp_lock_group_list lg;
    jp_analyze_locks(s, &lg);
    jp_idle_list il;
    jp_analyze_idle(s, &il);
    json_t *o = json_object();
    json_object_set_new(o, "locks", json_integer((json_int_t)lg.ncontended));
    json_object_set_new(o, "threads", json_integer((json_int_t)lg.contending_threads));
    json_object_set_new(o, "idle_threads", json_integer((json_int_t)il.nthreads));
    jp_idle_list_cleanup(&il);
    jp_lock_group_list_cleanup(&lg);
    return o;
}

json_t *jp_snapshot_idle_json(const jp_snapshot *s)
{
    return idle_json(s);
}

json_t *jp_snapshot_contention_json(const jp_snapshot *s)
{
    return contention_json(s);
}

static json_t *busy_window_json(const jp_busy_summary *b, int64_t now_ns)
{
    if (!b->have_profile)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "start", time_json(b->window_start_ns));
    json_object_set_new(o, "end", time_json(b->window_end_ns));
    json_object_set_new(o, "seconds",
                        json_real((double)(b->window_end_ns - b->window_start_ns) / 1e9));
    json_object_set_new(o, "age_seconds", json_real((double)(now_ns - b->window_end_ns) / 1e9));
    json_object_set_new(o, "windows", json_integer(b->windows));
    return o;
}

static json_t *busy_snapshot_json(const jp_busy_summary *b, int64_t now_ns)
{
    if (b->snapshot_ns <= 0)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "time", time_json(b->snapshot_ns));
    json_object_set_new(o, "age_seconds", json_real((double)(now_ns - b->snapshot_ns) / 1e9));
    json_object_set_new(o, "interval_seconds",
                        b->snapshot_interval_ns > 0
                            ? json_real((double)b->snapshot_interval_ns / 1e9)
                            : json_null());
    return o;
}

static json_t *busy_row_json(const jp_busy_summary *b, const jp_busy_row *r, const jp_snapshot *cur,
                             int64_t now_ns, size_t frames)
{
    const jp_thread *t = r->thread >= 0 && cur ? &cur->threads[r->thread] : NULL;
    char why[512];
    jp_busy_row_describe(b, r, cur, now_ns, why, sizeof why);
    json_t *top = json_array();
    for (size_t k = 0; t && k < t->nframes && k < frames; k++)
        json_array_append_new(top, frame_text(&t->frames[k]));
    json_t *o = json_object();
    json_object_set_new(o, "id", t ? num_or_null(t->id) : json_null());
    json_object_set_new(o, "name", json_string(r->name));
    json_object_set_new(o, "state", t ? json_string(jp_thread_state_name(t->state)) : json_null());
    json_object_set_new(o, "cpu_pct", pct_or_null(r->cpu_pct));
    json_object_set_new(o, "profile_cpu_pct", pct_or_null(r->profile_pct));
    json_object_set_new(o, "snapshot_cpu_pct", pct_or_null(r->snapshot_pct));
    json_object_set_new(o, "cpu_ns", t ? num_or_null(t->cpu_ns) : json_null());
    json_object_set_new(o, "evidence", json_string(jp_busy_evidence_name(r->evidence)));
    json_object_set_new(o, "why", json_string(why));
    json_object_set_new(o, "stack_top", top);
    return o;
}

json_t *jp_busy_json(const jp_busy_summary *b, const jp_snapshot *cur, int64_t now_ns, size_t limit,
                     size_t frames)
{
    char text[512];
    jp_busy_summary_describe(b, now_ns, text, sizeof text);
    const char *ranked = b->profile_first ? "profile" : b->have_snapshot ? "snapshot" : "state";
    json_t *o = json_object();
    json_object_set_new(o, "confidence", json_string(jp_busy_evidence_name(b->evidence)));
    json_object_set_new(o, "ranked_by", json_string(ranked));
    json_object_set_new(o, "description", json_string(text));
    json_object_set_new(o, "window", busy_window_json(b, now_ns));
    json_object_set_new(o, "snapshot", busy_snapshot_json(b, now_ns));
    json_t *list = json_array();
    for (size_t i = 0; i < b->count && i < limit; i++)
        json_array_append_new(list, busy_row_json(b, &b->items[i], cur, now_ns, frames));
    json_object_set_new(o, "threads", list);
    json_object_set_new(o, "truncated", json_boolean(b->count > limit));
    return o;
}

static json_t *deadlocks_json(const jp_snapshot *s, const jp_snapjson_opts *opts)
{
    jp_deadlock_list dl;
    jp_analyze_deadlocks(s, &dl);
    json_t *a = json_array();
    for (size_t i = 0; i < dl.count; i++) {
        json_t *d = json_object(), *members = json_array();
        json_object_set_new(d, "jvm_confirmed", json_boolean(dl.items[i].jvm_confirmed));
        json_object_set_new(d, "mixed", json_boolean(dl.items[i].mixed));
        for (size_t k = 0; k < dl.items[i].count; k++) {
            const jp_deadlock_member *m = &dl.items[i].members[k];
            const jp_thread *t = &s->threads[m->thread];
            json_t *o = thread_ref(s, (long)m->thread);
            json_object_set_new(o, "waits_for", lock_json(t, &m->waits_for));
            json_object_set_new(o, "holds", lock_json(t, &m->holds));
            json_object_set_new(o, "stack", stack_json(t, opts));
            json_array_append_new(members, o);
        }
        json_object_set_new(d, "threads", members);
        json_array_append_new(a, d);
    }
    jp_deadlock_list_cleanup(&dl);
    return a;
}

static json_t *target_json(const jp_snapjson_target *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "pid", t && t->pid > 0 ? json_integer(t->pid) : json_null());
    json_object_set_new(o, "main_class", str_or_null(t ? t->main_class : NULL));
    json_object_set_new(o, "user", str_or_null(t ? t->user : NULL));
    json_object_set_new(o, "jvm", str_or_null(t ? t->jvm_version : NULL));
    json_object_set_new(o, "start", time_json(t ? t->start_ns : 0));
    return o;
}

/* Threads in the busy ranking's order, then the VM-internal ones (which
 * it leaves out) in the snapshot's. */
static json_t *threads_json(const jp_snapshot *cur, const jp_busy_list *bl,
                            const jp_busy_summary *rank, const jp_snapjson_opts *o)
{
    long *at = jp_xcalloc(cur->count ? cur->count : 1, sizeof *at);
    for (size_t i = 0; i < bl->count; i++)
        at[bl->items[i].thread] = (long)i;
    json_t *a = json_array();
    for (size_t i = 0; i < rank->count; i++)
        if (rank->items[i].thread >= 0)
            json_array_append_new(
                a, thread_json(cur, &bl->items[at[rank->items[i].thread]], &rank->items[i], o));
    for (size_t i = 0; i < bl->count && o->include_vm; i++)
        if (cur->threads[bl->items[i].thread].vm_internal)
            json_array_append_new(a, thread_json(cur, &bl->items[i], NULL, o));
    free(at);
    return a;
}

/* The process figures (model/snapshot.h); null where unknown. */
static json_t *process_json(const jp_snapshot *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "cpu_pct",
                        s->proc_cpu_pct >= 0 ? json_real(s->proc_cpu_pct) : json_null());
    json_object_set_new(o, "cpu_ns",
                        s->proc_cpu_ns >= 0 ? json_integer(s->proc_cpu_ns) : json_null());
    json_object_set_new(o, "heap_used",
                        s->heap_used >= 0 ? json_integer(s->heap_used) : json_null());
    json_object_set_new(o, "heap_committed",
                        s->heap_committed >= 0 ? json_integer(s->heap_committed) : json_null());
    return o;
}

json_t *jp_snapshot_json(const jp_snapshot *cur, const jp_snapshot *prev,
                         const jp_snapjson_target *target, const jp_snapjson_opts *o)
{
    jp_snapjson_opts dflt;
    if (!o) {
        jp_snapjson_opts_init(&dflt);
        o = &dflt;
    }
    json_t *root = json_object();
    json_object_set_new(root, "target", target_json(target));
    json_object_set_new(root, "source", json_string(cur->source));
    json_object_set_new(root, "taken_at", time_json(cur->taken_ns));
    jp_busy_list bl;
    if (o->busy) {
        /* the caller's snapshot evidence (a stored snapshot carries its own) */
        bl = *o->busy;
        bl.items = jp_xcalloc(bl.count ? bl.count : 1, sizeof *bl.items);
        if (bl.count)
            memcpy(bl.items, o->busy->items, bl.count * sizeof *bl.items);
    } else {
        jp_analyze_busy(prev, cur, &bl);
    }
    jp_busy_summary rank;
    jp_busy_rank(cur, &bl, o->cpu, &rank);
    json_object_set_new(root, "interval_ms",
                        (prev || o->busy) && bl.interval_ns > 0
                            ? json_integer(bl.interval_ns / 1000000)
                            : json_null());
    json_object_set_new(root, "truncated", json_boolean(cur->truncated));
    json_object_set_new(root, "process", process_json(cur));
    size_t counts[JP_TSTATE_COUNT];
    jp_snapshot_count_states(cur, counts);
    json_t *states = json_object();
    for (int i = 0; i < JP_TSTATE_COUNT; i++)
        if (counts[i])
            json_object_set_new(states, jp_thread_state_name((jp_thread_state)i),
                                json_integer((json_int_t)counts[i]));
    json_object_set_new(root, "states", states);
    json_object_set_new(root, "threads", threads_json(cur, &bl, &rank, o));
    int64_t now = o->now_ns > 0 ? o->now_ns : cur->taken_ns;
    json_object_set_new(root, "busy", jp_busy_json(&rank, cur, now, o->busy_limit, 5));
    jp_busy_summary_cleanup(&rank);
    jp_busy_list_cleanup(&bl);
    json_object_set_new(root, "contention", contention_json(cur));
    json_object_set_new(root, "locks", locks_json(cur));
    json_object_set_new(root, "idle", idle_json(cur));
    json_object_set_new(root, "deadlocks", deadlocks_json(cur, o));
    return root;
}

char *jp_snapshot_json_text(const jp_snapshot *cur, const jp_snapshot *prev,
                            const jp_snapjson_target *target, const jp_snapjson_opts *o, int indent)
{
    json_t *j = jp_snapshot_json(cur, prev, target, o);
    size_t flags =
        JSON_PRESERVE_ORDER | (indent > 0 ? JSON_INDENT(indent > 8 ? 8 : indent) : JSON_COMPACT);
    char *text = json_dumps(j, flags);
    json_decref(j);
    if (!text) { /* only on allocation failure inside jansson */
        fprintf(stderr, "jprof: out of memory encoding JSON\n");
        abort();
    }
    return text;
}

/* ---- decoding (the server reads back what agents sent) ---- */

static int64_t dec_int(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? (int64_t)json_integer_value(v) : -1;
}

static const char *dec_str(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* "pkg.Class.method(File.java:12)", as jp_snap_frame_format writes it. */
static void dec_frame(jp_snapshot *s, jp_snap_frame *f, const char *text)
{
    const char *paren = strchr(text, '(');
    size_t head = paren ? (size_t)(paren - text) : strlen(text);
    const char *dot = NULL;
    for (size_t i = 0; i < head; i++)
        if (text[i] == '.')
            dot = text + i;
    f->class_name = dot ? jp_snapshot_strndup(s, text, (size_t)(dot - text)) : "";
    f->method = dot ? jp_snapshot_strndup(s, dot + 1, (size_t)(text + head - dot - 1))
                    : jp_snapshot_strndup(s, text, head);
    f->file = NULL;
    f->line = -1;
    if (!paren)
        return;
    const char *in = paren + 1, *close = strchr(in, ')');
    size_t n = close ? (size_t)(close - in) : strlen(in);
    if (n == 13 && !strncmp(in, "Native Method", 13)) {
        f->line = -2;
    } else if (!(n == 14 && !strncmp(in, "Unknown Source", 14))) {
        const char *colon = memchr(in, ':', n);
        f->file = jp_snapshot_strndup(s, in, colon ? (size_t)(colon - in) : n);
        if (colon) {
            long line = strtol(colon + 1, NULL, 10);
            f->line = line >= 0 && line <= INT32_MAX ? (int32_t)line : -1;
        }
    }
}

/* The depth of the frame of t printed as `text`, or -1. */
static int32_t dec_frame_depth(const jp_thread *t, const char *text)
{
    char buf[2048];
    for (size_t k = 0; text && k < t->nframes; k++) {
        jp_snap_frame_format(&t->frames[k], buf, sizeof buf);
        if (!strcmp(buf, text))
            return (int32_t)k;
    }
    return -1;
}

/* A lock: {"id": hex, "class", "kind", "frame"} of this module, or the flat
 * form's text "Class@hex". Text without a hex id keeps identity by a hash of
 * the text (the same text is the same lock). t's stack is decoded already. */
static void dec_lock(jp_snapshot *s, const jp_thread *t, const json_t *v, jp_lock_ref *l)
{
    memset(l, 0, sizeof *l);
    l->frame = json_is_object(v) ? dec_frame_depth(t, dec_str(v, "frame")) : -1;
    const char *id = NULL, *cls = NULL;
    size_t clen = 0;
    if (json_is_object(v)) {
        id = dec_str(v, "id");
        cls = dec_str(v, "class");
        clen = cls ? strlen(cls) : 0;
        const char *kind = dec_str(v, "kind");
        l->kind = kind && !strcmp(kind, "synchronizer") ? JP_LOCK_SYNCHRONIZER : JP_LOCK_MONITOR;
    } else if (json_is_string(v)) {
        cls = json_string_value(v);
        const char *at = strrchr(cls, '@');
        clen = at ? (size_t)(at - cls) : strlen(cls);
        id = at ? at + 1 : NULL;
    }
    char *end = NULL;
    if (id && *id)
        l->id = strtoull(id, &end, 16);
    if (!id || !*id || *end) {
        const char *txt = json_is_string(v) ? json_string_value(v) : (cls ? cls : "?");
        l->id = jp_hash_bytes(txt, strlen(txt)) | 1; /* 0 means "no lock" */
        clen = strlen(txt);
        cls = txt;
    }
    l->class_name = jp_snapshot_strndup(s, cls ? cls : "?", cls ? clen : 1);
}

/* waiting {"kind", "lock", "owner"} (this module) or waiting_on + owner_id (flat). */
static void dec_waiting(jp_snapshot *s, const json_t *t, jp_thread *th)
{
    const json_t *w = json_object_get(t, "waiting");
    const json_t *lock = NULL;
    const char *kind = NULL;
    if (json_is_object(w)) {
        lock = json_object_get(w, "lock");
        kind = dec_str(w, "kind");
        const json_t *owner = json_object_get(w, "owner");
        th->wait_owner_id = json_is_object(owner) ? dec_int(owner, "id") : -1;
    } else {
        w = json_object_get(t, "waiting_on");
        lock = json_is_object(w) ? json_object_get(w, "lock") : w;
        kind = json_is_object(w) ? dec_str(w, "kind") : NULL;
        th->wait_owner_id = dec_int(t, "owner_id");
        if (th->wait_owner_id < 0 && json_is_object(w))
            th->wait_owner_id = dec_int(w, "owner_id");
    }
    if (!json_is_object(lock) && !json_is_string(lock))
        return;
    th->wait_kind = th->state == JP_TSTATE_BLOCKED ? JP_WAIT_ENTER : JP_WAIT_PARK;
    for (int k = JP_WAIT_ENTER; kind && k <= JP_WAIT_PARK; k++)
        if (!strcmp(kind, jp_wait_kind_name((jp_wait_kind)k)))
            th->wait_kind = (jp_wait_kind)k;
    dec_lock(s, th, lock, &th->wait_lock);
    if (th->wait_kind == JP_WAIT_PARK)
        th->wait_lock.kind = JP_LOCK_SYNCHRONIZER;
}

static void dec_thread(jp_snapshot *s, const json_t *t, jp_thread *th)
{
    th->id = json_is_integer(json_object_get(t, "id")) ? dec_int(t, "id") : -1;
    th->native_id = dec_int(t, "native_id");
    th->name = jp_snapshot_strdup(s, dec_str(t, "name") ? dec_str(t, "name") : "?");
    th->daemon = json_is_true(json_object_get(t, "daemon"));
    const char *st = dec_str(t, "state");
    th->state = st ? jp_thread_state_parse(st, strlen(st)) : JP_TSTATE_UNKNOWN;
    th->vm_internal = th->id < 0;
    if (dec_str(t, "state_detail"))
        th->state_detail = jp_snapshot_strdup(s, dec_str(t, "state_detail"));
    th->cpu_ns = dec_int(t, "cpu_ns");
    th->blocked_count = dec_int(t, "blocked_count");
    th->waited_count = dec_int(t, "waited_count");
    const json_t *stack = json_object_get(t, "stack"), *v;
    size_t i;
    json_array_foreach(stack, i, v)
    {
        const char *text = json_is_string(v) ? json_string_value(v) : dec_str(v, "name");
        jp_snap_frame *f = text ? jp_thread_add_frame(s, th) : NULL;
        if (f)
            dec_frame(s, f, text);
    }
    const json_t *held = json_object_get(t, "held");
    if (!json_is_array(held))
        held = json_object_get(t, "locks_held");
    json_array_foreach(held, i, v)
    {
        jp_lock_ref tmp;
        dec_lock(s, th, v, &tmp);
        jp_lock_ref *l = jp_thread_add_held(s, th); /* may move th->held, not th */
        if (l)
            *l = tmp;
    }
    dec_waiting(s, t, th);
}

/* The JVM's own deadlock report survives as "jvm_confirmed" cycles. */
static void dec_jvm_deadlocks(jp_snapshot *s, const json_t *dls)
{
    size_t i, k;
    const json_t *d, *m;
    json_array_foreach(dls, i, d)
    {
        const json_t *members = json_object_get(d, "threads");
        size_t n = json_array_size(members);
        if (!json_is_true(json_object_get(d, "jvm_confirmed")) || !n || n > s->count ||
            s->njvm_deadlocks >= 1024)
            continue;
        size_t *idx = calloc(n, sizeof *idx), c = 0;
        if (!idx)
            return;
        json_array_foreach(members, k, m)
        {
            long t = jp_snapshot_find_id(s, dec_int(m, "id"));
            if (t >= 0)
                idx[c++] = (size_t)t;
        }
        jp_snapshot_add_jvm_deadlock(s, idx, c);
        free(idx);
    }
}

jp_snapshot *jp_snapshot_from_json(const json_t *obj)
{
    const json_t *threads = json_is_object(obj) ? json_object_get(obj, "threads") : NULL;
    if (!json_is_array(threads))
        return NULL;
    jp_snapshot *s = jp_snapshot_new(dec_str(obj, "source") ? dec_str(obj, "source") : "");
    const char *taken = dec_str(obj, "taken_at");
    if (!taken || jp_rfc3339_parse(taken, &s->taken_ns, NULL) != JP_OK)
        s->taken_ns = 0;
    s->truncated = json_is_true(json_object_get(obj, "truncated"));
    const json_t *proc = json_object_get(obj, "process");
    if (json_is_object(proc)) {
        const json_t *pct = json_object_get(proc, "cpu_pct");
        s->proc_cpu_pct =
            json_is_number(pct) && json_number_value(pct) >= 0 && json_number_value(pct) < 1e6
                ? json_number_value(pct)
                : -1;
        s->proc_cpu_ns = dec_int(proc, "cpu_ns");
        s->heap_used = dec_int(proc, "heap_used");
        s->heap_committed = dec_int(proc, "heap_committed");
    }
    size_t i;
    const json_t *t;
    json_array_foreach(threads, i, t)
    {
        jp_thread *th = json_is_object(t) ? jp_snapshot_add_thread(s) : NULL;
        if (th)
            dec_thread(s, t, th);
    }
    dec_jvm_deadlocks(s, json_object_get(obj, "deadlocks"));
    return s;
}

json_t *jp_snapshot_locks_json(const jp_snapshot *s)
{
    return locks_json(s);
}

json_t *jp_snapshot_deadlocks_json(const jp_snapshot *s, const jp_snapjson_opts *o)
{
    jp_snapjson_opts dflt;
    if (!o) {
        jp_snapjson_opts_init(&dflt);
        o = &dflt;
    }
    return deadlocks_json(s, o);
}

void jp_snapshot_busy_from_json(const json_t *obj, const jp_snapshot *s, jp_busy_list *out)
{
    memset(out, 0, sizeof *out);
    const json_t *threads = json_is_object(obj) ? json_object_get(obj, "threads") : NULL;
    int64_t ms = dec_int(obj, "interval_ms");
    out->interval_ns = ms > 0 ? ms * 1000000 : 0;
    out->items = jp_xcalloc(s->count ? s->count : 1, sizeof *out->items);
    size_t i, n = 0;
    const json_t *t;
    /* the same walk as jp_snapshot_from_json: objects only, up to its cap */
    json_array_foreach(threads, i, t)
    {
        if (!json_is_object(t) || n >= s->count)
            continue;
        const json_t *v = json_object_get(t, "snapshot_cpu_pct");
        if (!v)
            v = json_object_get(t, "cpu_pct");
        jp_cpu_confidence c = JP_CPU_UNKNOWN;
        const char *cs = dec_str(t, "cpu_confidence");
        for (int k = JP_CPU_EXACT; cs && k <= JP_CPU_UNKNOWN; k++)
            if (!strcmp(cs, jp_cpu_confidence_name((jp_cpu_confidence)k)))
                c = (jp_cpu_confidence)k;
        double pct = json_is_number(v) ? json_number_value(v) : -1;
        out->items[n] =
            (jp_busy_thread){.thread = n,
                             .cpu_delta_ns = -1,
                             .cpu_pct = pct >= 0 ? pct : -1,
                             .confidence = pct >= 0 && c == JP_CPU_UNKNOWN ? JP_CPU_EXACT : c};
        n++;
    }
    out->count = n;
}
