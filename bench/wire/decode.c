/* decode.c - what reading an ingest batch costs: jprof-server's decoder
 * (src/wire/batch_json.c on the pull parser src/wire/json_pull.c) against
 * jansson building its tree of the same text; and the same profile sent as
 * OpenTelemetry profiles (src/wire/otlp_decode.c), what a push over OTLP
 * costs the server against the agent's own batch.
 *
 *   bench/wire/decode gen FILE [--stacks N] [--windows W] [--depth D]
 *       writes one batch as JSON: N stacks of D/2..D frames over 2N frame
 *       names, W windows of one pod each with a row for every stack; and
 *       FILE.otlp, the first window as an OTLP ProfilesData
 *   bench/wire/decode pull|jansson|otlp FILE [--repeat K]
 *       reads FILE, decodes it K times, prints the best wall time, the CPU
 *       time per decode and the peak RSS above what the text itself needs
 *
 * "jansson" is json_loadb + json_decref only: a decoder on jansson has to
 * build that tree before it can read anything, and then still walks it
 * into the same jp_batch, so its figures are a lower bound of such a
 * decoder. Run one mode per process (bench/wire/run does): the peak RSS
 * is the process's own. */
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "wire/batch.h"
#include "wire/batch_json.h"
#include "wire/otlp_decode.h"
#include "wire/otlp_encode.h"

static void usage(FILE *f)
{
    fputs("usage: decode gen FILE [--stacks N] [--windows W] [--depth D]\n"
          "       decode pull|jansson|otlp FILE [--repeat K]\n"
          "Times jprof-server's batch decoder against jansson's tree on one batch.\n",
          f);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* FILE.otlp: the first window of b as OTLP (its stacks, cpu counted and
 * in ns, the way jprof-top --format otlp writes a profile). */
static int gen_otlp(const jp_batch *b, const char *path)
{
    jp_profile *p = jp_profile_new();
    uint32_t *fmap = jp_xcalloc(b->nframes + 1, sizeof *fmap), *fr = NULL;
    size_t cap = 0;
    for (size_t f = 0; f < b->nframes; f++)
        fmap[f] = jp_profile_frame(p, b->frames[f], strlen(b->frames[f]), JP_FRAME_JIT);
    const jp_batch_window *w = &b->windows[0];
    for (size_t i = 0; i < w->nrows; i++) {
        const jp_batch_stack *st = &b->stacks[w->rows[i].stack];
        fr = jp_xgrow(fr, &cap, st->depth + 1, sizeof *fr);
        for (uint32_t d = 0; d < st->depth; d++)
            fr[d] = fmap[st->frames[d]];
        uint32_t s = jp_profile_stack(p, fr, st->depth, false);
        jp_profile_add(p, w->kind, s, JP_NO_THREAD, w->rows[i].samples, w->rows[i].samples,
                       w->rows[i].value);
    }
    p->kinds[w->kind].period_ns = w->period_ns;
    jp_strbuf out;
    jp_strbuf_init(&out, 0);
    jp_error e;
    jp_error_init(&e);
    char name[1024];
    snprintf(name, sizeof name, "%s.otlp", path);
    jp_err rc = jp_otlp_encode(p, ~0u, false, &w->target, &out, &e);
    FILE *f = rc ? NULL : fopen(name, "wb");
    if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f) != 0) {
        fprintf(stderr, "decode: cannot write %s %s\n", name, e.msg);
        rc = JP_ERR_IO;
    } else {
        printf("%s: %.1f MB, the first window as OTLP\n", name, (double)out.len / 1e6);
    }
    jp_strbuf_cleanup(&out);
    free(fmap);
    free(fr);
    jp_profile_free(p);
    return rc ? 1 : 0;
}

