/* Unit tests of src/wire: zstd framing with caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "wire/zstd_frame.h"

static void test_zstd_roundtrip(void **state)
{
    (void)state;
    const char *msg = "{\"batch_id\":\"b-1\",\"windows\":[]}";
    uint8_t *z, *back;
    size_t zlen, blen;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_zstd_compress(msg, strlen(msg), 3, &z, &zlen, &e), JP_OK);
    assert_int_equal(jp_zstd_decompress(z, zlen, 1024, &back, &blen, &e), JP_OK);
    assert_int_equal(blen, strlen(msg));
    assert_string_equal((char *)back, msg);
    free(back);
    /* the same input with a cap one byte too small is refused */
    assert_int_equal(jp_zstd_decompress(z, zlen, strlen(msg) - 1, &back, &blen, &e), JP_ERR_LIMIT);
    /* a cut frame is reported, not accepted */
    assert_int_equal(jp_zstd_decompress(z, zlen - 3, 1024, &back, &blen, &e), JP_ERR_TRUNCATED);
    free(z);
}

static void test_zstd_bomb_is_stopped_at_the_cap(void **state)
{
    (void)state;
    size_t big = 64u << 20; /* 64 MB of zeros compress to a few KB */
    char *zeros = calloc(big, 1);
    uint8_t *z, *back = NULL;
    size_t zlen, blen;
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_zstd_compress(zeros, big, 1, &z, &zlen, &e), JP_OK);
    free(zeros);
    assert_true(zlen < 1u << 20);
    assert_int_equal(jp_zstd_decompress(z, zlen, 1u << 20, &back, &blen, &e), JP_ERR_LIMIT);
    assert_null(back);
    assert_non_null(strstr(e.msg, "exceeds the limit"));
    /* garbage is a format error */
    assert_int_equal(jp_zstd_decompress("not zstd at all", 15, 1024, &back, &blen, &e),
                     JP_ERR_FORMAT);
    free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zstd_roundtrip),
        cmocka_unit_test(test_zstd_bomb_is_stopped_at_the_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
