/* report_diff.c - a comparison of two profiles (model/diff.h) as text and
 * JSON: collapsed "stack OLD NEW" lines, the top table of changes, the JSON
 * tree with both sides, the offline HTML page. The same for --jfr NEW
 * --diff OLD and for the server's ranges (--base-*). */
#include "tui/report_diff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/units.h"
#include "tui/report_profile.h"
#include "wire/flame_json.h"

static void write_diff_header(FILE *out, const jp_diff *d, const char *old_path,
                              const char *new_path)
{
    const jp_kind_table *t = &d->prof->kinds[d->kind];
    fprintf(out, "# diff kind %s  value %s  new %s  baseline %s  normalised %s (baseline x %.4g)",
            jp_kind_name(d->kind), d->by_value ? jp_kind_unit(d->kind) : "samples", new_path,
            old_path, jp_diff_norm_name(d->norm), d->old_scale);
    fprintf(out, "  new total %" PRIu64 "  baseline total %.0f\n",
            d->by_value ? t->value : t->samples,
            jp_diff_old(d, d->by_value ? d->old_total_value : d->old_total_samples));
}

static void format_real(jp_kind k, bool by_value, double v, char *buf, size_t len)
{
    if (by_value)
        jp_format_value(k, 1, (uint64_t)(v < 0 ? -v : v + 0.5), buf, len);
    else
        snprintf(buf, len, "%.0f", v < 0 ? -v : v);
}

/* A change as "+12", "-3.5 ms", "=". */
static void format_delta(jp_kind k, bool by_value, double delta, char *buf, size_t len)
{
    if (delta > -0.5 && delta < 0.5) {
        snprintf(buf, len, "=");
        return;
    }
    if (len < 2)
        return;
    buf[0] = delta < 0 ? '-' : '+';
    format_real(k, by_value, delta, buf + 1, len - 1);
}

static jp_err diff_top(FILE *out, const jp_diff *d, const char *old_path, const char *new_path,
                       jp_error *err)
{
    jp_diff_row *rows;
    size_t n = jp_diff_top(d, 0, &rows);
    write_diff_header(out, d, old_path, new_path);
    fprintf(out, "%10s %10s %10s  %10s %10s %10s  %s\n", "OLD-SELF", "NEW-SELF", "CHANGE",
            "OLD-TOTAL", "NEW-TOTAL", "CHANGE", "NAME");
    for (size_t i = 0; i < n; i++) {
        const jp_diff_row *r = &rows[i];
        char os[32], ns[32], ds[32], ot[32], nt[32], dt[32];
        format_real(d->kind, d->by_value, r->old_self, os, sizeof os);
        format_real(d->kind, d->by_value, (double)r->new_self, ns, sizeof ns);
        format_delta(d->kind, d->by_value, (double)r->new_self - r->old_self, ds, sizeof ds);
        format_real(d->kind, d->by_value, r->old_total, ot, sizeof ot);
        format_real(d->kind, d->by_value, (double)r->new_total, nt, sizeof nt);
        format_delta(d->kind, d->by_value, (double)r->new_total - r->old_total, dt, sizeof dt);
        size_t len;
        const char *name = jp_profile_frame_name(d->prof, r->frame, &len);
        fprintf(out, "%10s %10s %10s  %10s %10s %10s  %.*s\n", os, ns, ds, ot, nt, dt, (int)len,
                name);
    }
    free(rows);
    return tui_stream_check(out, err);
}

static jp_err diff_json(FILE *out, jp_diff *d, const char *old_path, const char *new_path,
                        jp_error *err)
{
    const jp_kind_table *t = &d->prof->kinds[d->kind];
    json_t *m = json_object();
    json_object_set_new(m, "kind", json_string(jp_kind_name(d->kind)));
    json_object_set_new(m, "unit", json_string(jp_kind_unit(d->kind)));
    json_object_set_new(m, "value", json_string(d->by_value ? "total" : "samples"));
    json_object_set_new(m, "new", jp_json_string(new_path, strlen(new_path)));
    json_object_set_new(m, "baseline", jp_json_string(old_path, strlen(old_path)));
    json_object_set_new(m, "normalised", json_string(jp_diff_norm_name(d->norm)));
    json_object_set_new(m, "baseline_scale", json_real(d->old_scale));
    json_object_set_new(m, "new_total",
                        json_integer((json_int_t)(d->by_value ? t->value : t->samples)));
    json_object_set_new(
        m, "baseline_total",
        json_real(jp_diff_old(d, d->by_value ? d->old_total_value : d->old_total_samples)));
    json_t *doc = json_object();
    json_object_set_new(doc, "meta", m);
    json_object_set_new(doc, "tree", jp_flame_diff_json(d));
    return tui_write_json_line(out, doc, 0, err);
}

jp_err tui_diff_write(FILE *out, jp_diff *d, tui_format f, const char *old_label,
                      const char *new_label, jp_error *err)
{
    if (f == TUI_FORMAT_TOP)
        return diff_top(out, d, old_label, new_label, err);
    if (f == TUI_FORMAT_JSON)
        return diff_json(out, d, old_label, new_label, err);
    return tui_write_collapsed_diff(out, d, err);
}
