/* picker.c - the lists a view opens a target from (source.h), and the
 * picker of the JVMs on this machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/proc.h"
#include "tui/target.h"
#include "tui/report_target.h"
#include "tui/source.h"

void tui_pick_list_init(tui_pick_list *l)
{
    memset(l, 0, sizeof *l);
}

void tui_pick_list_cleanup(tui_pick_list *l)
{
    free(l->rows);
    tui_pick_list_init(l);
}

tui_pick_row *tui_pick_list_add(tui_pick_list *l)
{
    if (l->count == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->rows = jp_xrealloc(l->rows, l->cap * sizeof *l->rows);
    }
    tui_pick_row *r = &l->rows[l->count++];
    memset(r, 0, sizeof *r);
    return r;
}

void tui_picker_free(tui_picker *p)
{
    if (!p)
        return;
    if (p->free)
        p->free(p);
    free(p);
}

/* ---- the JVMs of this machine ---- */

static jp_err local_scan(tui_picker *p, tui_pick_list *out, jp_error *err)
{
    jvm_proc_list *procs = p->ctx;
    jvm_proc_list_cleanup(procs);
    out->count = 0;
    jp_err rc = jvm_proc_list_local(procs, err);
    if (rc != JP_OK)
        return rc;
    for (size_t i = 0; i < procs->count; i++) {
        const jvm_proc *j = &procs->items[i];
        char up[32];
        tui_format_uptime(j->uptime_ns, up, sizeof up);
        snprintf(tui_pick_list_add(out)->text, TUI_PICK_TEXT, "%8d  %-12.12s %8s  %s%s",
                 (int)j->pid, j->user, up, j->main_class[0] ? j->main_class : "?",
                 j->attach_disabled ? "  (attach disabled)" : "");
    }
    return JP_OK;
}

static jp_err local_open(tui_picker *p, size_t i, const tui_target_opts *o, tui_target **out,
                         jp_error *err)
{
    const jvm_proc_list *procs = p->ctx;
    if (i >= procs->count)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "no such JVM in the list");
    tui_target_opts lo = *o;
    lo.pid = procs->items[i].pid;
    return tui_pid_open(&lo, out, err);
}

static void local_free(tui_picker *p)
{
    jvm_proc_list_cleanup(p->ctx);
    free(p->ctx);
}

tui_picker *tui_picker_local(void)
{
    tui_picker *p = jp_xcalloc(1, sizeof *p);
    snprintf(p->title, sizeof p->title, "Java virtual machines on this machine");
    snprintf(p->head, sizeof p->head, "%8s  %-12s %8s  %s", "PID", "USER", "UPTIME", "MAIN CLASS");
    snprintf(p->empty, sizeof p->empty,
             "no JVM found that this user may inspect (run as its user or as root)");
    p->rescan_ns = 2 * JP_NS_PER_SEC;
    p->scan = local_scan;
    p->open = local_open;
    p->free = local_free;
    p->ctx = jp_xcalloc(1, sizeof(jvm_proc_list));
    return p;
}
