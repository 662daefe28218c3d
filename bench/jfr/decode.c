/* bench/jfr/decode - what the JFR reader costs per event, without the file.
 *
 *   decode [-k KIND] [-j JOBS] [-n RUNS] FILE
 *
 * Reads FILE into memory (touching every page first), then decodes it RUNS
 * times with jfr_read_buffer into a fresh profile, and prints per run the
 * wall and CPU (user+sys of the process, every thread) nanoseconds per
 * event of the file (every event counts, as in jprof-top's report), then
 * the best run. So this is the decoder alone: what reading the file costs
 * (page cache to memory) is left out, and bench/jfr/peers measures the whole
 * program. Not a test: it prints figures. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/xalloc.h"
#include "jfr/jfr.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (double)r.ru_utime.tv_sec + (double)r.ru_utime.tv_usec * 1e-6 +
           (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec * 1e-6;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    jp_heap_tune(JP_HEAP_HUGE); /* as jprof-top reads a recording */
    jp_kind kind = JP_KIND_CPU;
    int jobs = 1, runs = 5, ch;
    while ((ch = getopt(argc, argv, "k:j:n:")) != -1) {
        if (ch == 'k' && jp_kind_parse(optarg, &kind))
            continue;
        if (ch == 'j' || ch == 'n') {
            long v = strtol(optarg, NULL, 10);
            if (v >= (ch == 'j' ? 0 : 1) && v <= 256) {
                *(ch == 'j' ? &jobs : &runs) = (int)v;
                continue;
            }
        }
        fprintf(stderr, "usage: decode [-k KIND] [-j JOBS] [-n RUNS] FILE\n");
        return 2;
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: decode [-k KIND] [-j JOBS] [-n RUNS] FILE\n");
        return 2;
    }
    size_t len = 0;
    uint8_t *buf = slurp(argv[optind], &len);
    if (!buf) {
        fprintf(stderr, "decode: cannot read %s\n", argv[optind]);
        return 1;
    }
    /* Touch every page once: the first pass over memory the kernel just
     * filled costs far more than later ones (page table set-up: 0.3 s for
     * 126 MB on this VM, four times the decode). Volatile reads: a sum that
     * nothing used let the compiler drop the loop, and run 1 paid it. */
    for (size_t i = 0; i < len; i += 4096)
        (void)((volatile const uint8_t *)buf)[i];
    double best_wall = 0, best_cpu = 0;
    uint64_t events = 0;
    for (int r = 0; r < runs; r++) {
        jfr_options opt;
        jfr_options_init(&opt);
        opt.kinds = 1u << kind;
        opt.jobs = jobs;
        opt.skip_gc = true;
        jfr_report rep;
        jfr_report_init(&rep);
        jp_profile *p = jp_profile_new();
        double w0 = now(), c0 = cpu();
        jp_err rc = jfr_read_buffer(buf, len, argv[optind], &opt, p, &rep);
        double w = now() - w0, c = cpu() - c0;
        jp_profile_free(p);
        if (rc) {
            fprintf(stderr, "decode: %s\n", rep.error.msg);
            free(buf);
            return 1;
        }
        events = rep.events_read;
        printf("run %d: %.1f ns/event wall, %.1f ns/event cpu (%.3f s, %.3f cpu-s)\n", r + 1,
               w * 1e9 / (double)events, c * 1e9 / (double)events, w, c);
        if (!r || w < best_wall)
            best_wall = w;
        if (!r || c < best_cpu)
            best_cpu = c;
    }
    printf("best: %.1f ns/event wall, %.1f ns/event cpu; %llu events, %.1f MB, kind %s, jobs %d\n",
           best_wall * 1e9 / (double)events, best_cpu * 1e9 / (double)events,
           (unsigned long long)events, (double)len / 1e6, jp_kind_name(kind), jobs);
    free(buf);
    return 0;
}
