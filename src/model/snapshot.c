#include "model/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/xalloc.h"

/* Strings are bump-allocated in chunks: a 2,000-thread snapshot has ~100k of
 * them and they all die together. */
#define ARENA_CHUNK (64 * 1024)

struct jp_snap_arena {
    struct jp_snap_arena *next;
    size_t used, size;
    char data[];
};

static const char *const state_names[JP_TSTATE_COUNT] = {
    [JP_TSTATE_UNKNOWN] = "UNKNOWN",       [JP_TSTATE_NEW] = "NEW",
    [JP_TSTATE_RUNNABLE] = "RUNNABLE",     [JP_TSTATE_BLOCKED] = "BLOCKED",
    [JP_TSTATE_WAITING] = "WAITING",       [JP_TSTATE_TIMED_WAITING] = "TIMED_WAITING",
    [JP_TSTATE_TERMINATED] = "TERMINATED",
};

const char *jp_thread_state_name(jp_thread_state s)
{
    if ((int)s < 0 || s >= JP_TSTATE_COUNT)
        return "UNKNOWN";
    return state_names[s];
}

jp_thread_state jp_thread_state_parse(const char *s, size_t len)
{
    for (int i = 1; i < JP_TSTATE_COUNT; i++)
        if (strlen(state_names[i]) == len && memcmp(s, state_names[i], len) == 0)
            return (jp_thread_state)i;
    return JP_TSTATE_UNKNOWN;
}

const char *jp_wait_kind_name(jp_wait_kind k)
{
    switch (k) {
    case JP_WAIT_ENTER:
        return "enter";
    case JP_WAIT_OBJECT:
        return "wait";
    case JP_WAIT_PARK:
        return "park";
    default:
        return "none";
    }
}

size_t jp_snap_frame_format(const jp_snap_frame *f, char *buf, size_t len)
{
    int n;
    const char *cls = f->class_name ? f->class_name : "";
    const char *dot = cls[0] ? "." : "";
    if (f->line == -2)
        n = snprintf(buf, len, "%s%s%s(Native Method)", cls, dot, f->method);
    else if (!f->file)
        n = snprintf(buf, len, "%s%s%s(Unknown Source)", cls, dot, f->method);
    else if (f->line < 0)
        n = snprintf(buf, len, "%s%s%s(%s)", cls, dot, f->method, f->file);
    else
        n = snprintf(buf, len, "%s%s%s(%s:%d)", cls, dot, f->method, f->file, (int)f->line);
    return n < 0 ? 0 : (size_t)n;
}

size_t jp_lock_ref_format(const jp_lock_ref *l, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s@%llx", l->class_name ? l->class_name : "?",
                     (unsigned long long)l->id);
    return n < 0 ? 0 : (size_t)n;
}

jp_snapshot *jp_snapshot_new(const char *source)
{
    jp_snapshot *s = jp_xcalloc(1, sizeof *s);
    s->source = jp_snapshot_strdup(s, source ? source : "");
    s->uptime_ns = -1;
    s->proc_cpu_ns = s->heap_used = s->heap_committed = -1;
    s->proc_cpu_pct = -1;
    return s;
}

void jp_snapshot_free(jp_snapshot *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->count; i++) {
        free(s->threads[i].frames);
        free(s->threads[i].held);
    }
    free(s->threads);
    for (size_t i = 0; i < s->njvm_deadlocks; i++)
        free(s->jvm_deadlocks[i].threads);
    free(s->jvm_deadlocks);
    struct jp_snap_arena *a = s->arena;
    while (a) {
        struct jp_snap_arena *next = a->next;
        free(a);
        a = next;
    }
    free(s);
}

const char *jp_snapshot_strndup(jp_snapshot *s, const char *p, size_t len)
{
    struct jp_snap_arena *a = s->arena;
    if (!a || a->size - a->used < len + 1) {
        size_t size = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
        a = jp_xmalloc(sizeof *a + size);
        a->size = size;
        a->used = 0;
        if (s->arena && size > ARENA_CHUNK) { /* keep the partly used chunk on top */
            a->next = s->arena->next;
            s->arena->next = a;
        } else {
            a->next = s->arena;
            s->arena = a;
        }
    }
    char *out = a->data + a->used;
    if (len)
        memcpy(out, p, len);
    out[len] = '\0';
    a->used += len + 1;
    return out;
}

const char *jp_snapshot_strdup(jp_snapshot *s, const char *p)
{
    return jp_snapshot_strndup(s, p, strlen(p));
}

jp_thread *jp_snapshot_add_thread(jp_snapshot *s)
{
    if (s->count >= JP_SNAPSHOT_MAX_THREADS) {
        s->truncated = true;
        return NULL;
    }
    s->threads = jp_xgrow(s->threads, &s->threads_alloc, s->count + 1, sizeof *s->threads);
    jp_thread *t = &s->threads[s->count++];
    memset(t, 0, sizeof *t);
    t->id = t->native_id = -1;
    t->cpu_ns = t->elapsed_ns = -1;
    t->blocked_count = t->waited_count = -1;
    t->blocked_time_ns = t->waited_time_ns = -1;
    t->wait_owner_id = -1;
    t->name = "";
    return t;
}

