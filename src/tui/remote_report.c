#include "tui/remote_report.h"

#include <stdio.h>
#include <string.h>

#include "base/timeutil.h"
#include "wire/query_json.h"

void tui_format_age(double s, char *buf, size_t len)
{
    if (s < 0) {
        snprintf(buf, len, "?");
        return;
    }
    long long t = (long long)s;
    if (t < 60)
        snprintf(buf, len, "%llds", t);
    else if (t < 3600)
        snprintf(buf, len, "%lldm%02llds", t / 60, t % 60);
    else if (t < 86400)
        snprintf(buf, len, "%lldh%02lldm", t / 3600, t % 3600 / 60);
    else
        snprintf(buf, len, "%lldd%02lldh", t / 86400, t % 86400 / 3600);
}

void tui_lock_text(const json_t *lock, char *buf, size_t len)
{
    if (json_is_string(lock)) {
        snprintf(buf, len, "%s", json_string_value(lock));
        return;
    }
    const char *cls = jp_query_str(lock, "class"), *id = jp_query_str(lock, "id");
    if (!cls && !id) {
        snprintf(buf, len, "(unknown lock)");
        return;
    }
    snprintf(buf, len, "%s@%s", cls ? cls : "?", id ? id : "?");
}

static const char *nz(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

/* "pod P pid N" of a target object. */
static void target_text(const json_t *t, char *buf, size_t len)
{
    const char *pod = jp_query_str(t, "pod");
    long long pid = jp_query_int(t, "pid", -1);
    if (pid >= 0)
        snprintf(buf, len, "%s (pid %lld)", pod ? pod : "?", pid);
    else
        snprintf(buf, len, "%s", pod ? pod : "?");
}

/* Seconds since an RFC 3339 time, or -1. */
static double age_of(const char *rfc)
{
    int64_t ns;
    if (!rfc || jp_rfc3339_parse(rfc, &ns, NULL) != JP_OK)
        return -1;
    return (double)(jp_time_now_ns() - ns) / 1e9;
}

void tui_rreport_header(const tui_remote *r, tui_lines *ls)
{
    const json_t *s = r->service;
    char kinds[96] = "", age[24];
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(s, "kinds"), i, k)
    {
        if (json_is_string(k)) {
            size_t n = strlen(kinds);
            snprintf(kinds + n, sizeof kinds - n, "%s%s", n ? ", " : "", json_string_value(k));
        }
    }
    tui_format_age(age_of(jp_query_str(s, "last_seen")), age, sizeof age);
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD, "%s/%s on %s", r->ns, r->svc, r->base);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0,
                  "pods: %zu  profiles: %s  last data %s ago  refresh: %.0f ms", r->npods,
                  *kinds ? kinds : "none yet", age, r->cost_ms);
}

static const json_t *snapshot_threads(const json_t *summary)
{
    const json_t *snap = json_object_get(summary, "snapshot");
    const json_t *inner = json_object_get(snap, "snapshot");
    if (json_is_object(inner))
        snap = inner;
    return json_object_get(snap, "threads");
}

static void states_text(const json_t *states, char *buf, size_t len)
{
    const char *order[] = {"RUNNABLE", "BLOCKED",    "WAITING", "TIMED_WAITING",
                           "NEW",      "TERMINATED", "UNKNOWN"};
    size_t n = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof order / sizeof *order && n < len; i++) {
        long long c = jp_query_int(states, order[i], 0);
        if (c > 0)
            n += (size_t)snprintf(buf + n, len - n, "%s%s %lld", n ? ", " : "", order[i], c);
    }
}

static const char *frame_of(const json_t *stack, size_t i)
{
    const json_t *f = json_array_get(stack, i);
    if (json_is_object(f))
        f = json_object_get(f, "name");
    return json_is_string(f) ? json_string_value(f) : NULL;
}

static void thread_row(const json_t *t, tui_lines *ls)
{
    double pct = jp_query_num(t, "cpu_pct", -1);
    long long ns = jp_query_int(t, "cpu_ns", -1);
    char p[16] = "     -", c[24] = "        -";
    if (pct >= 0)
        snprintf(p, sizeof p, "%6.1f", pct);
    if (ns >= 0)
        snprintf(c, sizeof c, "%8.2fs", (double)ns / 1e9);
    const char *state = jp_query_str(t, "state"), *name = jp_query_str(t, "name");
    const char *ev = jp_query_str(t, "evidence");
    const json_t *stack = json_object_get(t, "stack");
    if (!json_is_array(stack))
        stack = json_object_get(t, "stack_top");
    const char *top = frame_of(stack, 0);
    tui_lines_add(ls, pct >= 50 ? TUI_STYLE_WARN : TUI_STYLE_NORMAL, 0,
                  "%s %s  %-13s %-8s %-28s %s", p, c, state ? state : "?", ev ? ev : "-",
                  name ? name : "?", top ? top : "");
    const char *why = jp_query_str(t, "why");
    if (why)
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "%26s%s", "", why);
}

