/* web.c - the web page: embedded files (web_files.c, generated from web/ at
 * build time) or, with --web-dir, files read from disk on every request. */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/web.h"
#include "web/web_files.h"

const char *web_mime(const char *path)
{
    static const struct {
        const char *ext, *type;
    } types[] = {
        {".html", "text/html; charset=utf-8"},
        {".js", "text/javascript; charset=utf-8"},
        {".css", "text/css; charset=utf-8"},
        {".svg", "image/svg+xml"},
        {".png", "image/png"},
        {".json", "application/json"},
        {".ico", "image/x-icon"},
        {".txt", "text/plain; charset=utf-8"},
    };
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
        if (!strcmp(dot, types[i].ext))
            return types[i].type;
    return "application/octet-stream";
}

/* Does an If-None-Match list ("a", W/"b", *) name this quoted ETag? */
static bool web_etag_matches(const char *inm, const char *etag)
{
    return strstr(inm, etag) != NULL || inm[strspn(inm, " ")] == '*';
}

static void web_from_dir(srv *s, const char *url, srv_resp *o)
{
    jp_strbuf p;
    jp_strbuf_init(&p, 4096);
    int fd = -1;
    struct stat sb;
    if (jp_strbuf_printf(&p, "%s%s", s->cfg.web_dir, url) == JP_OK)
        fd = open(p.data, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size > (16 << 20)) {
        srv_error(o, 404, "not_found", "no such page");
    } else {
        o->status = 200;
        o->ctype = web_mime(url);
        jp_strbuf_reset(&o->body);
        char buf[8192];
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            jp_strbuf_append(&o->body, buf, (size_t)n);
    }
    if (fd >= 0)
        close(fd);
    jp_strbuf_cleanup(&p);
}

void web_serve(srv *s, const char *url, const char *if_none_match, srv_resp *o)
{
    if (!strcmp(url, "/"))
        url = "/index.html";
    if (strstr(url, "..") || strchr(url, '\\') || url[0] != '/') {
        srv_error(o, 404, "not_found", "no such page");
        return;
    }
    if (s->cfg.web_dir) {
        web_from_dir(s, url, o);
        return;
    }
    for (size_t i = 0; i < web_files_count; i++) {
        const web_file *f = &web_files[i];
        if (strcmp(url, f->path) != 0)
            continue;
        o->ctype = web_mime(url);
        o->etag = f->etag;
        o->cache_control = "no-cache"; /* revalidate: the names carry no version */
        jp_strbuf_reset(&o->body);
        if (if_none_match && web_etag_matches(if_none_match, f->etag)) {
            o->status = 304;
            return;
        }
        o->status = 200;
        o->static_body = f->data;
        o->static_len = f->len;
        return;
    }
    srv_error(o, 404, "not_found", "no such page");
}
