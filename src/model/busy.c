#include "model/busy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"

/* ---- profile evidence ---- */

void jp_cpu_evidence_init(jp_cpu_evidence *e)
{
    memset(e, 0, sizeof *e);
    jp_u64map_init(&e->index);
}

void jp_cpu_evidence_cleanup(jp_cpu_evidence *e)
{
    for (size_t i = 0; i < e->count; i++)
        free(e->items[i].name);
    free(e->items);
    jp_u64map_cleanup(&e->index);
    memset(e, 0, sizeof *e);
}

/* Index of name in e, -1 when absent; *key gets the slot to insert at
 * (names that collide on a hash probe the next key). */
static long evidence_find(const jp_cpu_evidence *e, const char *name, size_t len, uint64_t *key)
{
    uint64_t k = jp_hash_bytes(name, len), v;
    while (jp_u64map_get(&e->index, k, &v)) {
        const char *n = e->items[v - 1].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            *key = k;
            return (long)(v - 1);
        }
        k = jp_hash_u64(k + 1);
    }
    *key = k;
    return -1;
}

void jp_cpu_evidence_add(jp_cpu_evidence *e, const char *name, size_t len, uint64_t cpu_ns,
                         uint64_t samples)
{
    uint64_t key;
    long i = evidence_find(e, name, len, &key);
    if (i < 0) {
        if (e->count >= JP_BUSY_EVIDENCE_MAX_THREADS) {
            e->dropped = true;
            return;
        }
        e->items = jp_xgrow(e->items, &e->cap, e->count + 1, sizeof *e->items);
        char *copy = jp_xmalloc(len + 1);
        memcpy(copy, name, len);
        copy[len] = 0;
        e->items[e->count] = (jp_thread_cpu){.name = copy};
        jp_u64map_put(&e->index, key, e->count + 1);
        i = (long)e->count++;
    }
    e->items[i].cpu_ns += cpu_ns;
    e->items[i].samples += samples;
}

void jp_cpu_evidence_add_profile(jp_cpu_evidence *e, const jp_profile *p)
{
    const jp_kind_table *t = &p->kinds[JP_KIND_CPU];
    for (size_t i = 0; i < t->count; i++) {
        const jp_sample *c = &t->cells[i];
        if (c->thread == JP_NO_THREAD)
            continue;
        uint64_t v = c->value;
        if (!v && t->period_ns > 0)
            v = c->samples * (uint64_t)t->period_ns;
        size_t len;
        const char *name = jp_profile_frame_name(p, c->thread, &len);
        jp_cpu_evidence_add(e, name, len, v, c->samples);
    }
    if (!e->end_ns && p->end_ns > p->start_ns && p->start_ns > 0) {
        e->start_ns = p->start_ns;
        e->end_ns = p->end_ns;
    }
    if (!e->windows)
        e->windows = 1;
}

bool jp_cpu_evidence_usable(const jp_cpu_evidence *e)
{
    if (!e || e->end_ns <= e->start_ns || e->start_ns <= 0)
        return false;
    for (size_t i = 0; i < e->count; i++)
        if (e->items[i].samples || e->items[i].cpu_ns)
            return true;
    return false;
}

/* ---- ranking ---- */

const char *jp_busy_evidence_name(jp_busy_evidence e)
{
    static const char *const names[] = {"both", "profile", "snapshot", "none"};
    return (unsigned)e < sizeof names / sizeof *names ? names[e] : "none";
}

static double profile_pct(const jp_cpu_evidence *ev, const jp_thread_cpu *c)
{
    double span = (double)(ev->end_ns - ev->start_ns);
    double pct = 100.0 * (double)c->cpu_ns / span;
    return pct < 0 ? 0 : pct;
}

/* Below this a thread did not run, it woke up: a sleeping thread's timer
 * tick, a single sample. */
#define BUSY_MIN_PCT 1.0

static jp_busy_evidence row_evidence(const jp_busy_row *r, const jp_snapshot *cur)
{
    /* a cpu sample is a thread caught running: sleeping threads get none */
    bool prof = r->profile_samples > 0 || r->profile_pct >= BUSY_MIN_PCT;
    bool runnable = r->thread >= 0 && (size_t)r->thread < cur->count &&
                    cur->threads[r->thread].state == JP_TSTATE_RUNNABLE;
    bool snap = r->snapshot_pct >= BUSY_MIN_PCT || (r->snapshot_pct < 0 && runnable);
    return prof && snap ? JP_BUSY_BOTH
           : prof       ? JP_BUSY_PROFILE
           : snap       ? JP_BUSY_SNAPSHOT
                        : JP_BUSY_NONE;
}

/* Whether the profile is the fresher evidence: its span's middle is later
 * than that of the interval between the snapshots (a 60 s snapshot delta
 * ending now is older, on average, than a 10 s window that ended 5 s ago). */
