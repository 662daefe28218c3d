/* Unit tests of src/model: interning, aggregation, flame tree, top table, search. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "model/profile.h"

static void test_profile_interns_and_aggregates(void **state)
{
    (void)state;
    jp_profile *p = jp_profile_new();
    uint32_t a = jp_profile_frame(p, "A.main", 6, JP_FRAME_INTERPRETED);
    uint32_t b = jp_profile_frame(p, "B.work", 6, JP_FRAME_JIT);
    assert_int_equal(jp_profile_frame(p, "A.main", 6, JP_FRAME_JIT), a);
    uint32_t s1[] = {a, b};
    uint32_t st = jp_profile_stack(p, s1, 2, false);
    assert_int_equal(jp_profile_stack(p, s1, 2, false), st);
    jp_profile_add(p, JP_KIND_CPU, st, JP_NO_THREAD, 1, 1, 10);
    jp_profile_add(p, JP_KIND_CPU, st, JP_NO_THREAD, 1, 1, 10);
    assert_int_equal(p->kinds[JP_KIND_CPU].count, 1);
    assert_int_equal(p->kinds[JP_KIND_CPU].cells[0].samples, 2);
    assert_int_equal(p->kinds[JP_KIND_CPU].value, 20);
    assert_true(jp_profile_has_kind(p, JP_KIND_CPU));
    assert_false(jp_profile_has_kind(p, JP_KIND_ALLOC));
    jp_profile_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_interns_and_aggregates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
