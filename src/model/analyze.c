#include "model/analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

/* ---- the wait-for graph: each thread waits for at most one owner ---- */

/* Owner index of the lock t waits for, -1 when it waits for nobody in
 * particular (Object.wait, an unowned park blocker) or not at all. */
static long waits_for_owner(const jp_snapshot *s, size_t i)
{
    const jp_thread *t = &s->threads[i];
    if (t->wait_kind != JP_WAIT_ENTER && t->wait_kind != JP_WAIT_PARK)
        return -1;
    long o = -1;
    if (t->wait_owner_id >= 0)
        o = jp_snapshot_find_id(s, t->wait_owner_id);
    if (o < 0)
        o = jp_snapshot_lock_owner(s, t->wait_lock.id);
    return o == (long)i ? -1 : o;
}

static long *build_edges(const jp_snapshot *s)
{
    long *next = jp_xcalloc(s->count ? s->count : 1, sizeof *next);
    for (size_t i = 0; i < s->count; i++)
        next[i] = waits_for_owner(s, i);
    return next;
}

/* The lock `holder` holds that `waiter` waits for. */
static jp_lock_ref held_ref(const jp_thread *holder, const jp_thread *waiter)
{
    for (size_t k = 0; k < holder->nheld; k++)
        if (holder->held[k].id == waiter->wait_lock.id)
            return holder->held[k];
    jp_lock_ref r = waiter->wait_lock;
    r.frame = -1;
    return r;
}

static bool same_set(const jp_deadlock *d, const jp_jvm_deadlock *j)
{
    if (d->count != j->count)
        return false;
    for (size_t a = 0; a < d->count; a++) {
        bool found = false;
        for (size_t b = 0; b < j->count && !found; b++)
            found = d->members[a].thread == j->threads[b];
        if (!found)
            return false;
    }
    return true;
}

/* Builds the deadlock for the cycle through `start`, rotated to the member
 * with the smallest Java id. */
static void add_cycle(const jp_snapshot *s, const long *next, size_t start, jp_deadlock_list *out)
{
    size_t n = 1, best = start;
    for (size_t i = (size_t)next[start]; i != start; i = (size_t)next[i], n++)
        if (s->threads[i].id < s->threads[best].id)
            best = i;
    jp_deadlock d = {.members = jp_xcalloc(n, sizeof *d.members), .count = n};
    size_t i = best;
    bool mon = false, syn = false;
    for (size_t k = 0; k < n; k++, i = (size_t)next[i]) {
        const jp_thread *t = &s->threads[i];
        d.members[k].thread = i;
        d.members[k].waits_for = t->wait_lock;
        /* point at the application frame, not at Unsafe.park */
        d.members[k].waits_for.frame = jp_thread_app_frame(t, t->wait_lock.frame);
        mon |= t->wait_lock.kind == JP_LOCK_MONITOR;
        syn |= t->wait_lock.kind == JP_LOCK_SYNCHRONIZER;
    }
    /* member k holds what member k-1 waits for */
    for (size_t k = 0; k < n; k++) {
        const jp_thread *prev = &s->threads[d.members[(k + n - 1) % n].thread];
        d.members[k].holds = held_ref(&s->threads[d.members[k].thread], prev);
    }
    d.mixed = mon && syn;
    for (size_t j = 0; j < s->njvm_deadlocks && !d.jvm_confirmed; j++)
        d.jvm_confirmed = same_set(&d, &s->jvm_deadlocks[j]);
    out->items = jp_xreallocarray(out->items, out->count + 1, sizeof *out->items);
    out->items[out->count++] = d;
}

static int cmp_deadlock_ids(const jp_snapshot *s, const jp_deadlock *a, const jp_deadlock *b)
{
    int64_t x = s->threads[a->members[0].thread].id, y = s->threads[b->members[0].thread].id;
    return (x > y) - (x < y);
}

