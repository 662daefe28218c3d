/* jvm_user_name without NSS, for the static jprof-probe (jvm/username.h). */
#include "jvm/username.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void jvm_user_name(uid_t uid, char *buf, size_t len)
{
    snprintf(buf, len, "%lu", (unsigned long)uid);
    FILE *f = fopen("/etc/passwd", "re");
    if (!f)
        return;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        /* name:password:uid:... */
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        char *end;
        unsigned long u = strtoul(c2 + 1, &end, 10);
        if (end != c2 + 1 && *end == ':' && u == (unsigned long)uid) {
            snprintf(buf, len, "%.*s", (int)(c1 - line), line);
            break;
        }
    }
    fclose(f);
}
