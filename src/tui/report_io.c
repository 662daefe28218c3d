/* report_io.c - the endpoints and files of I/O waits as text and JSON
 * (report_io.h). */
#include "tui/report_io.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"
#include "model/units.h"
#include "tui/flame_chrome.h"
#include "wire/flame_json.h"

static const char *const columns[] = {"endpoint", "path"};

jp_err tui_io_detail_write_text(FILE *out, const jp_io_detail *d, jp_error *err)
{
    fprintf(out,
            "# io detail (local only, never uploaded): %" PRIu64 " socket waits, %" PRIu64
            " file waits\n",
            d->events[JP_IO_SOCKET], d->events[JP_IO_FILE]);
    fprintf(out, "%-6s %10s %12s  %s\n", "TYPE", "EVENTS", "BLOCKED", "ENDPOINT / PATH");
    for (int t = 0; t < JP_IO_TARGET_COUNT; t++) {
        const jp_io_entry **rows;
        size_t n = jp_io_detail_top(d, (jp_io_target)t, 0, &rows);
        for (size_t i = 0; i < n; i++) {
            char b[32];
            jp_format_value(JP_KIND_IO, 1, rows[i]->ns, b, sizeof b);
            fprintf(out, "%-6s %10" PRIu64 " %12s  %.*s\n", jp_io_target_name((jp_io_target)t),
                    rows[i]->events, b, (int)rows[i]->len, rows[i]->name);
        }
        free(rows);
        if (d->other_events[t]) {
            char b[32];
            jp_format_value(JP_KIND_IO, 1, d->other_ns[t], b, sizeof b);
            fprintf(out, "%-6s %10" PRIu64 " %12s  [more than %d names: not listed]\n",
                    jp_io_target_name((jp_io_target)t), d->other_events[t], b, JP_IO_MAX_ENTRIES);
        }
    }
    if (fflush(out) != 0 || ferror(out))
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    return JP_OK;
}

json_t *tui_io_detail_json(const jp_io_detail *d)
{
    json_t *o = json_object();
    for (int t = 0; t < JP_IO_TARGET_COUNT; t++) {
        json_t *side = json_object(), *top = json_array();
        json_object_set_new(side, "events", json_integer((json_int_t)d->events[t]));
        json_object_set_new(side, "blocked_ns", json_integer((json_int_t)d->ns[t]));
        json_object_set_new(side, "unlisted_events", json_integer((json_int_t)d->other_events[t]));
        json_object_set_new(side, "unlisted_ns", json_integer((json_int_t)d->other_ns[t]));
        const jp_io_entry **rows;
        size_t n = jp_io_detail_top(d, (jp_io_target)t, 0, &rows);
        for (size_t i = 0; i < n; i++) {
            json_t *r = json_object();
            json_object_set_new(r, columns[t], jp_json_string(rows[i]->name, rows[i]->len));
            json_object_set_new(r, "events", json_integer((json_int_t)rows[i]->events));
            json_object_set_new(r, "blocked_ns", json_integer((json_int_t)rows[i]->ns));
            json_array_append_new(top, r);
        }
        free(rows);
        json_object_set_new(side, "top", top);
        json_object_set_new(o, t == JP_IO_SOCKET ? "sockets" : "files", side);
    }
    return o;
}
