#include "tui/recording.h"

#include "model/diff.h"

#include <stdio.h>
#include <string.h>

#include "base/strbuf.h"

static const char *const format_names[] = {"collapsed", "top",  "json", "text",
                                           "pprof",     "html", "gc"};

const char *tui_format_name(tui_format f)
{
    return (unsigned)f < sizeof format_names / sizeof format_names[0] ? format_names[f] : "?";
}

bool tui_format_parse(const char *s, tui_format *out)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++) {
        if (!strcmp(s, format_names[i])) {
            *out = (tui_format)i;
            return true;
        }
    }
    return false;
}

void tui_args_init(tui_args *a)
{
    memset(a, 0, sizeof *a);
    a->kind = JP_KIND_CPU;
    a->format = TUI_FORMAT_COLLAPSED;
    a->diff_norm = JP_DIFF_PER_SAMPLE;
    a->tail = 0.1;
}

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
