#include "tui/report_target.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/units.h"
#include "tui/report_profile.h"
#include "wire/snapshot_json.h"

/* the busiest threads the text report lists */
#define TEXT_BUSY_MAX 20

void tui_format_uptime(int64_t ns, char *buf, size_t len)
{
    if (ns < 0) {
        snprintf(buf, len, "?");
        return;
    }
    int64_t s = ns / JP_NS_PER_SEC;
    if (s < 3600)
        snprintf(buf, len, "%" PRId64 "m%02" PRId64 "s", s / 60, s % 60);
    else if (s < 86400)
        snprintf(buf, len, "%" PRId64 "h%02" PRId64 "m", s / 3600, s / 60 % 60);
    else
        snprintf(buf, len, "%" PRId64 "d%02" PRId64 "h", s / 86400, s / 3600 % 24);
}

static const char *tname(const tui_target *l, size_t i)
{
    return l->cur->threads[i].name ? l->cur->threads[i].name : "?";
}

static void frame_text(const jp_thread *t, int32_t depth, char *buf, size_t len)
{
    if (depth < 0 || (size_t)depth >= t->nframes) {
        snprintf(buf, len, "(no frame)");
        return;
    }
    jp_snap_frame_format(&t->frames[depth], buf, len);
}

void tui_report_header(const tui_target *l, tui_lines *ls)
{
    const jvm_proc *p = &l->proc;
    char up[32], when[48];
    tui_format_uptime(l->cur && l->cur->uptime_ns >= 0 ? l->cur->uptime_ns : p->uptime_ns, up,
                      sizeof up);
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD, "%s%spid %d  %s  %s  up %s  user %s", l->where,
                  l->where[0] ? "  " : "", (int)p->pid,
                  p->main_class[0] ? p->main_class : "(unknown main class)",
                  l->jvm_version[0] ? l->jvm_version : "JVM ?", up, p->user);
    if (!l->cur)
        return;
    jp_rfc3339_format(l->cur->taken_ns, when, sizeof when);
    char interval[32] = "none";
    if (l->busy.interval_ns > 0)
        snprintf(interval, sizeof interval, "%.0f ms", (double)l->busy.interval_ns / 1e6);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "snapshot: %s at %s, CPU interval %s", l->cur->source,
                  when, interval);
    if (l->fallback.code != JP_OK)
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "helper not used, thread-print instead: %s",
                      l->fallback.msg);
    char states[256] = "";
    size_t n = 0;
    for (int s = 1; s < JP_TSTATE_COUNT; s++)
        if (l->states[s] && n < sizeof states)
            n += (size_t)snprintf(states + n, sizeof states - n, ", %s %zu",
                                  jp_thread_state_name((jp_thread_state)s), l->states[s]);
    if (l->states[0] && n < sizeof states)
        snprintf(states + n, sizeof states - n, ", VM-internal %zu", l->states[0]);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "threads: %zu%s", l->cur->count, states);
    char cpu[32] = "?";
    if (l->proc_cpu_pct >= 0)
        snprintf(cpu, sizeof cpu, "%.1f%%", l->proc_cpu_pct);
    char cost[96] = "";
    if (l->nrefresh) /* a stored snapshot shown once has no refresh of ours */
        snprintf(cost, sizeof cost, "  jprof cost: %.0f ms per refresh (snapshot %.0f ms)",
                 l->cost_ms, l->snapshot_ms);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "process CPU: %s of one core  heap: %s%s", cpu,
                  l->heap[0] ? l->heap : "?", cost);
}

void tui_report_busy(const tui_target *l, size_t max, tui_lines *ls)
{
    const jp_busy_summary *r = &l->rank;
    int64_t now = jp_time_now_ns();
    char why[512];
    jp_busy_summary_describe(r, now, why, sizeof why);
    tui_lines_add(ls, TUI_STYLE_DIM, 0, "%s", why);
    tui_lines_add(ls, TUI_STYLE_TABLEHEAD, TUI_F_BOLD, "%6s %10s %-14s %-8s %s", "CPU%", "CPU",
                  "STATE", "EVIDENCE", "THREAD / TOP FRAME");
    for (size_t i = 0; i < r->count && i < max; i++) {
        const jp_busy_row *b = &r->items[i];
        const jp_thread *t = b->thread >= 0 ? &l->cur->threads[b->thread] : NULL;
        char pct[16] = "-", cpu[32] = "-", top[512] = "-";
        if (b->cpu_pct >= 0)
            snprintf(pct, sizeof pct, "%.1f", b->cpu_pct);
        if (t && t->cpu_ns >= 0)
            jp_format_ns((uint64_t)t->cpu_ns, cpu, sizeof cpu);
        if (t && t->nframes)
            frame_text(t, 0, top, sizeof top);
        jp_busy_row_describe(r, b, l->cur, now, why, sizeof why);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%6s %10s %-14s %-8s %s  at %s", pct, cpu,
                      t ? jp_thread_state_name(t->state) : "?", jp_busy_evidence_name(b->evidence),
                      b->name, top);
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "%43s%s", "", why);
    }
}