static bool profile_fresher(const jp_busy_summary *s)
{
    if (!s->have_profile)
        return false;
    if (!s->have_snapshot || s->snapshot_interval_ns <= 0)
        return true;
    int64_t pm = s->window_start_ns / 2 + s->window_end_ns / 2;
    int64_t sm = s->snapshot_ns - s->snapshot_interval_ns / 2;
    return pm >= sm;
}

static const jp_snapshot *rank_snap; /* qsort has no context argument */

static int cmp_row(const void *pa, const void *pb)
{
    const jp_busy_row *a = pa, *b = pb;
    if (a->cpu_pct != b->cpu_pct)
        return a->cpu_pct > b->cpu_pct ? -1 : 1;
    if (a->evidence != b->evidence)
        return a->evidence < b->evidence ? -1 : 1;
    bool ra = a->thread >= 0 && rank_snap->threads[a->thread].state == JP_TSTATE_RUNNABLE;
    bool rb = b->thread >= 0 && rank_snap->threads[b->thread].state == JP_TSTATE_RUNNABLE;
    if (ra != rb)
        return ra ? -1 : 1;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->thread > b->thread) - (a->thread < b->thread);
}

static void add_snapshot_rows(const jp_snapshot *cur, const jp_busy_list *snap,
                              const jp_cpu_evidence *ev, bool *used, jp_busy_summary *out)
{
    for (size_t i = 0; i < cur->count; i++) {
        const jp_thread *t = &cur->threads[i];
        if (t->vm_internal)
            continue;
        jp_busy_row *r = &out->items[out->count++];
        *r = (jp_busy_row){.name = t->name ? t->name : "?",
                           .thread = (long)i,
                           .profile_pct = out->have_profile ? 0 : -1,
                           .snapshot_pct = -1,
                           .snapshot_conf = JP_CPU_UNKNOWN};
        for (size_t k = 0; snap && k < snap->count; k++)
            if (snap->items[k].thread == i) {
                /* RUNNABLE in a single snapshot is a state, not a rate */
                bool rate = snap->items[k].confidence != JP_CPU_SAMPLED || snap->interval_ns > 0;
                r->snapshot_pct = rate ? snap->items[k].cpu_pct : -1;
                r->snapshot_conf = snap->items[k].confidence;
                break;
            }
        uint64_t key;
        long c = out->have_profile ? evidence_find(ev, r->name, strlen(r->name), &key) : -1;
        if (c >= 0) {
            r->profile_pct = profile_pct(ev, &ev->items[c]);
            r->profile_samples = ev->items[c].samples;
            used[c] = true;
        }
    }
}

void jp_busy_rank(const jp_snapshot *cur, const jp_busy_list *snap, const jp_cpu_evidence *ev,
                  jp_busy_summary *out)
{
    memset(out, 0, sizeof *out);
    out->have_profile = jp_cpu_evidence_usable(ev);
    if (out->have_profile) {
        out->window_start_ns = ev->start_ns;
        out->window_end_ns = ev->end_ns;
        out->windows = ev->windows;
    }
    if (cur) {
        out->snapshot_ns = cur->taken_ns;
        out->snapshot_interval_ns = snap ? snap->interval_ns : 0;
        for (size_t k = 0; snap && k < snap->count && !out->have_snapshot; k++)
            out->have_snapshot =
                snap->items[k].cpu_pct >= 0 &&
                (snap->items[k].confidence != JP_CPU_SAMPLED || snap->interval_ns > 0);
    }
    out->profile_first = profile_fresher(out);
    size_t nev = out->have_profile ? ev->count : 0;
    size_t n = (cur ? cur->count : 0) + nev;
    out->items = jp_xcalloc(n ? n : 1, sizeof *out->items);
    bool *used = jp_xcalloc(nev ? nev : 1, sizeof *used);
    static const jp_snapshot empty = {.source = ""};
    if (cur)
        add_snapshot_rows(cur, snap, ev, used, out);
    for (size_t c = 0; c < nev; c++)
        if (!used[c])
            out->items[out->count++] = (jp_busy_row){.name = ev->items[c].name,
                                                     .thread = -1,
                                                     .profile_pct = profile_pct(ev, &ev->items[c]),
                                                     .profile_samples = ev->items[c].samples,
                                                     .snapshot_pct = -1,
                                                     .snapshot_conf = JP_CPU_UNKNOWN};
    free(used);
    const jp_snapshot *s = cur ? cur : &empty;
    bool any_prof = false, any_snap = false;
    for (size_t i = 0; i < out->count; i++) {
        jp_busy_row *r = &out->items[i];
        double first = out->profile_first ? r->profile_pct : r->snapshot_pct;
        double second = out->profile_first ? r->snapshot_pct : r->profile_pct;
        r->cpu_pct = first >= 0 ? first : second;
        r->evidence = row_evidence(r, s);
        any_prof |= r->evidence == JP_BUSY_BOTH || r->evidence == JP_BUSY_PROFILE;
        any_snap |= r->evidence == JP_BUSY_BOTH || r->evidence == JP_BUSY_SNAPSHOT;
    }
    out->evidence = any_prof && any_snap ? JP_BUSY_BOTH
                    : any_prof           ? JP_BUSY_PROFILE
                    : any_snap           ? JP_BUSY_SNAPSHOT
                                         : JP_BUSY_NONE;
    rank_snap = s;
    if (out->count > 1)
        qsort(out->items, out->count, sizeof *out->items, cmp_row);
    rank_snap = NULL;
}