jp_snap_frame *jp_thread_add_frame(jp_snapshot *s, jp_thread *t)
{
    if (t->nframes >= JP_SNAPSHOT_MAX_FRAMES) {
        t->frames_truncated = true;
        s->truncated = true;
        return NULL;
    }
    t->frames = jp_xgrow(t->frames, &t->frames_alloc, t->nframes + 1, sizeof *t->frames);
    jp_snap_frame *f = &t->frames[t->nframes++];
    f->class_name = "";
    f->method = "";
    f->file = NULL;
    f->line = -1;
    return f;
}

jp_lock_ref *jp_thread_add_held(jp_snapshot *s, jp_thread *t)
{
    if (t->nheld >= JP_SNAPSHOT_MAX_LOCKS) {
        s->truncated = true;
        return NULL;
    }
    t->held = jp_xgrow(t->held, &t->held_alloc, t->nheld + 1, sizeof *t->held);
    jp_lock_ref *l = &t->held[t->nheld++];
    memset(l, 0, sizeof *l);
    l->class_name = "";
    l->frame = -1;
    return l;
}

void jp_snapshot_add_jvm_deadlock(jp_snapshot *s, const size_t *threads, size_t count)
{
    s->jvm_deadlocks = jp_xgrow(s->jvm_deadlocks, &s->deadlocks_alloc, s->njvm_deadlocks + 1,
                                sizeof *s->jvm_deadlocks);
    jp_jvm_deadlock *d = &s->jvm_deadlocks[s->njvm_deadlocks++];
    d->threads = jp_xcalloc(count ? count : 1, sizeof *d->threads);
    if (count)
        memcpy(d->threads, threads, count * sizeof *threads);
    d->count = count;
}

long jp_snapshot_find_id(const jp_snapshot *s, int64_t id)
{
    if (id < 0)
        return -1;
    for (size_t i = 0; i < s->count; i++)
        if (s->threads[i].id == id)
            return (long)i;
    return -1;
}

long jp_snapshot_find_name(const jp_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++)
        if (strcmp(s->threads[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* A monitor listed as "locked" by a thread that is in Object.wait() on it
 * was released by the wait; it is not held. */
static bool really_holds(const jp_thread *t, const jp_lock_ref *l)
{
    return !(t->wait_kind == JP_WAIT_OBJECT && l->kind == JP_LOCK_MONITOR &&
             t->wait_lock.id == l->id);
}

long jp_snapshot_lock_owner(const jp_snapshot *s, uint64_t lock_id)
{
    if (lock_id == 0)
        return -1;
    for (size_t i = 0; i < s->count; i++) {
        const jp_thread *t = &s->threads[i];
        for (size_t k = 0; k < t->nheld; k++)
            if (t->held[k].id == lock_id && really_holds(t, &t->held[k]))
                return (long)i;
    }
    return -1;
}

void jp_snapshot_resolve_owners(jp_snapshot *s)
{
    jp_u64map owners; /* lock id -> thread index + 1 */
    jp_u64map_init(&owners);
    for (size_t i = 0; i < s->count; i++) {
        const jp_thread *t = &s->threads[i];
        for (size_t k = 0; k < t->nheld; k++)
            if (t->held[k].id && really_holds(t, &t->held[k]))
                jp_u64map_put(&owners, t->held[k].id, i + 1);
    }
    for (size_t i = 0; i < s->count; i++) {
        jp_thread *t = &s->threads[i];
        if (t->wait_kind == JP_WAIT_NONE || t->wait_kind == JP_WAIT_OBJECT)
            continue;
        uint64_t v = 0;
        if (t->wait_owner_id < 0 && jp_u64map_get(&owners, t->wait_lock.id, &v) && v - 1 != i) {
            t->wait_owner_id = s->threads[v - 1].id;
            t->wait_owner_name = s->threads[v - 1].name;
        } else if (t->wait_owner_id >= 0 && !t->wait_owner_name) {
            long o = jp_snapshot_find_id(s, t->wait_owner_id);
            if (o >= 0)
                t->wait_owner_name = s->threads[o].name;
        }
    }
    jp_u64map_cleanup(&owners);
}

void jp_snapshot_count_states(const jp_snapshot *s, size_t counts[JP_TSTATE_COUNT])
{
    memset(counts, 0, sizeof(size_t) * JP_TSTATE_COUNT);
    for (size_t i = 0; i < s->count; i++) {
        jp_thread_state st = s->threads[i].state;
        counts[(int)st >= 0 && st < JP_TSTATE_COUNT ? st : JP_TSTATE_UNKNOWN]++;
    }
}

bool jp_snap_frame_is_jdk(const jp_snap_frame *f)
{
    static const char *const jdk[] = {"java.", "javax.", "jdk.", "sun.", "com.sun.", NULL};
    const char *c = f->class_name ? f->class_name : "";
    for (size_t i = 0; jdk[i]; i++)
        if (strncmp(c, jdk[i], strlen(jdk[i])) == 0)
            return true;
    return false;
}

int32_t jp_thread_app_frame(const jp_thread *t, int32_t from)
{
    for (size_t k = from < 0 ? 0 : (size_t)from; k < t->nframes; k++)
        if (!jp_snap_frame_is_jdk(&t->frames[k]))
            return (int32_t)k;
    return from;
}