static void report_group(const tui_target *l, const jp_lock_group *g, tui_lines *ls)
{
    const jp_snapshot *s = l->cur;
    char lock[512];
    jp_lock_ref_format(&g->lock, lock, sizeof lock);
    const char *kind = g->lock.kind == JP_LOCK_MONITOR ? "monitor" : "synchronizer";
    if (g->owner >= 0) {
        const jp_thread *o = &s->threads[g->owner];
        tui_lines_add(ls, TUI_STYLE_ACTIVE, TUI_F_BOLD,
                      "%s (%s): owner \"%s\" (%s) blocks %zu thread%s%s", lock, kind, o->name,
                      jp_thread_state_name(o->state), g->owner_blocks,
                      g->owner_blocks == 1 ? "" : "s", g->chain_cycles ? "  DEADLOCK" : "");
        if (g->nchain > 1) {
            char chain[768];
            size_t n = 0;
            for (size_t k = 0; k < g->nchain && n < sizeof chain; k++)
                n += (size_t)snprintf(chain + n, sizeof chain - n, "%s\"%s\"", k ? " -> " : "",
                                      tname(l, g->owner_chain[k]));
            tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "    owner chain: %s%s", chain,
                          g->chain_cycles ? " -> (cycle)" : "");
        }
        char at[512];
        frame_text(o, jp_thread_app_frame(o, 0), at, sizeof at);
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "    owner at %s", at);
    } else {
        tui_lines_add(ls, TUI_STYLE_ACTIVE, TUI_F_BOLD,
                      "%s (%s): no owner (waiting for a notify "
                      "or a signal)",
                      lock, kind);
    }
    for (size_t k = 0; k < g->ncontending; k++) {
        const jp_thread *w = &s->threads[g->waiters[k]];
        char at[512];
        frame_text(w, jp_thread_app_frame(w, 0), at, sizeof at);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "    %-8s \"%s\" (%s) at %s",
                      jp_wait_kind_name(w->wait_kind), w->name, jp_thread_state_name(w->state), at);
    }
}

/* Idle threads, one line per pool and place; expanded, their names too. */
static void report_idle(const tui_target *l, bool expanded, tui_lines *ls)
{
    jp_idle_list il;
    jp_analyze_idle(l->cur, &il);
    if (il.count)
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    for (size_t i = 0; i < il.count; i++) {
        const jp_idle_pool *p = &il.items[i];
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "%zu idle %s: %s, %s in %s", p->count,
                      p->count == 1 ? "thread" : "threads", p->pool,
                      p->state == JP_TSTATE_TIMED_WAITING ? "timed-waiting" : "waiting", p->where);
        for (size_t k = 0; expanded && k < p->count; k++)
            tui_lines_add(ls, TUI_STYLE_DIM, 0, "    %s", tname(l, p->threads[k]));
    }
    jp_idle_list_cleanup(&il);
}

void tui_report_locks(const tui_target *l, tui_lines *ls)
{
    tui_report_locks_idle(l, false, ls);
}

void tui_report_locks_idle(const tui_target *l, bool expanded, tui_lines *ls)
{
    if (!l->cur)
        return;
    const jp_lock_group_list *g = &l->locks;
    if (!g->ncontended)
        tui_lines_add(ls, TUI_STYLE_NORMAL, TUI_F_BOLD, "0 contended locks");
    else
        tui_lines_add(ls, TUI_STYLE_NORMAL, TUI_F_BOLD,
                      "%zu contended lock%s, %zu thread%s waiting", g->ncontended,
                      g->ncontended == 1 ? "" : "s", g->contending_threads,
                      g->contending_threads == 1 ? "" : "s");
    for (size_t i = 0; i < g->ncontended; i++) {
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
        report_group(l, &g->items[i], ls);
    }
    report_idle(l, expanded, ls);
}

