/* web.h - serving the web page: the copy compiled into jprof-server
 * (web_files.h), or the files of --web-dir DIR for development, with the
 * page's security headers (set for every answer by http.c). */
#ifndef JP_SERVER_WEB_H
#define JP_SERVER_WEB_H

#include "server/server.h"

/* The Content-Security-Policy of every answer: scripts, styles and fetches
 * from this origin only, no inline code, never framed. */
#define WEB_CSP                                                                                    \
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "              \
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/* Answers GET/HEAD of `url` (a path, "/" meaning /index.html) into o: 200
 * with the file, 304 when if_none_match (may be NULL) names the embedded
 * file's ETag, or 404. Embedded files are revalidated with their ETag
 * (Cache-Control: no-cache); --web-dir files are never cached. */
void web_serve(srv *s, const char *url, const char *if_none_match, srv_resp *o);

/* Content-Type of a file name by its extension. */
const char *web_mime(const char *path);

#endif
