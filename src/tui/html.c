/* html.c - the self-contained flame graph file (html.h). */
#include "tui/html.h"

#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "server/web_files.h"
#include "tui/batch.h"

static const web_file *web(const char *path)
{
    for (size_t i = 0; i < web_files_count; i++)
        if (!strcmp(web_files[i].path, path))
            return &web_files[i];
    return NULL;
}

/* Text inside <script> or <style>: a "</" would end the element early;
 * none of our files has one, the JSON gets "<" escaped below. */
static void put_file(FILE *out, const web_file *f)
{
    fwrite(f->data, 1, f->len, out);
}

/* HTML-escaped text for the title. */
static void put_text(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '&':
            fputs("&amp;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*s, out);
        }
    }
}

/* JSON in a <script type="application/json">: every '<' as \u003c, so no
 * frame name can close the element ('<' only occurs inside strings). */
static void put_json(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("\\u003c", out);
        else
            fputc(*s, out);
    }
}

jp_err tui_write_html(FILE *out, const jp_profile *p, const jfr_report *rep, jp_kind k,
                      bool threads, bool by_value, const char *title, jp_error *err)
{
    const web_file *css = web("/app.css"), *util = web("/util.js"), *flame = web("/flame.js"),
                   *boot = web("/export.js");
    if (!css || !util || !flame || !boot)
        return jp_error_set(err, JP_ERR_INTERNAL, "the page's files are missing from the build");
    json_t *doc = tui_profile_doc(p, rep, k, threads, by_value);
    json_object_set_new(doc, "title", json_string(title ? title : "profile"));
    json_object_set_new(doc, "threads", json_boolean(threads));
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    if (!text)
        return jp_error_set(err, JP_ERR_NOMEM, "cannot encode the profile");
    fputs("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"generator\" content=\"jprof-top --format html\">\n<title>jprof: ",
          out);
    put_text(out, title ? title : "profile");
    fputs(" (", out);
    put_text(out, jp_kind_name(k));
    fputs(")</title>\n<style>\n", out);
    put_file(out, css);
    fputs("</style>\n</head>\n<body class=\"export\">\n<header class=\"top\"><div class=\"brand\">"
          "<span class=\"logo\">jprof</span> <span id=\"export-title\" class=\"dim\"></span>"
          "</div></header>\n<main id=\"view\"><div id=\"export-meta\"></div>"
          "<div id=\"export-flame\"></div><div id=\"export-top\"></div></main>\n"
          "<noscript><p>This file needs JavaScript for its flame graph; the same data: "
          "<code>jprof-top -b --format top</code>.</p></noscript>\n"
          "<script type=\"application/json\" id=\"jprof-data\">",
          out);
    put_json(out, text);
    free(text);
    fputs("</script>\n<script>\n", out);
    put_file(out, util);
    fputs("</script>\n<script>\n", out);
    put_file(out, flame);
    fputs("</script>\n<script>\n", out);
    put_file(out, boot);
    fputs("</script>\n</body>\n</html>\n", out);
    fflush(out);
    if (ferror(out))
        return jp_error_set(err, JP_ERR_IO, "write error: %s", strerror(errno));
    return JP_OK;
}
