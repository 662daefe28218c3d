/* libFuzzer target: what jprof-server does with the body of POST
 * /v1development/profiles (src/server/ingest_otlp.c): gzip with the
 * decompression cap when the body starts with the gzip magic, then the
 * OpenTelemetry profiles decoder (src/wire/otlp_decode.c, otlp_dict.c on
 * src/wire/protobuf.c) with the server's default limits and with tiny ones
 * so the 413 paths are reached too. A refusal must be one the server maps
 * (400, 413, 415) and say why. What decodes must survive a round trip: each
 * target encoded (src/wire/otlp_encode.c) and decoded again gives the same
 * samples and values per kind.
 *
 * Build and run: scripts/fuzz 60 otlp (see there for the clang command). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/gzip.h"
#include "wire/otlp_decode.h"
#include "wire/otlp_encode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_round_trip(const jp_otlp_target *t, const jp_otlp_limits *lim)
{
    jp_strbuf b;
    jp_strbuf_init(&b, 0);
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jp_otlp_encode(t->profile, ~0u, true, &t->target, &b, &e);
    if (rc == JP_ERR_NOT_FOUND) { /* a target whose samples were all zero */
        jp_strbuf_cleanup(&b);
        return;
    }
    if (rc)
        abort();
    jp_otlp_result r;
    jp_otlp_result_init(&r);
    if (jp_otlp_decode((const uint8_t *)b.data, b.len, lim, NULL, &r, &e) != JP_OK)
        abort(); /* the encoder wrote something its own decoder refuses */
    if (r.ntargets != 1)
        abort();
    for (int k = 0; k < JP_KIND_COUNT; k++) {
        const jp_kind_table *x = &t->profile->kinds[k], *y = &r.targets[0].profile->kinds[k];
        if (x->samples != y->samples || x->value != y->value)
            abort(); /* the round trip changed the profile */
    }
    jp_otlp_result_cleanup(&r);
    jp_strbuf_cleanup(&b);
}

static void fuzz_decode(const uint8_t *body, size_t len, const jp_otlp_limits *lim, bool trip)
{
    jp_otlp_result r;
    jp_otlp_result_init(&r);
    jp_error e;
    jp_error_init(&e);
    jp_batch_target df = {.ns = "fuzz", .service = "svc"};
    jp_err rc = jp_otlp_decode(body, len, lim, &df, &r, &e);
    if (rc == JP_OK) {
        for (size_t i = 0; trip && i < r.ntargets; i++)
            fuzz_round_trip(&r.targets[i], lim);
    } else if (rc != JP_ERR_FORMAT && rc != JP_ERR_TRUNCATED && rc != JP_ERR_LIMIT &&
               rc != JP_ERR_UNSUPPORTED) {
        abort(); /* the server maps only these to 400 / 413 */
    } else if (!e.msg[0]) {
        abort(); /* a refusal must say why */
    }
    jp_otlp_result_cleanup(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *body = data;
    size_t len = size;
    uint8_t *plain = NULL;
    if (jp_gzip_is(data, size)) {
        jp_error e;
        jp_error_init(&e);
        if (jp_gzip_decompress(data, size, 1u << 20, &plain, &len, &e) != JP_OK)
            return 0;
        body = plain;
    }
    jp_batch_limits bl;
    jp_batch_limits_default(&bl);
    jp_otlp_limits lim;
    jp_otlp_limits_default(&lim, &bl);
    fuzz_decode(body, len, &lim, true);
    jp_otlp_limits tiny = lim;
    tiny.max_table = 6;
    tiny.max_profiles = 2;
    tiny.max_samples = 5;
    tiny.max_targets = 2;
    tiny.batch.max_frames = 4;
    tiny.batch.max_threads = 2;
    tiny.batch.max_stacks = 3;
    tiny.batch.max_depth = 3;
    tiny.batch.max_rows = 4;
    tiny.batch.max_string = 16;
    fuzz_decode(body, len, &tiny, false);
    free(plain);
    return 0;
}