void jp_analyze_deadlocks(const jp_snapshot *s, jp_deadlock_list *out)
{
    memset(out, 0, sizeof *out);
    if (s->count == 0)
        return;
    long *next = build_edges(s);
    /* colour: 0 unvisited, 1 on the current walk, 2 done */
    unsigned char *colour = jp_xcalloc(s->count, 1);
    for (size_t i = 0; i < s->count; i++) {
        size_t v = i;
        while (colour[v] == 0) {
            colour[v] = 1;
            if (next[v] < 0)
                break;
            v = (size_t)next[v];
        }
        if (colour[v] == 1 && next[v] >= 0)
            add_cycle(s, next, v, out); /* the walk closed on itself at v */
        for (size_t w = i; colour[w] == 1;) {
            colour[w] = 2;
            if (next[w] < 0)
                break;
            w = (size_t)next[w];
        }
    }
    /* insertion sort: a handful of cycles at most */
    for (size_t a = 1; a < out->count; a++)
        for (size_t b = a; b > 0 && cmp_deadlock_ids(s, &out->items[b - 1], &out->items[b]) > 0;
             b--) {
            jp_deadlock tmp = out->items[b];
            out->items[b] = out->items[b - 1];
            out->items[b - 1] = tmp;
        }
    free(colour);
    free(next);
}

void jp_deadlock_list_cleanup(jp_deadlock_list *l)
{
    for (size_t i = 0; i < l->count; i++)
        free(l->items[i].members);
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ---- lock groups ---- */

size_t *jp_analyze_blocks_counts(const jp_snapshot *s)
{
    size_t *blocks = jp_xcalloc(s->count ? s->count : 1, sizeof *blocks);
    size_t *seen = jp_xcalloc(s->count ? s->count : 1, sizeof *seen);
    long *next = build_edges(s);
    /* walk each waiter's chain, counting each owner once per waiter: the walk
     * stops at an owner already seen in this walk (a cycle the waiter leads
     * into but is not part of) or back at the waiter */
    for (size_t i = 0; i < s->count; i++)
        for (long o = next[i]; o >= 0 && (size_t)o != i && seen[o] != i + 1; o = next[o]) {
            seen[o] = i + 1;
            blocks[o]++;
        }
    free(seen);
    free(next);
    return blocks;
}

bool jp_thread_contends(const jp_snapshot *s, size_t i)
{
    const jp_thread *t = &s->threads[i];
    if (t->vm_internal)
        return false;
    /* BLOCKED is always a monitor entry (or re-entry after Object.wait) */
    if (t->state == JP_TSTATE_BLOCKED || t->wait_kind == JP_WAIT_ENTER)
        return true;
    return t->wait_kind == JP_WAIT_PARK && waits_for_owner(s, i) >= 0;
}

static int cmp_group(const void *pa, const void *pb)
{
    const jp_lock_group *a = pa, *b = pb;
    if (a->contended != b->contended)
        return a->contended ? -1 : 1;
    if (a->ncontending != b->ncontending)
        return a->ncontending > b->ncontending ? -1 : 1;
    if (a->nwaiters != b->nwaiters)
        return a->nwaiters > b->nwaiters ? -1 : 1;
    if ((a->owner >= 0) != (b->owner >= 0))
        return a->owner >= 0 ? -1 : 1;
    return (a->lock.id > b->lock.id) - (a->lock.id < b->lock.id);
}

static jp_lock_group *group_for(jp_lock_group_list *out, size_t *alloc, const jp_lock_ref *l)
{
    for (size_t g = 0; g < out->count; g++)
        if (out->items[g].lock.id == l->id && out->items[g].lock.kind == l->kind)
            return &out->items[g];
    out->items = jp_xgrow(out->items, alloc, out->count + 1, sizeof *out->items);
    jp_lock_group *g = &out->items[out->count++];
    memset(g, 0, sizeof *g);
    g->lock = *l;
    g->owner = -1;
    return g;
}

static void fill_chain(const jp_snapshot *s, const long *next, jp_lock_group *g)
{
    if (g->owner < 0)
        return;
    g->owner_chain = jp_xcalloc(s->count, sizeof *g->owner_chain);
    for (long o = g->owner; o >= 0 && g->nchain < s->count; o = next[o]) {
        for (size_t k = 0; k < g->nchain; k++)
            if (g->owner_chain[k] == (size_t)o) {
                g->chain_cycles = true;
                return;
            }
        g->owner_chain[g->nchain++] = (size_t)o;
    }
}

static const jp_snapshot *id_snap; /* qsort has no context argument */

static int cmp_by_id(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    int64_t x = id_snap->threads[a].id, y = id_snap->threads[b].id;
    return x != y ? (x > y) - (x < y) : (a > b) - (a < b);
}

/* Contending waiters first, each part by Java id. */
static void partition_waiters(const jp_snapshot *s, jp_lock_group *g)
{
    size_t *tmp = jp_xcalloc(g->nwaiters ? g->nwaiters : 1, sizeof *tmp), n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < g->nwaiters; k++)
            if (jp_thread_contends(s, g->waiters[k]) == (pass == 0))
                tmp[n++] = g->waiters[k];
    for (size_t k = 0; k < g->nwaiters; k++)
        g->ncontending += jp_thread_contends(s, tmp[k]);
    /* each part by Java id, whatever order the snapshot lists threads in */
    id_snap = s;
    qsort(tmp, g->ncontending, sizeof *tmp, cmp_by_id);
    qsort(tmp + g->ncontending, g->nwaiters - g->ncontending, sizeof *tmp, cmp_by_id);
    id_snap = NULL;
    memcpy(g->waiters, tmp, g->nwaiters * sizeof *tmp);
    g->contended = g->ncontending > 0;
    free(tmp);
}

