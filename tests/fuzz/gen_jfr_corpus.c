/* gen_jfr_corpus - writes the JFR seed corpus (tests/fuzz/corpus/jfr) from
 * the unit tests' synthetic writer: whole chunks in both formats, a
 * multi-chunk file, async-profiler style settings, and cut / bit-flipped
 * variants. Run by `scripts/fuzz --regen-corpus`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_writer.h"

static const char *dir;

static void save(const char *name, const uint8_t *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
        perror(path);
        exit(1);
    }
}

static void variants(const char *base, const jw_buf *b)
{
    char name[256];
    snprintf(name, sizeof name, "%s.jfr", base);
    save(name, b->data, b->len);
    /* Cut in the metadata, in the events and in the pools. */
    for (int i = 1; i <= 3; i++) {
        snprintf(name, sizeof name, "%s-cut%d.jfr", base, i);
        save(name, b->data, b->len * (size_t)i / 4);
    }
    /* Flip a byte in a few places. */
    uint8_t *copy = malloc(b->len);
    for (int i = 1; i <= 3; i++) {
        memcpy(copy, b->data, b->len);
        copy[b->len * (size_t)i / 4 + 3] ^= 0x5a;
        snprintf(name, sizeof name, "%s-flip%d.jfr", base, i);
        save(name, copy, b->len);
    }
    free(copy);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_jfr_corpus DIR\n");
        return 2;
    }
    dir = argv[1];
    static const struct {
        const char *name;
        int minor, flavour;
    } std[] = {{"std-2.0-jdk11", 0, JW_JDK11},
               {"std-2.1-jdk17", 1, JW_JDK17},
               {"std-2.1-future", 1, JW_FUTURE}};
    for (size_t i = 0; i < 3; i++) {
        jw_buf b;
        jw_init(&b);
        jw_std_chunk(&b, std[i].minor, std[i].flavour, 1000000000000000000LL, 4);
        variants(std[i].name, &b);
        jw_free(&b);
    }
    jw_buf b;
    jw_init(&b);
    jw_std_chunk(&b, 0, JW_JDK11, 1000000000000000000LL, 2);
    jw_std_chunk(&b, 1, JW_FUTURE, 1000000001000000000LL, 2);
    variants("two-chunks", &b);
    jw_free(&b);
    /* async-profiler style: "event" and "interval" settings, wall samples. */
    jw_init(&b);
    jw_chunk c;
    jw_chunk_begin(&c, &b, 0, 1, 1000, 1000000000);
    jw_std_metadata(&c, JW_JDK17);
    jw_ev_setting(&b, 1000, 107, "event", "wall");
    jw_ev_setting(&b, 1000, JW_EXEC, "interval", "0");
    jw_ev_exec(&b, JW_JDK17, 1000, 1, 1);
    jw_ev_wall(&b, 1000, 2, 2, 4);
    jw_std_pools(&c, JW_JDK17);
    jw_chunk_end(&c, 1000);
    variants("asprof-style", &b);
    jw_free(&b);
    return 0;
}
