/* libFuzzer target: what jprof-server does with POST /ingest
 * (src/server/ingest_pyroscope.c) besides the JFR reader (fuzz_jfr): the
 * series name (src/wire/pyroscope.c), a multipart/form-data body
 * (src/wire/multipart.c), a labels snapshot, and a pprof profile
 * (src/wire/pprof_decode.c, gzipped or not), with the server's default
 * limits and with tiny ones. The first input byte picks what the rest is:
 *   0 a name, 1 a multipart body (the boundary "b" and the next 8 bytes as
 *   boundary when they are printable), 2 a labels snapshot, else pprof.
 * A refusal must be one the server maps to 400/413 and say why; a parsed
 * multipart part must lie inside the body.
 *
 * Build and run: scripts/fuzz 60 pyroscope (see there for the clang command). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/multipart.h"
#include "wire/pprof_decode.h"
#include "wire/pyroscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_refusal(jp_err rc, const jp_error *e)
{
    if (rc == JP_OK)
        return;
    if (rc != JP_ERR_FORMAT && rc != JP_ERR_TRUNCATED && rc != JP_ERR_LIMIT &&
        rc != JP_ERR_UNSUPPORTED && rc != JP_ERR_NOT_FOUND)
        abort(); /* the server maps only these */
    if (!e->msg[0])
        abort(); /* a refusal must say why */
}

static void fuzz_name(const uint8_t *data, size_t size)
{
    char *name = malloc(size + 1);
    memcpy(name, data, size);
    name[size] = '\0';
    jp_batch_target t;
    memset(&t, 0, sizeof t);
    const char *hint;
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jp_pyroscope_name(name, NULL, 64, &t, &hint, &e);
    fuzz_refusal(rc, &e);
    if (rc == JP_OK && (!t.ns || !t.service || !t.pod))
        abort(); /* a parsed name always names a target */
    jp_batch_target_cleanup(&t);
    free(name);
}

static void fuzz_multipart(const uint8_t *data, size_t size)
{
    char boundary[16] = "b";
    if (size >= 8) {
        bool printable = true;
        for (int i = 0; i < 8; i++)
            printable = printable && data[i] > 0x20 && data[i] < 0x7f;
        if (printable) {
            memcpy(boundary, data, 8);
            boundary[8] = '\0';
            data += 8;
            size -= 8;
        }
    }
    jp_mp_part parts[4];
    size_t n = 0;
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jp_multipart_parse(data, size, boundary, parts, 4, &n, &e);
    fuzz_refusal(rc, &e);
    for (size_t i = 0; i < n; i++)
        if (parts[i].data < data || parts[i].data + parts[i].len > data + size)
            abort(); /* a part outside the body */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    uint8_t what = data[0];
    data++;
    size--;
    jp_error e;
    jp_error_init(&e);
    if (what == 0) {
        fuzz_name(data, size);
    } else if (what == 1) {
        fuzz_multipart(data, size);
    } else if (what == 2) {
        uint64_t c, s;
        fuzz_refusal(jp_pyroscope_labels(data, size, &c, &s, &e), &e);
    } else {
        jp_batch_limits bl;
        jp_batch_limits_default(&bl);
        jp_otlp_limits lim;
        jp_otlp_limits_default(&lim, &bl);
        if (what & 1) {
            lim.max_table = 6;
            lim.max_samples = 5;
            lim.batch.max_depth = 3;
            lim.batch.max_frames = 4;
            lim.batch.max_stacks = 3;
            lim.batch.max_rows = 4;
            lim.batch.max_string = 16;
        }
        jp_profile *p = jp_profile_new();
        fuzz_refusal(jp_pprof_decode(data, size, &lim, 1u << 20, p, &e), &e);
        jp_profile_free(p);
    }
    return 0;
}
