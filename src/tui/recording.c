#include "tui/recording.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"
#include "model/diff.h"
#include "tui/exit.h"

tui_load_status tui_load_jfr(const tui_args *a, uint32_t kinds, bool threads, jp_profile **out,
                             jfr_report *rep, jp_error *err)
{
    return tui_load_jfr_io(a, kinds, threads, NULL, out, rep, err);
}

tui_load_status tui_load_jfr_io(const tui_args *a, uint32_t kinds, bool threads, jp_io_detail *io,
                                jp_profile **out, jfr_report *rep, jp_error *err)
{
    jfr_options opt;
    jfr_options_init(&opt);
    opt.kinds = kinds;
    opt.threads = threads;
    opt.has_from = a->has_from;
    opt.has_to = a->has_to;
    opt.from = a->from;
    opt.to = a->to;
    opt.leak = a->leak;
    opt.tail = a->tail;
    opt.jobs = a->jobs;
    opt.read = a->jfr_read;
    opt.io_detail = io;
    /* the GC log only where it is shown: the screens, json and gc */
    opt.skip_gc = a->batch && a->format != TUI_FORMAT_JSON && a->format != TUI_FORMAT_GC;
    jfr_report_init(rep);
    if (a->states && !jfr_states_parse(&opt, a->states, err))
        return TUI_LOAD_FAILED;
    jp_profile *p = jp_profile_new();
    jp_err rc = jfr_read_file(a->jfr_path, &opt, p, rep);
    if (rc == JP_OK) {
        *out = p;
        return TUI_LOAD_OK;
    }
    *err = rep->error;
    if (err->code == JP_OK)
        jp_error_set(err, rc, "%s: %s", a->jfr_path, jp_strerror(rc));
    /* Damage before a single event was decoded leaves nothing to show:
     * that is a bad file, not a partial one. */
    if (rep->partial && (rep->chunks_read > 0 || rep->events_used > 0)) {
        *out = p;
        return TUI_LOAD_PARTIAL;
    }
    jp_profile_free(p);
    *out = NULL;
    return TUI_LOAD_FAILED;
}

void tui_kinds_present(const jp_profile *p, char *buf, size_t len)
{
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    for (int k = 0; k < JP_KIND_COUNT; k++)
        if (jp_profile_has_kind(p, (jp_kind)k))
            jp_strbuf_printf(&b, "%s%s", b.len ? ", " : "", jp_kind_name((jp_kind)k));
    snprintf(buf, len, "%s", b.len ? jp_strbuf_str(&b) : "none");
    jp_strbuf_cleanup(&b);
}

bool tui_kind_default(const jp_profile *p, jp_kind *out)
{
    /* cpu is what people look at first; otherwise the order of the enum. */
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        if (jp_profile_has_kind(p, (jp_kind)k)) {
            *out = (jp_kind)k;
            return true;
        }
    }
    return false;
}

const char *tui_frame_name(const jp_profile *p, uint32_t frame, size_t *len)
{
    static const char unknown[] = "[unknown thread]";
    if (frame >= p->nframes) {
        *len = sizeof unknown - 1;
        return unknown;
    }
    return jp_profile_frame_name(p, frame, len);
}

void tui_print_warnings(FILE *errout, const jfr_report *rep)
{
    for (uint32_t i = 0; i < rep->nwarnings && i < JFR_MAX_WARNINGS; i++)
        fprintf(errout, "jprof-top: warning: %.*s\n", (int)sizeof rep->warnings[i],
                rep->warnings[i]);
    if (rep->warnings_dropped)
        fprintf(errout, "jprof-top: warning: %" PRIu64 " more warnings not shown\n",
                rep->warnings_dropped);
}

/* Reads one side of a comparison; prints why not and returns false. */
static bool diff_load(const tui_args *a, const char *path, bool threads, jp_profile **p,
                      jfr_report *rep, FILE *errout)
{
    tui_args one = *a;
    one.jfr_path = path;
    jp_error err;
    jp_error_init(&err);
    uint32_t mask = a->has_kind ? 1u << a->kind : 0;
    tui_load_status st = tui_load_jfr(&one, mask, threads, p, rep, &err);
    if (st == TUI_LOAD_FAILED) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        return false;
    }
    tui_print_warnings(errout, rep);
    if (st == TUI_LOAD_PARTIAL)
        fprintf(errout, "jprof-top: %s (compared as far as it was read)\n", err.msg);
    return true;
}

int tui_diff_open(const tui_args *a, bool threads, tui_diff_sides *s, FILE *errout)
{
    memset(s, 0, sizeof *s);
    jfr_report orep;
    if (!diff_load(a, a->diff_path, threads, &s->old, &orep, errout) ||
        !diff_load(a, a->jfr_path, threads, &s->new_, &s->rep, errout))
        goto fail;
    jp_kind k = a->kind;
    if (!a->has_kind && !tui_kind_default(s->new_, &k)) {
        fprintf(errout, "jprof-top: %s: no profile events to compare\n", a->jfr_path);
        goto fail;
    }
    if (!jp_profile_has_kind(s->new_, k) || !jp_profile_has_kind(s->old, k)) {
        fprintf(errout, "jprof-top: --diff %s: no %s events in the %s profile\n", a->diff_path,
                jp_kind_name(k), jp_profile_has_kind(s->new_, k) ? "baseline" : "new");
        goto fail;
    }
    jp_error err;
    jp_error_init(&err);
    if (jp_diff_new(s->old, s->new_, k, threads, a->by_value, (jp_diff_norm)a->diff_norm, &s->d,
                    &err)) {
        fprintf(errout, "jprof-top: --diff %s: %s\n", a->diff_path, err.msg);
        goto fail;
    }
    return TUI_EXIT_OK;
fail:
    tui_diff_sides_cleanup(s);
    return TUI_EXIT_ERROR;
}

void tui_diff_sides_cleanup(tui_diff_sides *s)
{
    jp_diff_free(s->d);
    jp_profile_free(s->old);
    jp_profile_free(s->new_);
    memset(s, 0, sizeof *s);
}