void jp_analyze_locks(const jp_snapshot *s, jp_lock_group_list *out)
{
    memset(out, 0, sizeof *out);
    size_t alloc = 0;
    long *next = build_edges(s);
    size_t *blocks = jp_analyze_blocks_counts(s);
    for (size_t i = 0; i < s->count; i++) {
        const jp_thread *t = &s->threads[i];
        if (t->wait_kind == JP_WAIT_NONE || t->wait_lock.id == 0)
            continue;
        jp_lock_group *g = group_for(out, &alloc, &t->wait_lock);
        g->waiters = jp_xreallocarray(g->waiters, g->nwaiters + 1, sizeof *g->waiters);
        g->waiters[g->nwaiters++] = i;
        if (g->owner < 0 && next[i] >= 0)
            g->owner = next[i];
    }
    for (size_t gi = 0; gi < out->count; gi++) {
        jp_lock_group *g = &out->items[gi];
        if (g->owner < 0)
            g->owner = jp_snapshot_lock_owner(s, g->lock.id);
        if (g->owner >= 0) {
            g->owner_blocks = blocks[g->owner];
            fill_chain(s, next, g);
        }
        partition_waiters(s, g);
        out->ncontended += g->contended;
        out->contending_threads += g->ncontending;
    }
    if (out->count > 1)
        qsort(out->items, out->count, sizeof *out->items, cmp_group);
    free(blocks);
    free(next);
}

void jp_lock_group_list_cleanup(jp_lock_group_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].waiters);
        free(l->items[i].owner_chain);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ---- idle threads ---- */

