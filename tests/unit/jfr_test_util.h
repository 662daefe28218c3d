/* jfr_test_util.h - helpers of the JFR reader's unit tests (tests only). */
#ifndef JP_TESTS_JFR_TEST_UTIL_H
#define JP_TESTS_JFR_TEST_UTIL_H

#include <stddef.h>

#include "model/profile.h"

/* "root;...;leaf SAMPLES VALUE" per cell of kind k, sorted, one per line;
 * thread names first when the profile has them. Caller frees. */
char *ut_collapsed(const jp_profile *p, jp_kind k);

/* Path of the async-profiler fixture `name` ($JPROF_FIXTURES, else the
 * source tree's tests/fixtures/jfr) in buf. */
const char *ut_fixture(const char *name, char *buf, size_t len);

#endif