/* The snapshot's frames of the thread named name (the busy list carries
 * only the top few). */
static const json_t *stack_of(const json_t *all, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(all, i, t)
    {
        const char *n = jp_query_str(t, "name");
        if (n && name && !strcmp(n, name))
            return json_object_get(t, "stack");
    }
    return NULL;
}

void tui_rreport_threads(const tui_remote *r, size_t max, size_t frames, tui_lines *ls)
{
    const json_t *targets = json_object_get(r->threads, "targets");
    if (!json_array_size(targets)) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0,
                      "no thread snapshot in the last day (the agent takes them unless "
                      "jprof.io/threads=off)");
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(targets, i, e)
    {
        const json_t *sum = json_object_get(e, "summary");
        char who[160], age[24], states[200];
        target_text(json_object_get(e, "target"), who, sizeof who);
        tui_format_age(jp_query_num(e, "age_seconds", -1), age, sizeof age);
        states_text(json_object_get(sum, "states"), states, sizeof states);
        tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD, "%s  snapshot %s ago  %lld threads: %s", who,
                      age, jp_query_int(sum, "threads_total", 0), states);
        const json_t *busy = json_object_get(sum, "busy");
        const char *desc = jp_query_str(busy, "description");
        if (desc) /* what the ranking rests on, and how old it is */
            tui_lines_add(ls, TUI_STYLE_DIM, 0, "busy threads: %s", desc);
        tui_lines_add(ls, TUI_STYLE_TABLEHEAD, 0, "  CPU%%  CPU TIME  %-13s %-8s %-28s %s", "STATE",
                      "EVIDENCE", "THREAD", "TOP FRAME");
        /* the server's ranking; the full snapshot (full=1) only lends stacks */
        const json_t *all = json_object_get(busy, "threads");
        const json_t *snap = snapshot_threads(sum);
        if (!json_array_size(all) && json_is_array(snap))
            all = snap;
        size_t k;
        json_t *t;
        json_array_foreach(all, k, t)
        {
            if (max && k >= max) {
                tui_lines_add(ls, TUI_STYLE_DIM, 0, "  ... %zu more", json_array_size(all) - k);
                break;
            }
            thread_row(t, ls);
            const json_t *stack = stack_of(snap, jp_query_str(t, "name"));
            if (!stack)
                stack = json_object_get(t, "stack_top");
            for (size_t f = 1; f < frames && frame_of(stack, f); f++)
                tui_lines_add(ls, TUI_STYLE_DIM, 0, "%44s at %s", "", frame_of(stack, f));
        }
        const char *conf = jp_query_str(busy, "confidence");
        if (conf)
            tui_lines_add(ls, TUI_STYLE_DIM, 0, "CPU%% evidence: %s", conf);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    }
}

static void lock_entry(const json_t *l, tui_lines *ls)
{
    char lock[256];
    tui_lock_text(json_object_get(l, "lock"), lock, sizeof lock);
    const json_t *owner = json_object_get(l, "owner");
    const char *on = jp_query_str(owner, "name");
    const json_t *waiters = json_object_get(l, "waiters");
    if (on)
        tui_lines_add(ls, TUI_STYLE_WARN, TUI_F_BOLD, "%s  held by %s, blocks %lld thread%s%s",
                      lock, on, jp_query_int(l, "owner_blocks", 0),
                      jp_query_int(l, "owner_blocks", 0) == 1 ? "" : "s",
                      json_is_true(json_object_get(l, "chain_cycles")) ? "  DEADLOCK CYCLE" : "");
    else
        tui_lines_add(ls, TUI_STYLE_NORMAL, TUI_F_BOLD, "%s  no owner (%zu waiting)", lock,
                      json_array_size(waiters));
    const json_t *chain = json_object_get(l, "owner_chain");
    if (json_array_size(chain) > 1) {
        char buf[512] = "";
        size_t n = 0, i;
        json_t *c;
        json_array_foreach(chain, i, c)
        {
            if (json_is_string(c) && n < sizeof buf)
                n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? " -> " : "",
                                      json_string_value(c));
        }
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "    owner chain: %s", buf);
    }
    size_t i;
    json_t *w;
    json_array_foreach(waiters, i, w)
    {
        const char *n = jp_query_str(w, "name"), *s = jp_query_str(w, "state");
        if (json_is_false(json_object_get(w, "contends")))
            continue; /* idle on the same object (Object.wait): not contention */
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "    waiting: %s (%s)", n ? n : "?", s ? s : "?");
    }
}

