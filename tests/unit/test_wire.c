/* Unit tests of src/wire: zstd framing with caps; snapshot JSON read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "model/analyze.h"
#include "wire/pprof.h"
#include "wire/snapshot_json.h"
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

/* left and right deadlock on two monitors; behind waits for right. */
static jp_snapshot *cycle_snapshot(void)
{
    jp_snapshot *s = jp_snapshot_new("helper");
    s->taken_ns = 1700000000000000000;
    const char *names[3] = {"left", "right", "behind"};
    for (int i = 0; i < 3; i++) {
        jp_thread *t = jp_snapshot_add_thread(s);
        t->id = 21 + i;
        t->name = jp_snapshot_strdup(s, names[i]);
        t->state = JP_TSTATE_BLOCKED;
        t->cpu_ns = 1000 * (3 - i); /* busiest first = this order, as in the JSON */
        jp_snap_frame *f = jp_thread_add_frame(s, t);
        f->class_name = jp_snapshot_strdup(s, "shop.Work");
        f->method = jp_snapshot_strdup(s, names[i]);
        f->file = jp_snapshot_strdup(s, "Work.java");
        f->line = 10 + i;
        t->wait_kind = JP_WAIT_ENTER;
        t->wait_lock.class_name = jp_snapshot_strdup(s, "java.lang.Object");
        t->wait_lock.id = i == 0 ? 0xb2 : i == 1 ? 0xa1 : 0xb2;
        t->wait_lock.frame = 0;
        t->wait_owner_id = i == 1 ? 21 : 22;
        if (i < 2) {
            jp_lock_ref *l = jp_thread_add_held(s, t);
            l->class_name = jp_snapshot_strdup(s, "java.lang.Object");
            l->id = i == 0 ? 0xa1 : 0xb2;
            l->frame = 0;
        }
    }
    return s;
}

static void test_snapshot_json_read_back(void **state)
{
    (void)state;
    jp_snapshot *s = cycle_snapshot();
    json_t *j = jp_snapshot_json(s, NULL, NULL, NULL);
    jp_snapshot *back = jp_snapshot_from_json(j);
    assert_non_null(back);
    assert_int_equal(back->count, 3);
    /* the JSON lists the busiest first: find the threads by id */
    long left = jp_snapshot_find_id(back, 21), right = jp_snapshot_find_id(back, 22);
    long behind = jp_snapshot_find_id(back, 23);
    assert_true(left >= 0 && right >= 0 && behind >= 0);
    assert_string_equal(back->threads[left].frames[0].method, "left");
    assert_string_equal(back->threads[left].frames[0].file, "Work.java");
    assert_int_equal(back->threads[left].frames[0].line, 10);
    assert_int_equal(back->threads[right].wait_lock.id, 0xa1);
    /* the same analyses give the same answers on the copy */
    json_t *again = jp_snapshot_json(back, NULL, NULL, NULL);
    assert_true(json_equal(json_object_get(j, "locks"), json_object_get(again, "locks")));
    assert_true(json_equal(json_object_get(j, "deadlocks"), json_object_get(again, "deadlocks")));
    assert_int_equal(json_array_size(json_object_get(again, "deadlocks")), 1);
    /* "blocks N": a waiter leading into a cycle counts each owner once */
    size_t *blocks = jp_analyze_blocks_counts(back);
    assert_int_equal(blocks[left], 2);
    assert_int_equal(blocks[right], 2);
    assert_int_equal(blocks[behind], 0);
    free(blocks);
    json_decref(again);
    json_decref(j);
    jp_snapshot_free(back);
    jp_snapshot_free(s);
}

static void test_snapshot_json_flat_form(void **state)
{
    (void)state;
    const char *flat =
        "{\"threads\":[{\"id\":1,\"name\":\"a\",\"state\":\"RUNNABLE\","
        "\"locks_held\":[\"java.lang.Object@6d06\"],\"stack\":[\"x.Y.z(Native Method)\"]},"
        "{\"id\":2,\"name\":\"b\",\"state\":\"BLOCKED\",\"waiting_on\":"
        "{\"lock\":\"java.lang.Object@6d06\",\"kind\":\"enter\"},\"owner_id\":1},"
        "{\"id\":\"bad\",\"name\":7,\"held\":[{\"id\":\"zz\"}],\"waiting_on\":\"L9\"},"
        "5]}";
    json_t *j = json_loads(flat, 0, NULL);
    assert_non_null(j);
    jp_snapshot *s = jp_snapshot_from_json(j);
    assert_non_null(s);
    assert_int_equal(s->count, 3); /* 5 is not a thread */
    assert_int_equal(s->threads[0].frames[0].line, -2);
    assert_int_equal(s->threads[1].wait_kind, JP_WAIT_ENTER);
    assert_int_equal(s->threads[1].wait_lock.id, 0x6d06);
    assert_string_equal(s->threads[2].name, "?");
    assert_int_equal(s->threads[2].id, -1);
    size_t *blocks = jp_analyze_blocks_counts(s);
    assert_int_equal(blocks[0], 1);
    free(blocks);
    jp_snapshot_free(s);
    json_decref(j);
    j = json_loads("{\"threads\":{}}", 0, NULL);
    assert_null(jp_snapshot_from_json(j));
    json_decref(j);
}

/* ---- pprof: decoded here with a reader of our own (protobuf wire format) ---- */

typedef struct pb_in {
    const uint8_t *p, *end;
} pb_in;