static void report_member(const tui_target *l, const jp_deadlock *d, size_t k, tui_lines *ls)
{
    const jp_deadlock_member *m = &d->members[k];
    const jp_deadlock_member *next = &d->members[(k + 1) % d->count];
    const jp_thread *t = &l->cur->threads[m->thread];
    char lock[512], at[512];
    jp_lock_ref_format(&m->waits_for, lock, sizeof lock);
    frame_text(t, m->waits_for.frame, at, sizeof at);
    tui_lines_add(ls, TUI_STYLE_ACTIVE, TUI_F_BOLD, "  \"%s\" (%s)", t->name,
                  jp_thread_state_name(t->state));
    tui_lines_add(ls, TUI_STYLE_WARN, 0, "      waits for %s  held by \"%s\"", lock,
                  tname(l, next->thread));
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "          at %s", at);
    jp_lock_ref_format(&m->holds, lock, sizeof lock);
    if (m->holds.frame >= 0) {
        frame_text(t, m->holds.frame, at, sizeof at);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "      holds     %s  taken at %s", lock, at);
    } else {
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "      holds     %s", lock);
    }
    /* the application frames where it waits (JDK frames above are noise) */
    int32_t app = jp_thread_app_frame(t, 0);
    for (size_t f = (size_t)(app > 0 ? app : 0); f < t->nframes && (int32_t)f < app + 3; f++) {
        frame_text(t, (int32_t)f, at, sizeof at);
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "          | %s", at);
    }
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s",
                  k + 1 < d->count ? "          v" : "          v (back to the first)");
}

void tui_report_deadlocks(const tui_target *l, tui_lines *ls)
{
    if (!l->cur)
        return;
    if (!l->deadlocks.count) {
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "no deadlock");
        return;
    }
    for (size_t i = 0; i < l->deadlocks.count; i++) {
        const jp_deadlock *d = &l->deadlocks.items[i];
        char names[512];
        size_t n = 0;
        for (size_t k = 0; k < d->count && n < sizeof names; k++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s\"%s\"", k ? " -> " : "",
                                  tname(l, d->members[k].thread));
        if (i)
            tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
        tui_lines_add(ls, TUI_STYLE_WARN, TUI_F_BOLD, "DEADLOCK %zu: %zu threads%s%s: %s -> \"%s\"",
                      i + 1, d->count, d->jvm_confirmed ? ", confirmed by the JVM" : "",
                      d->mixed ? ", monitors and synchronizers" : "", names,
                      tname(l, d->members[0].thread));
        for (size_t k = 0; k < d->count; k++)
            report_member(l, d, k, ls);
    }
}

void tui_report_stack(const tui_target *l, size_t thread, tui_lines *ls)
{
    if (!l->cur || thread >= l->cur->count)
        return;
    const jp_thread *t = &l->cur->threads[thread];
    char cpu[32] = "?";
    if (t->cpu_ns >= 0)
        jp_format_ns((uint64_t)t->cpu_ns, cpu, sizeof cpu);
    tui_lines_add(ls, TUI_STYLE_ACTIVE, TUI_F_BOLD,
                  "\"%s\"  id %" PRId64 "  nid %" PRId64 "  %s%s%s%s  CPU %s", t->name, t->id,
                  t->native_id, jp_thread_state_name(t->state), t->state_detail ? " (" : "",
                  t->state_detail ? t->state_detail : "", t->state_detail ? ")" : "", cpu);
    if (l->blocks && l->blocks[thread])
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "blocks %zu thread%s", l->blocks[thread],
                      l->blocks[thread] == 1 ? "" : "s");
    char lock[512], buf[512];
    if (t->wait_kind != JP_WAIT_NONE) {
        jp_lock_ref_format(&t->wait_lock, lock, sizeof lock);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s %s%s%s%s", jp_wait_kind_name(t->wait_kind), lock,
                      t->wait_owner_name ? "  owned by \"" : "",
                      t->wait_owner_name ? t->wait_owner_name : "", t->wait_owner_name ? "\"" : "");
    }
    for (size_t f = 0; f < t->nframes; f++) {
        jp_snap_frame_format(&t->frames[f], buf, sizeof buf);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "    at %s", buf);
        if (t->wait_kind != JP_WAIT_NONE && t->wait_lock.frame == (int32_t)f) {
            jp_lock_ref_format(&t->wait_lock, lock, sizeof lock);
            tui_lines_add(ls, TUI_STYLE_WARN, 0, "       - %s %s", jp_wait_kind_name(t->wait_kind),
                          lock);
        }
        for (size_t h = 0; h < t->nheld; h++) {
            if (t->held[h].frame != (int32_t)f)
                continue;
            jp_lock_ref_format(&t->held[h], lock, sizeof lock);
            tui_lines_add(ls, TUI_STYLE_DIM, 0, "       - locked %s", lock);
        }
    }
    if (t->frames_truncated)
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "    ... (stack cut)");
    for (size_t h = 0; h < t->nheld; h++) {
        if (t->held[h].frame >= 0)
            continue;
        jp_lock_ref_format(&t->held[h], lock, sizeof lock);
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "    owns %s", lock);
    }
}

