/* web_files.h - the files of the web page (web/), compiled into a library of
 * their own (libjpweb.a): jprof-server serves them (server/web.h), and
 * jprof-top's --format html inlines the flame graph's CSS and scripts from
 * them (wire/html.h).
 *
 * web_files[] is generated at build time by web_gen (web_files.c in the
 * build dir); the data is static and read-only, never freed. */
#ifndef JP_WEB_WEB_FILES_H
#define JP_WEB_WEB_FILES_H

#include <stddef.h>

typedef struct web_file {
    const char *path; /* "/index.html" */
    const unsigned char *data;
    size_t len;
    const char *etag; /* quoted strong ETag: "\"0123456789abcdef\"" */
} web_file;

extern const web_file web_files[];
extern const size_t web_files_count;

#endif
