/* libFuzzer target: the JFR reader over arbitrary bytes (jfr_read_buffer),
 * with threads and a time window on so that every resolution path runs;
 * then again with each chunk's events split into small pieces decoded on
 * two threads, and read as a file (jfr_read_file over a memfd, in small
 * steps, on one and three threads), which must all give the same
 * profile and report byte for byte (frames, stacks and cells in the same
 * order, the same warnings and error); without threads and window, both
 * by the short path of a run's commonest event type and by the plans
 * alone (jfr_options.plans_only), which must agree the same way; and once
 * with malloc/free pairing and a thread state filter.
 *
 * Build and run: scripts/fuzz [SECONDS] (clang, libclang-rt-14-dev).
 * Seeds: tests/fuzz/corpus/jfr (made by gen_jfr_corpus.c) and the
 * async-profiler fixtures. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "jfr/jfr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Everything the profile says must be in range. */
static void check_ranges(const jp_profile *p)
{
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        const jp_kind_table *t = &p->kinds[k];
        for (size_t i = 0; i < t->count; i++) {
            if (t->cells[i].stack >= p->nstacks)
                __builtin_trap();
            const jp_stack *s = &p->stacks[t->cells[i].stack];
            const uint32_t *f = jp_profile_stack_frames(p, t->cells[i].stack);
            for (uint32_t j = 0; j < s->depth; j++)
                if (f[j] >= p->nframes)
                    __builtin_trap();
        }
    }
}

/* Everything a read produced, in the order the profile holds it. */
static char *dump(const jp_profile *p, const jfr_report *r, jp_err rc)
{
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    for (uint32_t f = 0; f < p->nframes; f++) {
        size_t len;
        const char *n = jp_profile_frame_name(p, f, &len);
        jp_strbuf_printf(&b, "f %.*s %u\n", (int)len, n, p->frames[f].kinds);
    }
    for (uint32_t s = 0; s < p->nstacks; s++) {
        const uint32_t *f = jp_profile_stack_frames(p, s);
        jp_strbuf_printf(&b, "s%d", (int)p->stacks[s].truncated);
        for (uint32_t j = 0; j < p->stacks[s].depth; j++)
            jp_strbuf_printf(&b, " %u", f[j]);
        jp_strbuf_append(&b, "\n", 1);
    }
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        const jp_kind_table *t = &p->kinds[k];
        jp_strbuf_printf(&b, "k%d %llu %llu %lld %llu\n", k, (unsigned long long)t->events,
                         (unsigned long long)t->truncated, (long long)t->period_ns,
                         (unsigned long long)t->lost);
        for (size_t i = 0; i < t->count; i++)
            jp_strbuf_printf(&b, "c %u %u %llu %llu\n", t->cells[i].stack, t->cells[i].thread,
                             (unsigned long long)t->cells[i].samples,
                             (unsigned long long)t->cells[i].value);
    }
    jp_strbuf_printf(&b, "gc %zu %zu %zu %zu\n", p->gc.ngcs, p->gc.npauses, p->gc.nheaps,
                     p->gc.ntallocs);
    jp_strbuf_printf(&b, "r %d %u %u %llu %llu %llu %d %s\n", (int)rc, r->chunks_total,
                     r->chunks_read, (unsigned long long)r->events_read,
                     (unsigned long long)r->events_used, (unsigned long long)r->events_filtered,
                     r->partial, r->error.msg);
    for (uint32_t w = 0; w < r->nwarnings; w++)
        jp_strbuf_printf(&b, "w %s\n", r->warnings[w]);
    return jp_strbuf_take(&b);
}

/* The input as a file (a memfd, read through its /proc path), or -1. */
static int input_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("fuzz.jfr", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    if (write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return -1;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

/* A read of the buffer, or with `file` of the same bytes as a file; both
 * name the input "fuzz.jfr" in messages. */
static char *read_with(const uint8_t *data, size_t size, const jfr_options *opt, const char *file)
{
    jp_profile *p = jp_profile_new();
    jfr_report rep;
    jfr_report_init(&rep);
    jp_err rc = file ? jfr_read_file(file, opt, p, &rep)
                     : jfr_read_buffer(data, size, "fuzz.jfr", opt, p, &rep);
    if (file) {
        /* messages name the path: make them name the buffer */
        size_t n = strlen(file);
        char *m = rep.error.msg;
        if (!strncmp(m, file, n)) {
            memmove(m + 8, m + n, strlen(m + n) + 1);
            memcpy(m, "fuzz.jfr", 8);
        }
        for (uint32_t w = 0; w < rep.nwarnings; w++) {
            m = rep.warnings[w];
            if (!strncmp(m, file, n)) {
                memmove(m + 8, m + n, strlen(m + n) + 1);
                memcpy(m, "fuzz.jfr", 8);
            }
        }
    }
    check_ranges(p);
    char *d = dump(p, &rep, rc);
    jp_profile_free(p);
    return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jfr_options opt;
    jfr_options_init(&opt);
    opt.threads = true;
    /* [start, end) of the recording: keeps most events, filters odd ones. */
    opt.has_from = opt.has_to = true;
    opt.from = (jp_timespec_arg){.relative = true, .value = 0};
    opt.to = (jp_timespec_arg){.relative = true, .from_end = true, .value = 0};
    char *serial = read_with(data, size, &opt, NULL);
    /* Pieces of a few events each: every chunk is split; a file is read in
     * steps of a few events. */
    char path[64];
    int fd = input_file(data, size, path, sizeof path);
    static const struct {
        int jobs;
        uint32_t block;
        bool file;
        int read;
    } ways[] = {{2, 64, false, JFR_READ_PREAD},
                {1, 48, true, JFR_READ_PREAD},
                {3, 300, true, JFR_READ_PREAD},
                {2, 65536, true, JFR_READ_MAP}}; /* windows of the file mapped */
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        if (ways[i].file && fd < 0)
            continue;
        opt.jobs = ways[i].jobs;
        opt.block = ways[i].block;
        opt.read = ways[i].read;
        char *other = read_with(data, size, &opt, ways[i].file ? path : NULL);
        if (strcmp(serial, other))
            __builtin_trap();
        free(other);
    }
    if (fd >= 0)
        close(fd);
    free(serial);
    /* The short path of a run's commonest event type (events.c) runs only
     * without threads and time filters: against the plans it stands for. */
    jfr_options_init(&opt);
    char *lead = read_with(data, size, &opt, NULL);
    opt.plans_only = true;
    char *plans = read_with(data, size, &opt, NULL);
    if (strcmp(lead, plans))
        __builtin_trap();
    free(lead);
    /* ... and walked two spans at a time by one thread (split.c) */
    opt.plans_only = false;
    opt.block = 40;
    lead = read_with(data, size, &opt, NULL);
    if (strcmp(lead, plans))
        __builtin_trap();
    free(lead);
    free(plans);
    jfr_options_init(&opt);
    opt.leak = true;
    jp_error err;
    jp_error_init(&err);
    jfr_states_parse(&opt, "RUNNABLE,DEFAULT", &err);
    opt.jobs = 2;
    opt.block = 256;
    free(read_with(data, size, &opt, NULL));
    return 0;
}