static uint64_t pb_read_varint(pb_in *in)
{
    uint64_t v = 0;
    for (int shift = 0; in->p < in->end && shift < 64; shift += 7) {
        uint8_t b = *in->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    fail_msg("bad varint");
    return 0;
}

/* Next field of a message: its number; *sub set for length-delimited ones. */
static unsigned pb_next(pb_in *in, uint64_t *num, pb_in *sub)
{
    uint64_t key = pb_read_varint(in);
    if ((key & 7) == 0) {
        *num = pb_read_varint(in);
    } else {
        assert_int_equal(key & 7, 2);
        uint64_t len = pb_read_varint(in);
        assert_true(len <= (uint64_t)(in->end - in->p));
        sub->p = in->p;
        sub->end = in->p + len;
        in->p += len;
    }
    return (unsigned)(key >> 3);
}

static void test_pprof_decodes(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    uint32_t a = jp_profile_frame(p, "app.Main.run", 12, JP_FRAME_JIT);
    uint32_t b = jp_profile_frame(p, "app.Tax.compute", 15, JP_FRAME_JIT);
    uint32_t c = jp_profile_frame(p, "__vdso_clock_gettime", 20, JP_FRAME_NATIVE);
    uint32_t t = jp_profile_thread(p, "worker-1", 8);
    uint32_t s1f[] = {a, b}, s2f[] = {a, c};
    uint32_t s1 = jp_profile_stack(p, s1f, 2, false), s2 = jp_profile_stack(p, s2f, 2, false);
    jp_profile_add(p, JP_KIND_CPU, s1, t, 7, 7, 70000000);
    jp_profile_add(p, JP_KIND_CPU, s2, JP_NO_THREAD, 3, 3, 30000000);
    p->kinds[JP_KIND_CPU].period_ns = 10000000;
    jp_strbuf gz;
    jp_strbuf_init(&gz, 0);
    jp_error e;
    jp_error_init(&e);
    assert_int_equal(jp_pprof_encode(p, JP_KIND_ALLOC, true, &gz, &e), JP_ERR_NOT_FOUND);
    assert_int_equal(jp_pprof_encode(p, JP_KIND_CPU, true, &gz, &e), JP_OK);
    assert_true(gz.len > 18 && (uint8_t)gz.data[0] == 0x1f && (uint8_t)gz.data[1] == 0x8b);

    uint8_t raw[4096];
    z_stream z = {0};
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)gz.data;
    z.avail_in = (uInt)gz.len;
    z.next_out = raw;
    z.avail_out = sizeof raw;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    pb_in in = {raw, raw + z.total_out};
    inflateEnd(&z);

    char strings[32][32];
    size_t nstr = 0;
    uint64_t samples = 0, values = 0, nsample = 0, labelled = 0, period = 0, fname[8] = {0};
    uint64_t leaf_of_7 = 0;
    while (in.p < in.end) {
        uint64_t num = 0;
        pb_in sub = {0};
        unsigned f = pb_next(&in, &num, &sub);
        if (f == 6) { /* string_table */
            size_t n = (size_t)(sub.end - sub.p);
            assert_true(nstr < 32 && n < 32);
            memcpy(strings[nstr], sub.p, n);
            strings[nstr++][n] = 0;
        } else if (f == 2) { /* sample */
            uint64_t locs[8], vals[2];
            size_t nl = 0, nv = 0;
            nsample++;
            while (sub.p < sub.end) {
                pb_in sf = {0};
                unsigned g = pb_next(&sub, &num, &sf);
                while (g == 1 && sf.p < sf.end && nl < 8)
                    locs[nl++] = pb_read_varint(&sf);
                while (g == 2 && sf.p < sf.end && nv < 2)
                    vals[nv++] = pb_read_varint(&sf);
                labelled += g == 3;
            }
            assert_int_equal(nl, 2);
            assert_int_equal(nv, 2);
            samples += vals[0];
            values += vals[1];
            if (vals[0] == 7)
                leaf_of_7 = locs[0];
        } else if (f == 5) { /* function: id, name */
            uint64_t id = 0, name = 0;
            while (sub.p < sub.end) {
                pb_in sf = {0};
                unsigned g = pb_next(&sub, &num, &sf);
                if (g == 1)
                    id = num;
                else if (g == 2)
                    name = num;
            }
            assert_true(id > 0 && id < 8);
            fname[id] = name;
        } else if (f == 12) {
            period = num;
        }
    }
    assert_int_equal(nsample, 2);
    assert_int_equal(samples, 10);
    assert_int_equal(values, 100000000);
    assert_int_equal(labelled, 1); /* only the cell with a thread */
    assert_int_equal(period, 10000000);
    assert_string_equal(strings[0], "");
    assert_string_equal(strings[3], "cpu");
    assert_string_equal(strings[4], "nanoseconds");
    /* locations are leaf first: the 7-sample stack ends in Tax.compute */
    assert_true(leaf_of_7 > 0 && leaf_of_7 < 8);
    assert_string_equal(strings[fname[leaf_of_7]], "app.Tax.compute");
    jp_strbuf_cleanup(&gz);
    jp_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zstd_roundtrip),
        cmocka_unit_test(test_snapshot_json_read_back),
        cmocka_unit_test(test_snapshot_json_flat_form),
        cmocka_unit_test(test_zstd_bomb_is_stopped_at_the_cap),
        cmocka_unit_test(test_pprof_decodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
