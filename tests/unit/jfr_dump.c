/* jfr_dump - developer tool: prints what the JFR reader makes of a file.
 *
 *   jfr_dump [-k KIND] [-t] [-v] [--from T] [--to T] FILE
 *
 * Prints one collapsed line per (stack, thread) of KIND (default cpu):
 * "root;...;leaf COUNT" with COUNT the samples, or the value with -v; -t puts
 * the thread name first; -m prints memory use. The report goes to stderr. Used to compare the
 * reader with `jfr print --json` by hand and by the benchmarks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr/jfr.h"

static void usage(void)
{
    fprintf(stderr, "usage: jfr_dump [-k cpu|wall|alloc|lock|park] [-t] [-v] [-q] [-m] "
                    "[--from T] [--to T] FILE\n");
    exit(3);
}

/* -m: the process's memory after the read (anonymous vs file-backed). */
static void print_memory(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM", 5) || !strncmp(line, "VmRSS", 5) ||
            !strncmp(line, "RssAnon", 7) || !strncmp(line, "RssFile", 7))
            fputs(line, stderr);
    if (f)
        fclose(f);
}

static void print_stack(const jp_profile *p, const jp_sample *c, bool threads)
{
    size_t len;
    if (threads && c->thread != JP_NO_THREAD) {
        const char *n = jp_profile_frame_name(p, c->thread, &len);
        fwrite(n, 1, len, stdout);
        putchar(';');
    }
    const uint32_t *f = jp_profile_stack_frames(p, c->stack);
    for (uint32_t i = 0; i < p->stacks[c->stack].depth; i++) {
        const char *n = jp_profile_frame_name(p, f[i], &len);
        if (i)
            putchar(';');
        fwrite(n, 1, len, stdout);
    }
}

int main(int argc, char **argv)
{
    jfr_options opt;
    jfr_options_init(&opt);
    jp_kind kind = JP_KIND_CPU;
    bool value = false, quiet = false, memory = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        jp_error err;
        jp_error_init(&err);
        if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            if (!jp_kind_parse(argv[++i], &kind))
                usage();
        } else if (!strcmp(argv[i], "-t")) {
            opt.threads = true;
        } else if (!strcmp(argv[i], "-v")) {
            value = true;
        } else if (!strcmp(argv[i], "-q")) {
            quiet = true;
        } else if (!strcmp(argv[i], "-m")) {
            memory = true;
        } else if (!strcmp(argv[i], "--from") && i + 1 < argc) {
            if (jp_timespec_parse(argv[++i], &opt.from, &err))
                usage();
            opt.has_from = true;
        } else if (!strcmp(argv[i], "--to") && i + 1 < argc) {
            if (jp_timespec_parse(argv[++i], &opt.to, &err))
                usage();
            opt.has_to = true;
        } else if (argv[i][0] == '-' || path) {
            usage();
        } else {
            path = argv[i];
        }
    }
    if (!path)
        usage();
    opt.kinds = 1u << kind;
    jp_profile *p = jp_profile_new();
    jfr_report rep;
    jfr_report_init(&rep);
    jp_err rc = jfr_read_file(path, &opt, p, &rep);
    const jp_kind_table *t = &p->kinds[kind];
    for (size_t i = 0; !quiet && i < t->count; i++) {
        print_stack(p, &t->cells[i], opt.threads);
        printf(" %llu\n", (unsigned long long)(value ? t->cells[i].value : t->cells[i].samples));
    }
    fprintf(stderr,
            "version %d.%d chunks %u/%u events read %llu used %llu filtered %llu\n"
            "%s: events %llu samples %llu value %llu truncated %llu period %lld ns\n"
            "frames %zu stacks %zu memory %zu bytes\n",
            rep.major, rep.minor, rep.chunks_read, rep.chunks_total,
            (unsigned long long)rep.events_read, (unsigned long long)rep.events_used,
            (unsigned long long)rep.events_filtered, jp_kind_name(kind),
            (unsigned long long)t->events, (unsigned long long)t->samples,
            (unsigned long long)t->value, (unsigned long long)t->truncated, (long long)t->period_ns,
            p->nframes, p->nstacks, jp_profile_memory(p));
    for (uint32_t i = 0; i < rep.nwarnings; i++)
        fprintf(stderr, "warning: %s\n", rep.warnings[i]);
    if (rc)
        fprintf(stderr, "error: %s\n", rep.error.msg);
    if (memory)
        print_memory();
    jp_profile_free(p);
    return rc ? 1 : 0;
}