static int gen(const char *path, int stacks, int windows, int depth)
{
    jp_batch b;
    jp_batch_init(&b);
    b.id = jp_xstrdup("bench-decode-1");
    b.collector = jp_xstrdup("bench@node");
    char buf[160];
    int nframes = stacks * 2;
    for (int f = 0; f < nframes; f++) {
        int len =
            snprintf(buf, sizeof buf, "com.bench.app.pkg%d.Class%d.method%d", f % 37, f % 211, f);
        jp_batch_add_frame(&b, buf, (size_t)len);
    }
    uint32_t *fr = jp_xcalloc((size_t)depth + 1, sizeof *fr);
    uint64_t r = 0x9e3779b97f4a7c15ULL;
    for (int s = 0; s < stacks; s++) {
        int d = depth / 2 + (int)(rng_next(&r) % (uint64_t)(depth / 2 + 1));
        for (int i = 0; i < d; i++)
            fr[i] = i < 4 ? (uint32_t)i : (uint32_t)(rng_next(&r) % (uint64_t)nframes);
        fr[d - 1] = (uint32_t)(s % nframes);
        jp_batch_add_stack(&b, fr, (uint32_t)d, false);
    }
    free(fr);
    int64_t minute = 60 * JP_NS_PER_SEC, now = jp_time_now_ns();
    for (int w = 0; w < windows; w++) {
        jp_batch_window *win = jp_batch_add_window(&b);
        win->target.ns = jp_xstrdup("bench");
        win->target.service = jp_xstrdup("svc0");
        snprintf(buf, sizeof buf, "svc0-pod%d", w);
        win->target.pod = jp_xstrdup(buf);
        win->kind = JP_KIND_CPU;
        win->start_ns = (now / minute - 2) * minute;
        win->end_ns = win->start_ns + minute;
        win->period_ns = 10000000;
        for (int s = 0; s < stacks; s++) {
            uint64_t n = 1 + rng_next(&r) % 50;
            jp_batch_window_add_row(win, (uint32_t)s, JP_BATCH_NO_THREAD, n, n * 10000000);
            win->events += n;
        }
    }
    int rc = gen_otlp(&b, path);
    size_t len;
    char *json = jp_batch_json_encode(&b, &len);
    jp_batch_cleanup(&b);
    if (rc)
        return rc;
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(json, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "decode: cannot write %s\n", path);
        free(json);
        return 1;
    }
    free(json);
    printf("%s: %.1f MB, %d stacks, %d windows, %llu rows\n", path, (double)len / 1e6, stacks,
           windows, (unsigned long long)stacks * (unsigned long long)windows);
    return 0;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 20, n = 0, got;
    char *buf = jp_xmalloc(cap);
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            cap *= 2;
            buf = jp_xrealloc(buf, cap);
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* One decode of text in mode; false (after printing why) when it fails. */
static bool decode_once(const char *mode, const char *text, size_t len)
{
    jp_error e;
    jp_error_init(&e);
    if (!strcmp(mode, "otlp")) {
        jp_otlp_limits lim;
        jp_otlp_limits_default(&lim, NULL);
        jp_otlp_result r;
        jp_otlp_result_init(&r);
        jp_err rc = jp_otlp_decode((const uint8_t *)text, len, &lim, NULL, &r, &e);
        jp_otlp_result_cleanup(&r);
        if (rc)
            fprintf(stderr, "decode: %s\n", e.msg);
        return rc == JP_OK;
    }
    if (!strcmp(mode, "pull")) {
        jp_batch b;
        jp_batch_init(&b);
        jp_batch_limits lim;
        jp_batch_limits_default(&lim);
        jp_err rc = jp_batch_json_decode(text, len, &lim, &b, &e);
        jp_batch_cleanup(&b);
        if (rc)
            fprintf(stderr, "decode: %s\n", e.msg);
        return rc == JP_OK;
    }
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root) {
        fprintf(stderr, "decode: jansson: %s at %d\n", je.text, je.position);
        return false;
    }
    json_decref(root);
    return true;
}

static int run(const char *mode, const char *path, int repeat)
{
    size_t len;
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "decode: cannot read %s\n", path);
        return 1;
    }
    long base = maxrss_kb();
    double best = 1e30, cpu0 = cpu_s();
    for (int i = 0; i < repeat; i++) {
        int64_t t0 = jp_time_mono_ns();
        if (!decode_once(mode, text, len))
            return 1;
        double ms = (double)(jp_time_mono_ns() - t0) / 1e6;
        if (ms < best)
            best = ms;
    }
    double cpu = (cpu_s() - cpu0) / repeat;
    printf("%-8s %8.1f MB  best %8.1f ms  cpu %8.1f ms/decode  %7.1f MB/cpu-s  peak RSS +%.1f MB "
           "over the text's %.1f MB\n",
           mode, (double)len / 1e6, best, cpu * 1e3, (double)len / 1e6 / cpu,
           (double)(maxrss_kb() - base) / 1024.0, (double)base / 1024.0);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "--help")) {
        usage(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        puts("decode (jprof bench) " PACKAGE_VERSION);
        return 0;
    }
    if (argc < 3) {
        usage(stderr);
        return 2;
    }
    int stacks = 2000, windows = 1, depth = 24, repeat = 5;
    for (int i = 3; i + 1 < argc; i += 2) {
        int v = (int)strtol(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--stacks"))
            stacks = v;
        else if (!strcmp(argv[i], "--windows"))
            windows = v;
        else if (!strcmp(argv[i], "--depth"))
            depth = v;
        else if (!strcmp(argv[i], "--repeat"))
            repeat = v;
        else {
            fprintf(stderr, "decode: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (stacks < 1 || windows < 1 || depth < 2 || repeat < 1) {
        fprintf(stderr, "decode: bad sizes\n");
        return 2;
    }
    if (!strcmp(argv[1], "gen"))
        return gen(argv[2], stacks, windows, depth);
    if (!strcmp(argv[1], "pull") || !strcmp(argv[1], "jansson") || !strcmp(argv[1], "otlp"))
        return run(argv[1], argv[2], repeat);
    usage(stderr);
    return 2;
}
