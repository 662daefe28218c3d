#include "tui/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "model/units.h"

void tui_target_opts_init(tui_target_opts *o)
{
    memset(o, 0, sizeof *o);
    o->interval_ns = 2 * JP_NS_PER_SEC;
    o->window_ns = 30 * JP_NS_PER_SEC;
    o->source = JVM_SNAP_AUTO;
}

/* ---- header numbers ---- */

/* ---- open / refresh ---- */

static void analyses_cleanup(tui_target *l)
{
    jp_busy_list_cleanup(&l->busy);
    jp_busy_summary_cleanup(&l->rank);
    jp_lock_group_list_cleanup(&l->locks);
    jp_deadlock_list_cleanup(&l->deadlocks);
    free(l->blocks);
    l->blocks = NULL;
}

tui_target *tui_target_new(const tui_target_opts *o, const tui_source_ops *ops, void *src)
{
    tui_target *l = jp_xcalloc(1, sizeof *l);
    l->opts = *o;
    l->ops = ops;
    l->src = src;
    l->proc_cpu_pct = -1;
    l->stat.cpu_ns = -1;
    jvm_attach_opts_init(&l->attach);
    jvm_snap_opts_init(&l->snap);
    l->snap.source = o->source;
    jp_error_init(&l->fallback);
    jp_error_init(&l->prof.error);
    tui_heap_init(&l->histograms);
    return l;
}

jp_err tui_target_heap(tui_target *l, jp_error *err)
{
    jp_err rc = l->ops->heap ? l->ops->heap(l, l->opts.heap_all, err)
                             : jp_error_set(err, JP_ERR_UNSUPPORTED,
                                            "the %s source has no class histograms", l->ops->name);
    if (rc != JP_OK)
        snprintf(l->histograms.error, sizeof l->histograms.error, "class histogram: %.280s",
                 err->msg);
    return rc;
}

void tui_target_free(tui_target *l)
{
    if (!l)
        return;
    tui_target_prof_stop(l);
    if (l->ops->close)
        l->ops->close(l);
    analyses_cleanup(l);
    jp_cpu_evidence_cleanup(&l->cpu);
    jp_snapshot_free(l->prev);
    jp_snapshot_free(l->cur);
    tui_heap_cleanup(&l->histograms);
    free(l);
}

/* The header's process CPU and heap, from what the source read with the
 * snapshot (jvm/procstat.h: the pid source, the probe in a pod, the agent
 * through jprof-server); what it could not read stays as it was. */
static void header_figures(tui_target *l, const jp_snapshot *s)
{
    if (s->proc_cpu_pct >= 0)
        l->proc_cpu_pct = s->proc_cpu_pct;
    if (s->heap_used >= 0 && s->heap_committed >= 0) {
        char u[32], c[32];
        jp_format_bytes((uint64_t)s->heap_used, u, sizeof u);
        jp_format_bytes((uint64_t)s->heap_committed, c, sizeof c);
        snprintf(l->heap, sizeof l->heap, "%s of %s", u, c);
    }
}

void tui_target_accept(tui_target *l, jp_snapshot *s)
{
    header_figures(l, s);
    jp_snapshot_free(l->prev);
    /* CPU deltas only compare snapshots of one source. */
    if (l->cur && strcmp(l->cur->source, s->source) == 0) {
        l->prev = l->cur;
    } else {
        jp_snapshot_free(l->cur);
        l->prev = NULL;
    }
    l->cur = s;
    analyses_cleanup(l);
    if (l->ops->busy)
        l->ops->busy(l, &l->busy);
    else
        jp_analyze_busy(l->prev, l->cur, &l->busy);
    tui_target_rank(l);
    jp_analyze_locks(l->cur, &l->locks);
    jp_analyze_deadlocks(l->cur, &l->deadlocks);
    l->blocks = jp_analyze_blocks_counts(l->cur);
    jp_snapshot_count_states(l->cur, l->states);
}