void tui_rreport_locks(const tui_remote *r, tui_lines *ls)
{
    const json_t *targets = json_object_get(r->threads, "targets");
    if (!json_array_size(targets)) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "no thread snapshot in the last day");
        return;
    }
    size_t i;
    json_t *e;
    json_array_foreach(targets, i, e)
    {
        const json_t *sum = json_object_get(e, "summary");
        char who[160], age[24];
        target_text(json_object_get(e, "target"), who, sizeof who);
        tui_format_age(jp_query_num(e, "age_seconds", -1), age, sizeof age);
        const json_t *blocked = json_object_get(sum, "blocked");
        const json_t *locks = json_object_get(sum, "locks");
        tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD,
                      "%s  snapshot %s ago  %zu contended lock%s, %lld thread%s waiting", who, age,
                      json_array_size(locks), json_array_size(locks) == 1 ? "" : "s",
                      jp_query_int(blocked, "count", 0),
                      jp_query_int(blocked, "count", 0) == 1 ? "" : "s");
        size_t k;
        json_t *l;
        json_array_foreach(locks, k, l) lock_entry(l, ls);
        if (!json_array_size(locks))
            tui_lines_add(ls, TUI_STYLE_DIM, 0, "  0 contended locks");
        json_array_foreach(json_object_get(sum, "idle"), k, l)
        {
            const char *pool = jp_query_str(l, "pool"), *where = jp_query_str(l, "where");
            long long n = jp_query_int(l, "count", 0);
            tui_lines_add(ls, TUI_STYLE_DIM, 0, "  %lld idle %s: %s, waiting in %s", n,
                          n == 1 ? "thread" : "threads", pool ? pool : "?", where ? where : "?");
        }
        json_t *o;
        json_array_foreach(json_object_get(blocked, "owners"), k, o)
        {
            const char *n = jp_query_str(o, "name"), *s = jp_query_str(o, "state");
            tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "  %s (%s) blocks %lld thread(s)", n ? n : "?",
                          s ? s : "?", jp_query_int(o, "blocks", 0));
        }
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    }
}

static void deadlock_entry(const json_t *d, tui_lines *ls)
{
    const json_t *dl = json_object_get(d, "deadlock");
    if (!json_is_object(dl))
        dl = d; /* an event stored flat */
    const json_t *threads = json_object_get(dl, "threads");
    char who[160], age[24];
    target_text(json_object_get(d, "target"), who, sizeof who);
    tui_format_age(age_of(jp_query_str(d, "time")), age, sizeof age);
    tui_lines_add(ls, TUI_STYLE_WARN, TUI_F_BOLD, "DEADLOCK in %s, %zu threads, seen %s ago", who,
                  json_array_size(threads), age);
    size_t n = json_array_size(threads), i;
    json_t *t;
    json_array_foreach(threads, i, t)
    {
        char waits[256], holds[256];
        const char *name = jp_query_str(t, "name");
        const char *next = jp_query_str(json_array_get(threads, (i + 1) % n), "name");
        tui_lock_text(json_object_get(t, "waits_for"), waits, sizeof waits);
        tui_lock_text(json_object_get(t, "holds"), holds, sizeof holds);
        tui_lines_add(ls, TUI_STYLE_NORMAL, TUI_F_BOLD, "  %s", name ? name : "?");
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "      waits for %s (held by %s)", waits,
                      next ? next : "?");
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "      holds     %s", holds);
        const json_t *stack = json_object_get(t, "stack");
        for (size_t k = 0; k < 4 && frame_of(stack, k); k++)
            tui_lines_add(ls, TUI_STYLE_DIM, 0, "        at %s", frame_of(stack, k));
        if (i + 1 < n)
            tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "    |");
    }
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "    -> back to %s",
                  nz(jp_query_str(json_array_get(threads, 0), "name"), "?"));
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
}

void tui_rreport_deadlocks(const tui_remote *r, tui_lines *ls)
{
    const json_t *list = json_object_get(r->deadlocks, "deadlocks");
    if (!json_array_size(list)) {
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "no deadlock in the last hour");
        return;
    }
    size_t i;
    json_t *d;
    json_array_foreach(list, i, d) deadlock_entry(d, ls);
}

void tui_rreport_target_head(char *buf, size_t len)
{
    snprintf(buf, len, "%-28s %7s  %-9s %-18s %-20s %8s %9s", "POD", "PID", "STATE", "REASON",
             "KINDS", "WINDOWS", "LAST SEEN");
}

