/* libFuzzer target: what jprof-server does with the body of POST
 * /api/v1/ingest (src/server/ingest.c): zstd frames with the decompression
 * cap when the body starts with the zstd magic, then the batch decoder
 * (src/wire/batch_json.c on src/wire/json_pull.c), with the server's default
 * limits and with tiny ones so the 413 paths are reached too. A batch that
 * decodes must survive a round trip: encode, decode again, encode again, and
 * both encodings equal (the server stores what it decoded; the agent sends
 * what it encoded).
 *
 * Build and run (clang; libclang-rt-14-dev for the fuzzer runtime), from the
 * source tree, with any configured build dir BUILD for config.h:
 *   clang -std=c11 -g -O1 -fno-omit-frame-pointer \
 *     -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
 *     -include BUILD/config.h -Isrc tests/fuzz/fuzz_batch_json.c \
 *     src/wire/batch_json.c src/wire/batch.c src/wire/json_pull.c \
 *     src/wire/zstd_frame.c src/wire/gc_json.c src/model/gc.c src/model/profile.c \
 *     src/base/[a-z]*.c \
 *     -ljansson -lzstd -lm -o fuzz_batch_json
 *   ./fuzz_batch_json -max_len=65536 -timeout=10 CORPUS_DIR tests/fuzz/corpus/batch */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/batch_json.h"
#include "wire/zstd_frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A decoded batch must encode to text that decodes to the same batch. */
static void fuzz_round_trip(const jp_batch *b, const jp_batch_limits *lim)
{
    size_t len1, len2;
    char *t1 = jp_batch_json_encode(b, &len1);
    jp_batch b2;
    jp_batch_init(&b2);
    jp_error e;
    jp_error_init(&e);
    if (jp_batch_json_decode(t1, len1, lim, &b2, &e) != JP_OK)
        abort(); /* the encoder wrote something its own decoder refuses */
    char *t2 = jp_batch_json_encode(&b2, &len2);
    if (len1 != len2 || memcmp(t1, t2, len1) != 0)
        abort(); /* the round trip changed the batch */
    free(t2);
    jp_batch_cleanup(&b2);
    free(t1);
}

static void fuzz_decode(const char *text, size_t len, const jp_batch_limits *lim)
{
    jp_batch b;
    jp_batch_init(&b);
    jp_error e;
    jp_error_init(&e);
    jp_err rc = jp_batch_json_decode(text, len, lim, &b, &e);
    if (rc == JP_OK)
        fuzz_round_trip(&b, lim);
    else if (rc != JP_ERR_FORMAT && rc != JP_ERR_LIMIT)
        abort(); /* the server maps only these two to 400 / 413 */
    else if (!e.msg[0])
        abort(); /* a refusal must say why */
    jp_batch_cleanup(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *body = data;
    size_t len = size;
    uint8_t *plain = NULL;
    if (size >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f && data[3] == 0xfd) {
        jp_error e;
        jp_error_init(&e);
        if (jp_zstd_decompress(data, size, 1u << 20, &plain, &len, &e) != JP_OK)
            return 0;
        body = plain;
    }
    jp_batch_limits lim;
    jp_batch_limits_default(&lim);
    fuzz_decode((const char *)body, len, &lim);
    jp_batch_limits tiny = {.max_windows = 2,
                            .max_frames = 4,
                            .max_threads = 2,
                            .max_stacks = 4,
                            .max_depth = 3,
                            .max_rows = 5,
                            .max_docs = 2,
                            .max_string = 16,
                            .max_doc_bytes = 256};
    fuzz_decode((const char *)body, len, &tiny);
    free(plain);
    return 0;
}
