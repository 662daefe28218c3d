#include "tui/report_service.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

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

static const char *nz(const char *s, const char *dflt)
{
    return s ? s : dflt;
}

/* Seconds since an RFC 3339 time, or -1. */
static double age_of(const char *rfc)
{
    int64_t ns;
    if (!rfc || jp_rfc3339_parse(rfc, &ns, NULL) != JP_OK)
        return -1;
    return (double)(jp_time_now_ns() - ns) / 1e9;
}

void tui_report_service_header(const tui_client *r, tui_lines *ls)
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

void tui_report_service_target_head(char *buf, size_t len)
{
    snprintf(buf, len, "%-28s %7s  %-9s %-18s %-17s %-20s %8s %9s", "POD", "PID", "STATE", "REASON",
             "PROFILING", "KINDS", "WINDOWS", "LAST SEEN");
}

/* What the target's policy asks, as its agent last said: "continuous",
 * "until 14:05" (a temporary window, local time), "ended 14:05", "disabled",
 * "off", or "-" from an older agent. */
static void target_mode(const json_t *t, char *buf, size_t len)
{
    const char *mode = jp_query_str(t, "mode"), *until = jp_query_str(t, "until");
    int64_t end = 0;
    if (!mode) {
        snprintf(buf, len, "-");
        return;
    }
    if (strcmp(mode, "temporary") || !until || jp_rfc3339_parse(until, &end, NULL) != JP_OK) {
        snprintf(buf, len, "%s", mode);
        return;
    }
    time_t secs = (time_t)(end / 1000000000);
    struct tm tm;
    char hm[16] = "?";
    if (localtime_r(&secs, &tm))
        strftime(hm, sizeof hm,
                 end - jp_time_now_ns() > 86400LL * 1000000000 ? "%m-%d %H:%M" : "%H:%M", &tm);
    snprintf(buf, len, "%s %s", end > jp_time_now_ns() ? "until" : "ended", hm);
}

bool tui_report_service_target_row(const json_t *t, char *buf, size_t len)
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
    char mode[32];
    target_mode(t, mode, sizeof mode);
    snprintf(buf, len, "%-28s %7lld  %-9s %-18s %-17s %-20s %8lld %8s",
             nz(jp_query_str(id, "pod"), "?"), jp_query_int(id, "pid", 0), st ? st : "-",
             why ? why : "-", mode, *kinds ? kinds : "-", jp_query_int(t, "windows", 0), age);
    return st && strcmp(st, "active");
}

static void status_targets(const tui_client *r, tui_lines *ls)
{
    tui_lines_add(ls, TUI_STYLE_TITLE, TUI_F_BOLD, "pods and JVMs (last day)");
    char row[512];
    tui_report_service_target_head(row, sizeof row);
    tui_lines_add(ls, TUI_STYLE_TABLEHEAD, 0, "%s", row);
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(r->targets, "targets"), i, t)
    {
        bool bad = tui_report_service_target_row(t, row, sizeof row);
        tui_lines_add(ls, bad ? TUI_STYLE_WARN : TUI_STYLE_NORMAL, 0, "%s", row);
    }
    if (!json_array_size(json_object_get(r->targets, "targets")))
        tui_lines_add(ls, TUI_STYLE_DIM, 0, "no target reported in the last day");
}

static void status_history(const tui_client *r, tui_lines *ls)
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

static void status_ingestion(const tui_client *r, tui_lines *ls)
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

void tui_report_service_status(const tui_client *r, tui_lines *ls)
{
    /* the two short summaries first: the history is a log that grows with
     * every state change and would push the agents' health off the screen */
    status_targets(r, ls);
    status_ingestion(r, ls);
    status_history(r, ls);
}
