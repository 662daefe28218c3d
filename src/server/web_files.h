/* web_files.h - the web page (web/) compiled into jprof-server, and how it
 * is served: from the embedded copy, or from --web-dir DIR (development).
 *
 * web_files[] is generated at build time by web_gen (web_files.c in the
 * build dir); the data is static and read-only, never freed. */
#ifndef JP_SERVER_WEB_FILES_H
#define JP_SERVER_WEB_FILES_H

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
