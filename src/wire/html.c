/* html.c - the self-contained flame graph file (html.h). */
#include "wire/html.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "web/web_files.h"

static const web_file *web(const char *path)
{
    for (size_t i = 0; i < web_files_count; i++)
        if (!strcmp(web_files[i].path, path))
            return &web_files[i];
    return NULL;
}

static void put_file(jp_strbuf *b, const web_file *f)
{
    jp_strbuf_append(b, f->data, f->len);
}

/* Inlined in <script> or <style>, a "</" would end the element early. */
static bool inlinable(const web_file *f)
{
    return !memmem(f->data, f->len, "</", 2);
}

static void put_text(jp_strbuf *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            jp_strbuf_puts(b, "&lt;");
            break;
        case '>':
            jp_strbuf_puts(b, "&gt;");
            break;
        case '&':
            jp_strbuf_puts(b, "&amp;");
            break;
        case '"':
            jp_strbuf_puts(b, "&quot;");
            break;
        default:
            jp_strbuf_putc(b, *s);
        }
    }
}

/* '<' only occurs inside JSON strings, where \u003c means the same */
static void put_json(jp_strbuf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            jp_strbuf_puts(b, "\\u003c");
        else
            jp_strbuf_putc(b, *s);
    }
}

jp_err jp_html_encode(const json_t *doc, const char *title, jp_strbuf *out, jp_error *err)
{
    const web_file *css = web("/app.css"), *util = web("/util.js"), *flame = web("/flame.js"),
                   *boot = web("/export.js");
    if (!css || !util || !flame || !boot)
        return jp_error_set(err, JP_ERR_INTERNAL, "the page's files are missing from the build");
    const web_file *all[] = {css, util, flame, boot};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!inlinable(all[i]))
            return jp_error_set(err, JP_ERR_INTERNAL,
                                "web%s holds \"</\": it cannot be inlined in one HTML file",
                                all[i]->path);
    json_t *d = json_deep_copy(doc);
    if (!d)
        return jp_error_set(err, JP_ERR_NOMEM, "cannot copy the profile");
    json_object_set_new(d, "title", json_string(title ? title : "profile"));
    char *text = json_dumps(d, JSON_COMPACT);
    json_decref(d);
    if (!text)
        return jp_error_set(err, JP_ERR_NOMEM, "cannot encode the profile");
    jp_strbuf_puts(out, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                        "'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src "
                        "data:\">\n<meta name=\"viewport\" content=\"width=device-width, "
                        "initial-scale=1\">\n<meta name=\"generator\" content=\"jprof\">\n"
                        "<title>jprof: ");
    put_text(out, title ? title : "profile");
    jp_strbuf_puts(out, "</title>\n<style>\n");
    put_file(out, css);
    jp_strbuf_puts(out, "</style>\n</head>\n<body class=\"export\">\n<header class=\"top\"><div "
                        "class=\"brand\"><span class=\"logo\">jprof</span> <span "
                        "id=\"export-title\" class=\"dim\"></span></div></header>\n<main "
                        "id=\"view\"><div id=\"export-meta\"></div><div "
                        "id=\"export-flame\"></div><div id=\"export-top\"></div></main>\n"
                        "<noscript><p>This file needs JavaScript for its flame graph.</p>"
                        "</noscript>\n<script type=\"application/json\" id=\"jprof-data\">");
    put_json(out, text);
    free(text);
    jp_strbuf_puts(out, "</script>\n<script>\n");
    put_file(out, util);
    jp_strbuf_puts(out, "</script>\n<script>\n");
    put_file(out, flame);
    jp_strbuf_puts(out, "</script>\n<script>\n");
    put_file(out, boot);
    jp_strbuf_puts(out, "</script>\n</body>\n</html>\n");
    return JP_OK;
}
