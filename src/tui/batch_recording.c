/* batch_recording.c - `jprof-top -b --jfr FILE` and `-b --jfr NEW --diff
 * OLD`: a recording (or two) read and written in one of the formats of
 * man/jprof-top.1 ("OUTPUT FORMATS"), with the reader's warnings and the
 * exit status of what was read. */
#include "tui/batch_recording.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tui/exit.h"
#include "tui/report_diff.h"
#include "tui/report_io.h"
#include "tui/report_profile.h"
#include "wire/flame_json.h"

/* The requested kind has no events: either the file has none (an error
 * naming the kinds it has) or the time window left none (empty output). */
static bool kind_in_file(const tui_args *a, jp_kind k, char *kinds, size_t len)
{
    tui_args all = *a;
    all.has_from = all.has_to = false;
    jfr_report rep;
    jp_error err;
    jp_error_init(&err);
    jp_profile *p = NULL;
    if (tui_load_jfr(&all, 0, false, &p, &rep, &err) == TUI_LOAD_FAILED) {
        snprintf(kinds, len, "none");
        return false;
    }
    tui_kinds_present(p, kinds, len);
    bool present = jp_profile_has_kind(p, k);
    jp_profile_free(p);
    return present;
}

static jp_err batch_write(const tui_args *a, FILE *out, const jp_profile *p, const jfr_report *rep,
                          jp_kind k, jp_error *err)
{
    switch (a->format) {
    case TUI_FORMAT_TOP:
        return tui_write_top(out, p, rep, k, a->threads, a->by_value, err);
    case TUI_FORMAT_JSON:
        return tui_write_json(out, p, rep, k, a->threads, a->by_value, err);
    case TUI_FORMAT_PPROF:
        return tui_write_pprof(out, p, k, a->threads, err);
    case TUI_FORMAT_OTLP:
        return tui_write_otlp(out, p, k, a->threads, NULL, err);
    case TUI_FORMAT_GC:
        return tui_write_gc(out, p, err);
    case TUI_FORMAT_HTML: {
        const char *name = a->jfr_path ? strrchr(a->jfr_path, '/') : NULL;
        name = name ? name + 1 : a->jfr_path;
        return tui_write_html(out, p, rep, k, a->threads, a->by_value, name, err);
    }
    case TUI_FORMAT_COLLAPSED:
    default:
        return tui_write_collapsed(out, p, k, a->threads, a->by_value, err);
    }
}

/* --io-detail: the endpoints and files as a table, or the io profile's
 * JSON document with "io_detail" added. */
static jp_err io_detail_write(const tui_args *a, FILE *out, const jp_profile *p,
                              const jfr_report *rep, const jp_io_detail *io, jp_error *err)
{
    if (a->format != TUI_FORMAT_JSON)
        return tui_io_detail_write_text(out, io, err);
    json_t *doc = tui_profile_doc(p, rep, JP_KIND_IO, a->threads, a->by_value);
    json_object_set_new(doc, "io_detail", tui_io_detail_json(io));
    return tui_write_json_line(out, doc, 0, err);
}

int tui_batch_run(const tui_args *a, FILE *out, FILE *errout)
{
    jp_error err, werr;
    jp_error_init(&err);
    jp_error_init(&werr);
    jfr_report rep;
    jp_profile *p = NULL;
    uint32_t mask = a->has_kind ? 1u << a->kind : 0;
    jp_io_detail io;
    jp_io_detail_init(&io);
    tui_load_status st =
        tui_load_jfr_io(a, mask, a->threads, a->io_detail ? &io : NULL, &p, &rep, &err);
    if (st == TUI_LOAD_FAILED) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        jp_io_detail_cleanup(&io);
        return TUI_EXIT_ERROR;
    }
    int status = TUI_EXIT_OK;
    jp_kind k = a->kind;
    char kinds[64];
    if (!a->has_kind && !tui_kind_default(p, &k) && st == TUI_LOAD_OK &&
        a->format != TUI_FORMAT_GC) {
        fprintf(errout, "jprof-top: %s: no profile events (%s)\n", a->jfr_path, jp_kind_list());
        status = TUI_EXIT_ERROR;
        goto out;
    }
    if (a->has_kind && !jp_profile_has_kind(p, k) && st == TUI_LOAD_OK) {
        if (!kind_in_file(a, k, kinds, sizeof kinds)) {
            fprintf(errout, "jprof-top: %s: no %s events; kinds present: %s\n", a->jfr_path,
                    jp_kind_name(k), kinds);
            status = TUI_EXIT_ERROR;
            goto out;
        }
        fprintf(errout, "jprof-top: %s: no %s events in the selected time range\n", a->jfr_path,
                jp_kind_name(k));
    }
    tui_print_warnings(errout, &rep);
    if (p->kinds[k].lost)
        fprintf(errout, "jprof-top: %s: %" PRIu64 " %s samples lost (the recorder said so)\n",
                a->jfr_path, p->kinds[k].lost, jp_kind_name(k));
    if ((a->io_detail ? io_detail_write(a, out, p, &rep, &io, &werr)
                      : batch_write(a, out, p, &rep, k, &werr)) != JP_OK) {
        fprintf(errout, "jprof-top: %s\n", werr.msg);
        status = TUI_EXIT_ERROR;
        goto out;
    }
    if (st == TUI_LOAD_PARTIAL) {
        fprintf(errout, "jprof-top: %s\n", err.msg);
        status = TUI_EXIT_PARTIAL;
    }
out:
    jp_io_detail_cleanup(&io);
    jp_profile_free(p);
    return status;
}

/* --diff --format html: the page's own flame graph colours a tree whose
 * nodes carry base_self/base_total (web/flame.js), as the web page's
 * Compare does with the server's diff. */
static jp_err diff_html(FILE *out, tui_diff_sides *sd, const tui_args *a, jp_error *err)
{
    jp_diff *d = sd->d;
    json_t *doc = tui_profile_doc(d->prof, &sd->rep, d->kind, a->threads, a->by_value);
    json_object_set_new(doc, "tree", jp_flame_diff_json(d));
    json_object_set_new(doc, "threads", json_boolean(a->threads));
    char title[512];
    const char *n = strrchr(a->jfr_path, '/'), *o = strrchr(a->diff_path, '/');
    snprintf(title, sizeof title, "%s vs %s", n ? n + 1 : a->jfr_path, o ? o + 1 : a->diff_path);
    return tui_write_html_doc(out, doc, title, err);
}

int tui_diff_run(const tui_args *a, FILE *out, FILE *errout)
{
    tui_diff_sides sd;
    if (tui_diff_open(a, a->threads, &sd, errout) != TUI_EXIT_OK)
        return TUI_EXIT_ERROR;
    jp_diff *d = sd.d;
    jp_error err;
    jp_error_init(&err);
    int status = TUI_EXIT_ERROR;
    jp_err rc = a->format == TUI_FORMAT_HTML
                    ? diff_html(out, &sd, a, &err)
                    : tui_diff_write(out, d, a->format, a->diff_path, a->jfr_path, &err);
    if (rc)
        fprintf(errout, "jprof-top: %s\n", err.msg);
    else
        status = TUI_EXIT_OK;
    tui_diff_sides_cleanup(&sd);
    return status;
}