void jp_busy_summary_cleanup(jp_busy_summary *s)
{
    free(s->items);
    memset(s, 0, sizeof *s);
}

/* ---- words ---- */

/* "10s", "4m05s", "2h03m". */
static void span_text(int64_t ns, char *buf, size_t len)
{
    long long s = (long long)((ns + JP_NS_PER_SEC / 2) / JP_NS_PER_SEC);
    if (s < 0)
        s = 0;
    if (ns < JP_NS_PER_SEC)
        snprintf(buf, len, "%.1fs", ns < 0 ? 0.0 : (double)ns / 1e9);
    else if (s < 120)
        snprintf(buf, len, "%llds", s);
    else if (s < 7200)
        snprintf(buf, len, "%lldm%02llds", s / 60, s % 60);
    else
        snprintf(buf, len, "%lldh%02lldm", s / 3600, s / 60 % 60);
}

static size_t window_text(const jp_busy_summary *s, int64_t now_ns, char *buf, size_t len)
{
    char span[24], age[24];
    span_text(s->window_end_ns - s->window_start_ns, span, sizeof span);
    span_text(now_ns - s->window_end_ns, age, sizeof age);
    if (s->windows > 1)
        return (size_t)snprintf(buf, len, "the last %u windows, %s (ended %s ago)", s->windows,
                                span, age);
    return (size_t)snprintf(buf, len, "the last %s window (ended %s ago)", span, age);
}

/* "LEAD the last 10s window (ended 3s ago)" into buf (len > 0) when there
 * is a profile, else "": the length written. */
static size_t put_window(const jp_busy_summary *s, const char *lead, int64_t now_ns, char *buf,
                         size_t len)
{
    char w[128];
    buf[0] = 0;
    if (!s->have_profile)
        return 0;
    window_text(s, now_ns, w, sizeof w);
    size_t n = (size_t)snprintf(buf, len, "%s %s", lead, w);
    return n < len ? n : len - 1;
}

size_t jp_busy_row_describe(const jp_busy_summary *s, const jp_busy_row *r, const jp_snapshot *cur,
                            int64_t now_ns, char *buf, size_t len)
{
    char lead[48], age[24], ivl[24];
    if (!len)
        return 0;
    snprintf(lead, sizeof lead, "cpu %.0f%% over", r->profile_pct);
    size_t n = put_window(s, lead, now_ns, buf, len);
    if (n < len && r->thread >= 0 && cur && s->snapshot_ns > 0) {
        const jp_thread *t = &cur->threads[r->thread];
        span_text(now_ns - s->snapshot_ns, age, sizeof age);
        n += (size_t)snprintf(buf + n, len - n, "%ssnapshot %s old: %s", n ? "; " : "", age,
                              jp_thread_state_name(t->state));
        if (n < len && r->snapshot_pct >= 0 && s->snapshot_interval_ns > 0) {
            span_text(s->snapshot_interval_ns, ivl, sizeof ivl);
            n += (size_t)snprintf(buf + n, len - n, ", %.0f%% over %s between snapshots",
                                  r->snapshot_pct, ivl);
        }
    } else if (n < len && r->thread < 0 && s->snapshot_ns > 0) {
        n += (size_t)snprintf(buf + n, len - n, "%snot in the snapshot", n ? "; " : "");
    }
    if (n < len && !n)
        n += (size_t)snprintf(buf, len, "no CPU evidence");
    return n < len ? n : len - 1;
}

size_t jp_busy_summary_describe(const jp_busy_summary *s, int64_t now_ns, char *buf, size_t len)
{
    char age[24], ivl[24];
    if (!len)
        return 0;
    size_t n = put_window(s, s->profile_first ? "ranked by cpu profile of" : "with cpu profile of",
                          now_ns, buf, len);
    if (n < len && s->snapshot_ns > 0) {
        span_text(now_ns - s->snapshot_ns, age, sizeof age);
        n += (size_t)snprintf(buf + n, len - n, "%ssnapshot %s old", n ? "; " : "", age);
        if (n < len && s->have_snapshot) {
            span_text(s->snapshot_interval_ns, ivl, sizeof ivl);
            n += (size_t)snprintf(buf + n, len - n, ", CPU between snapshots over %s%s", ivl,
                                  s->profile_first ? "" : " (ranks)");
        } else if (n < len) {
            n += (size_t)snprintf(buf + n, len - n, ", no CPU between snapshots yet");
        }
    }
    if (n < len && !n)
        n += (size_t)snprintf(buf, len, "no CPU evidence");
    return n < len ? n : len - 1;
}