void tui_report_status(const tui_target *l, tui_lines *ls)
{
    const char *words = l->ops->how ? l->ops->how : "";
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD, "source: %s%s%s", l->ops->name,
                  *words ? ", " : "", words);
    if (l->where[0])
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "target: %s", l->where);
    if (l->jvm_vm[0])
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "JVM: %s", l->jvm_vm);
    if (l->ops->status) {
        l->ops->status(l, ls);
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    }
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_report_header(l, ls);
    tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "snapshots: %u taken, every %.3g s", l->nrefresh,
                  (double)l->opts.interval_ns / 1e9);
    char label[200];
    tui_target_prof_label(l, label, sizeof label);
    const tui_target_prof *p = &l->prof;
    if (!p->running)
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "profile: not running (the Flame screen starts %s)",
                      label);
    else
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "profile: %s; last window read cost %.0f ms", label,
                      p->cost_ms);
    if (p->error.code != JP_OK)
        tui_lines_add(ls, TUI_STYLE_WARN, 0, "profile: %s", p->error.msg);
}

json_t *tui_report_target_json(const tui_target *l)
{
    jp_snapjson_target tg = {.pid = (int)l->proc.pid,
                             .main_class = l->proc.main_class,
                             .user = l->proc.user,
                             .jvm_version = l->jvm_version[0] ? l->jvm_version : NULL,
                             .start_ns = l->proc.start_ns};
    jp_snapjson_opts jo;
    jp_snapjson_opts_init(&jo);
    jo.cpu = &l->cpu;
    if (l->ops->busy)
        jo.busy = &l->busy; /* the source's own snapshot evidence */
    jo.now_ns = jp_time_now_ns();
    json_t *j = jp_snapshot_json(l->cur, l->prev, &tg, &jo);
    /* the snapshot's process figures (bytes), with the header's words */
    json_t *proc = json_object_get(j, "process");
    json_object_set_new(proc, "cpu_pct",
                        l->proc_cpu_pct >= 0 ? json_real(l->proc_cpu_pct) : json_null());
    json_object_set_new(proc, "heap", l->heap[0] ? json_string(l->heap) : json_null());
    json_t *cost = json_object();
    json_object_set_new(cost, "refresh_ms", json_real(l->cost_ms));
    json_object_set_new(cost, "snapshot_ms", json_real(l->snapshot_ms));
    json_object_set_new(j, "jprof", cost);
    /* where the data came from: "pid" (attach on this machine), "kubectl" */
    json_object_set_new(j, "via", json_string(l->ops->name));
    json_object_set_new(j, "where", l->where[0] ? json_string(l->where) : json_null());
    json_object_set_new(j, "fallback",
                        l->fallback.code != JP_OK ? json_string(l->fallback.msg) : json_null());
    return j;
}

void tui_report_target_lines(const tui_target *l, unsigned sections, tui_lines *ls)
{
    tui_report_header(l, ls);
    if (sections & TUI_REPORT_BUSY) {
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
        tui_lines_add(ls, TUI_STYLE_TITLE, 0, "BUSY THREADS (top %d)", TEXT_BUSY_MAX);
        tui_report_busy(l, TEXT_BUSY_MAX, ls);
    }
    if (sections & TUI_REPORT_LOCKS) {
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
        tui_lines_add(ls, TUI_STYLE_TITLE, 0, "LOCKS");
        tui_report_locks_idle(l, true, ls);
    }
    if (sections & TUI_REPORT_DEADLOCKS) {
        tui_lines_add(ls, TUI_STYLE_NORMAL, 0, "%s", "");
        tui_lines_add(ls, TUI_STYLE_TITLE, 0, "DEADLOCKS");
        tui_report_deadlocks(l, ls);
    }
}

jp_err tui_report_target_write(const tui_target *l, tui_format format, long n, FILE *out)
{
    jp_error err;
    jp_error_init(&err);
    if (format == TUI_FORMAT_JSON)
        return tui_write_json_line(out, tui_report_target_json(l), JSON_ENSURE_ASCII, &err);
    tui_lines ls;
    tui_lines_init(&ls);
    if (n > 0)
        tui_lines_add(&ls, TUI_STYLE_NORMAL, 0, "%s", "");
    tui_report_target_lines(l, TUI_REPORT_ALL, &ls);
    jp_err rc = tui_lines_write(&ls, out);
    tui_lines_cleanup(&ls);
    if (rc == JP_OK && fflush(out) != 0)
        rc = JP_ERR_IO;
    return rc;
}
