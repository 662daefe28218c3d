/* jfr_test_util.c - helpers of the JFR reader's unit tests. */
#include "jfr_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"

static int cmp_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* See jfr_test_util.h. */
char *ut_collapsed(const jp_profile *p, jp_kind k)
{
    const jp_kind_table *t = &p->kinds[k];
    char **lines = calloc(t->count + 1, sizeof *lines);
    size_t total = 1;
    for (size_t i = 0; i < t->count; i++) {
        jp_strbuf b;
        jp_strbuf_init(&b, 0);
        const jp_sample *c = &t->cells[i];
        size_t len;
        if (c->thread != JP_NO_THREAD) {
            const char *n = jp_profile_frame_name(p, c->thread, &len);
            jp_strbuf_printf(&b, "%.*s;", (int)len, n);
        }
        const uint32_t *f = jp_profile_stack_frames(p, c->stack);
        for (uint32_t j = 0; j < p->stacks[c->stack].depth; j++) {
            const char *n = jp_profile_frame_name(p, f[j], &len);
            jp_strbuf_printf(&b, "%s%.*s", j ? ";" : "", (int)len, n);
        }
        jp_strbuf_printf(&b, " %llu %llu\n", (unsigned long long)c->samples,
                         (unsigned long long)c->value);
        lines[i] = jp_strbuf_take(&b);
        total += strlen(lines[i]);
    }
    qsort(lines, t->count, sizeof *lines, cmp_lines);
    char *out = calloc(1, total);
    size_t at = 0;
    for (size_t i = 0; i < t->count; i++) {
        size_t n = strlen(lines[i]);
        memcpy(out + at, lines[i], n);
        at += n;
        free(lines[i]);
    }
    free(lines);
    return out;
}

const char *ut_fixture(const char *name, char *buf, size_t len)
{
    const char *dir = getenv("JPROF_FIXTURES");
    if (!dir || !*dir)
        dir = JPROF_FIXTURE_DIR;
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}