/* Frames that are the waiting itself, not what waits: never a "where". */
static bool wait_machinery(const jp_snap_frame *f)
{
    static const char *const prefixes[] = {"java.util.concurrent.locks.", "jdk.internal.misc.",
                                           "sun.misc.Unsafe", NULL};
    const char *c = f->class_name ? f->class_name : "";
    for (size_t i = 0; prefixes[i]; i++)
        if (strncmp(c, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    /* JDK 17+ Condition.await blocks through ForkJoinPool.managedBlock */
    if (strcmp(c, "java.util.concurrent.ForkJoinPool") == 0 && f->method &&
        strstr(f->method, "anagedBlock"))
        return true;
    return strcmp(c, "java.lang.Object") == 0 || strcmp(c, "java.lang.Thread") == 0;
}

/* Where an idle thread waits: the first frame that is not park/wait
 * machinery (LinkedBlockingQueue.poll), or the application frame right
 * below it when there is one (Tomcat's TaskQueue.poll, which calls it);
 * -1 when the stack is empty. */
static long idle_frame(const jp_thread *t)
{
    size_t k = 0;
    while (k < t->nframes && wait_machinery(&t->frames[k]))
        k++;
    if (k == t->nframes)
        return t->nframes ? 0 : -1;
    if (jp_snap_frame_is_jdk(&t->frames[k]) && k + 1 < t->nframes && t->frames[k + 1].class_name &&
        *t->frames[k + 1].class_name && !jp_snap_frame_is_jdk(&t->frames[k + 1]))
        return (long)k + 1;
    return (long)k;
}

static char *where_text(const jp_thread *t, long k)
{
    if (k < 0)
        return jp_xstrdup("(no stack)");
    const jp_snap_frame *f = &t->frames[k];
    const char *c = f->class_name ? f->class_name : "";
    const char *dot = strrchr(c, '.');
    size_t len = strlen(dot ? dot + 1 : c) + strlen(f->method ? f->method : "") + 2;
    char *w = jp_xmalloc(len);
    snprintf(w, len, "%s%s%s", dot ? dot + 1 : c, *c ? "." : "", f->method ? f->method : "");
    return w;
}

/* "http-nio-8080-exec-12" -> "http-nio-8080-exec-*"; names without a
 * trailing number stay as they are. */
static char *pool_name(const char *name)
{
    size_t n = strlen(name), d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d == n || d == 0)
        return jp_xstrdup(name);
    char *p = jp_xmalloc(d + 2);
    memcpy(p, name, d);
    p[d] = '*';
    p[d + 1] = 0;
    return p;
}

static bool thread_idle(const jp_snapshot *s, size_t i)
{
    const jp_thread *t = &s->threads[i];
    return !t->vm_internal &&
           (t->state == JP_TSTATE_WAITING || t->state == JP_TSTATE_TIMED_WAITING) &&
           !jp_thread_contends(s, i);
}

static int cmp_pool(const void *pa, const void *pb)
{
    const jp_idle_pool *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    int c = strcmp(a->pool, b->pool);
    return c ? c : strcmp(a->where, b->where);
}

void jp_analyze_idle(const jp_snapshot *s, jp_idle_list *out)
{
    memset(out, 0, sizeof *out);
    size_t alloc = 0;
    for (size_t i = 0; i < s->count; i++) {
        if (!thread_idle(s, i))
            continue;
        const jp_thread *t = &s->threads[i];
        long k = idle_frame(t);
        char *pool = pool_name(t->name ? t->name : "?"), *where = where_text(t, k);
        jp_idle_pool *g = NULL;
        for (size_t p = 0; p < out->count && !g; p++)
            if (!strcmp(out->items[p].pool, pool) && !strcmp(out->items[p].where, where))
                g = &out->items[p];
        if (g) {
            free(pool);
            free(where);
        } else {
            out->items = jp_xgrow(out->items, &alloc, out->count + 1, sizeof *out->items);
            g = &out->items[out->count++];
            *g = (jp_idle_pool){.pool = pool, .where = where, .frame = k, .state = t->state};
        }
        g->threads = jp_xreallocarray(g->threads, g->count + 1, sizeof *g->threads);
        g->threads[g->count++] = i;
        out->nthreads++;
    }
    if (out->count > 1)
        qsort(out->items, out->count, sizeof *out->items, cmp_pool);
}

void jp_idle_list_cleanup(jp_idle_list *l)
{
    for (size_t i = 0; i < l->count; i++) {
        free(l->items[i].pool);
        free(l->items[i].where);
        free(l->items[i].threads);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* ---- busy threads ---- */

const char *jp_cpu_confidence_name(jp_cpu_confidence c)
{
    switch (c) {
    case JP_CPU_EXACT:
        return "exact";
    case JP_CPU_SAMPLED:
        return "sampled";
    case JP_CPU_PROFILE:
        return "profile";
    default:
        return "unknown";
    }
}

static long match_thread(const jp_snapshot *prev, const jp_thread *t)
{
    for (size_t i = 0; i < prev->count; i++) {
        const jp_thread *p = &prev->threads[i];
        bool same = t->id >= 0 ? p->id == t->id : (p->id < 0 && p->native_id == t->native_id);
        if (same && strcmp(p->name, t->name) == 0)
            return (long)i;
    }
    return -1;
}

static void rate_thread(const jp_snapshot *prev, const jp_thread *t, int64_t interval,
                        jp_busy_thread *b)
{
    b->cpu_delta_ns = -1;
    b->cpu_pct = -1;
    b->confidence = JP_CPU_UNKNOWN;
    long p = prev ? match_thread(prev, t) : -1;
    const jp_thread *pt = p >= 0 ? &prev->threads[p] : NULL;
    if (prev && interval > 0 && t->cpu_ns >= 0 && (!pt || pt->cpu_ns >= 0)) {
        /* a thread born inside the interval used its whole CPU time there */
        int64_t d = t->cpu_ns - (pt ? pt->cpu_ns : 0);
        b->cpu_delta_ns = d < 0 ? 0 : d;
        b->cpu_pct = 100.0 * (double)b->cpu_delta_ns / (double)interval;
        b->confidence = JP_CPU_EXACT;
    } else if (t->cpu_ns < 0 && !t->vm_internal) {
        int runnable = t->state == JP_TSTATE_RUNNABLE;
        int samples = 1;
        if (pt) {
            runnable += pt->state == JP_TSTATE_RUNNABLE;
            samples++;
        }
        b->cpu_pct = 100.0 * runnable / samples;
        b->confidence = JP_CPU_SAMPLED;
    }
}

static const jp_snapshot *sort_snap; /* qsort has no context argument */

static int cmp_busy(const void *pa, const void *pb)
{
    const jp_busy_thread *a = pa, *b = pb;
    if (a->cpu_pct != b->cpu_pct)
        return a->cpu_pct > b->cpu_pct ? -1 : 1;
    const jp_thread *x = &sort_snap->threads[a->thread], *y = &sort_snap->threads[b->thread];
    if (x->cpu_ns != y->cpu_ns)
        return x->cpu_ns > y->cpu_ns ? -1 : 1;
    int c = strcmp(x->name, y->name);
    return c ? c : (a->thread > b->thread) - (a->thread < b->thread);
}

void jp_analyze_busy(const jp_snapshot *prev, const jp_snapshot *cur, jp_busy_list *out)
{
    memset(out, 0, sizeof *out);
    int64_t interval = prev ? cur->taken_ns - prev->taken_ns : 0;
    if (prev && prev->uptime_ns >= 0 && cur->uptime_ns > prev->uptime_ns)
        interval = cur->uptime_ns - prev->uptime_ns; /* the JVM's clock, when it told us */
    out->interval_ns = interval > 0 ? interval : 0;
    out->items = jp_xcalloc(cur->count ? cur->count : 1, sizeof *out->items);
    for (size_t i = 0; i < cur->count; i++) {
        out->items[i].thread = i;
        rate_thread(prev, &cur->threads[i], out->interval_ns, &out->items[i]);
    }
    out->count = cur->count;
    sort_snap = cur;
    if (out->count > 1)
        qsort(out->items, out->count, sizeof *out->items, cmp_busy);
    sort_snap = NULL;
}

void jp_busy_list_cleanup(jp_busy_list *l)
{
    free(l->items);
    memset(l, 0, sizeof *l);
}