void tui_target_rank(tui_target *l)
{
    jp_busy_summary_cleanup(&l->rank);
    jp_cpu_evidence_cleanup(&l->cpu);
    jp_cpu_evidence_init(&l->cpu);
    if (l->ops->cpu) {
        l->ops->cpu(l, &l->cpu);
    } else if (l->prof.profile) {
        /* the window shown, not the older chunks the dump also held */
        l->cpu.start_ns = l->prof.rep.start_ns;
        l->cpu.end_ns = l->prof.rep.end_ns;
        jp_cpu_evidence_add_profile(&l->cpu, l->prof.profile);
    }
    if (l->cur)
        jp_busy_rank(l->cur, &l->busy, &l->cpu, &l->rank);
}

jp_err tui_target_refresh(tui_target *l, jp_error *err)
{
    int64_t t0 = jp_time_mono_ns();
    jp_snapshot *s = NULL;
    jp_err rc = l->ops->refresh(l, &s, err);
    if (rc != JP_OK)
        return rc;
    tui_target_accept(l, s);
    l->refreshed_mono = jp_time_mono_ns();
    l->cost_ms = (double)(l->refreshed_mono - t0) / 1e6;
    l->nrefresh++;
    return JP_OK;
}

/* ---- live profile ---- */

jp_err tui_target_prof_start(tui_target *l, jp_error *err)
{
    if (l->prof.running)
        return JP_OK;
    jp_err rc = l->ops->prof_start(l, err);
    if (rc != JP_OK) {
        l->prof.error = *err;
        return rc;
    }
    l->prof.running = true;
    l->prof.started_mono = jp_time_mono_ns();
    jp_error_init(&l->prof.error);
    return JP_OK;
}

void tui_target_io_free(jp_io_detail *d)
{
    if (d)
        jp_io_detail_cleanup(d);
    free(d);
}

jp_err tui_target_prof_dump(tui_target *l, jp_error *err)
{
    if (!l->prof.running)
        return jp_error_set(err, JP_ERR_USAGE, "no live profile running");
    int64_t t0 = jp_time_mono_ns();
    jp_profile *p = NULL;
    jfr_report rep;
    jfr_report_init(&rep);
    bool live_tail = false;
    jp_err rc = l->ops->prof_read(l, &p, &rep, &live_tail, err);
    if (rc != JP_OK) {
        l->prof.error = *err;
        return rc;
    }
    if (!p)
        return JP_OK; /* the source says nothing changed */
    /* the title shows start +span: the window, not the older chunks read */
    if (rep.end_ns - rep.start_ns > l->opts.window_ns)
        rep.start_ns = rep.end_ns - l->opts.window_ns;
    /* the previous window lives one dump longer: a view may still borrow it */
    jp_profile_free(l->prof.prev_profile);
    l->prof.prev_profile = l->prof.profile;
    l->prof.profile = p;
    tui_target_io_free(l->prof.prev_io);
    l->prof.prev_io = l->prof.io;
    l->prof.io = l->prof.io_next;
    l->prof.io_next = NULL;
    l->prof.rep = rep;
    l->prof.live_tail = live_tail;
    l->prof.dumped_mono = jp_time_mono_ns();
    l->prof.cost_ms = (double)(l->prof.dumped_mono - t0) / 1e6;
    jp_error_init(&l->prof.error);
    tui_target_rank(l);
    return JP_OK;
}

void tui_target_prof_stop(tui_target *l)
{
    l->ops->prof_stop(l);
    l->prof.running = false;
    jp_profile_free(l->prof.profile);
    jp_profile_free(l->prof.prev_profile);
    l->prof.profile = l->prof.prev_profile = NULL;
    tui_target_io_free(l->prof.io);
    tui_target_io_free(l->prof.prev_io);
    tui_target_io_free(l->prof.io_next);
    l->prof.io = l->prof.prev_io = l->prof.io_next = NULL;
}

const char *tui_target_no_snapshot(const tui_target *l)
{
    return l->profiles_only ? "no thread snapshots: profiles pushed by another profiler (F8: "
                              "its flame graph)"
                            : "taking the first snapshot...";
}

void tui_target_prof_label(const tui_target *l, char *buf, size_t len)
{
    l->ops->prof_label(l, buf, len);
}

/* ---- signals ---- */