bool tui_rreport_target_row(const json_t *t, char *buf, size_t len)
{
    const json_t *id = json_object_get(t, "target");
    char kinds[64] = "", age[24];
    size_t k, n = 0;
    json_t *x;
    json_array_foreach(json_object_get(t, "kinds"), k, x)
    {
        if (json_is_string(x) && n < sizeof kinds)
            n += (size_t)snprintf(kinds + n, sizeof kinds - n, "%s%s", n ? "," : "",
                                  json_string_value(x));
    }
    tui_format_age(age_of(jp_query_str(t, "last_seen")), age, sizeof age);
    const char *st = jp_query_str(t, "state"), *why = jp_query_str(t, "reason");
    snprintf(buf, len, "%-28s %7lld  %-9s %-18s %-20s %8lld %8s", nz(jp_query_str(id, "pod"), "?"),
             jp_query_int(id, "pid", 0), st ? st : "-", why ? why : "-", *kinds ? kinds : "-",
             jp_query_int(t, "windows", 0), age);
    return st && strcmp(st, "active");
}

static void status_targets(const tui_remote *r, tui_lines *ls)
{
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD, "pods and JVMs (last day)");
    char row[512];
    tui_rreport_target_head(row, sizeof row);
    tui_lines_add(ls, TUI_STYLE_TABLEHEAD, 0, "%s", row);
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(r->targets, "targets"), i, t)
    {
        bool bad = tui_rreport_target_row(t, row, sizeof row);
        tui_lines_add(ls, bad ? TUI_STYLE_WARN : TUI_STYLE_NORMAL, 0, "%s", row);
    }
    if (!json_array_size(json_object_get(r->targets, "targets")))
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "no target reported in the last day");
}

static void status_history(const tui_remote *r, tui_lines *ls)
{
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD, "status history (newest first)");
    size_t i;
    json_t *h;
    json_array_foreach(json_object_get(r->targets, "history"), i, h)
    {
        const char *tm = jp_query_str(h, "time"), *st = jp_query_str(h, "state");
        const char *why = jp_query_str(h, "reason"), *msg = jp_query_str(h, "message");
        const char *eng = jp_query_str(h, "engine");
        tui_lines_add(ls, st && strcmp(st, "active") ? TUI_STYLE_WARN : TUI_STYLE_NORMAL, 0,
                      "%s  %-24s %-9s %-16s %s%s%s", tm ? tm : "?",
                      nz(jp_query_str(json_object_get(h, "target"), "pod"), "?"), st ? st : "-",
                      why ? why : "-", msg ? msg : "", eng ? "  engine " : "", eng ? eng : "");
    }
}

static void status_ingestion(const tui_remote *r, tui_lines *ls)
{
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD, "ingestion (last hour, per agent)");
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r->ingestion, "collectors"), i, c)
    {
        const json_t *q = json_object_get(c, "queue");
        char seen[24], hb[24];
        tui_format_age(age_of(jp_query_str(c, "last_seen")), seen, sizeof seen);
        tui_format_age(age_of(jp_query_str(c, "last_heartbeat")), hb, sizeof hb);
        long long rej = jp_query_int(c, "rejected", 0);
        long long drop = jp_query_int(q, "dropped_batches", 0);
        const char *why = jp_query_str(c, "last_reject_reason");
        char rejected[200] = "";
        if (why)
            snprintf(rejected, sizeof rejected, " (last: %s)", why);
        tui_lines_add(ls, rej || drop ? TUI_STYLE_WARN : TUI_STYLE_NORMAL, 0,
                      "%s %s: %lld batches accepted, %lld duplicate, %lld rejected%s; last "
                      "batch %s ago, heartbeat %s ago",
                      nz(jp_query_str(c, "collector"), "?"), nz(jp_query_str(c, "version"), ""),
                      jp_query_int(c, "accepted", 0), jp_query_int(c, "duplicate", 0), rej,
                      rejected, seen, hb);
        tui_lines_add(ls, drop ? TUI_STYLE_WARN : TUI_STYLE_DIM, 0,
                      "    agent queue: %lld bytes queued, %lld batches (%lld bytes) dropped%s%s",
                      jp_query_int(q, "bytes", 0), drop, jp_query_int(q, "dropped_bytes", 0),
                      jp_query_str(q, "oldest_dropped") ? ", oldest dropped " : "",
                      nz(jp_query_str(q, "oldest_dropped"), ""));
    }
    if (!json_array_size(json_object_get(r->ingestion, "collectors")))
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "no agent sent anything in the last hour");
}

void tui_rreport_status(const tui_remote *r, tui_lines *ls)
{
    status_targets(r, ls);
    status_history(r, ls);
    status_ingestion(r, ls);
}
