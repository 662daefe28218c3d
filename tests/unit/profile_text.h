/* profile_text.h - a profile as sorted text, for test assertions (tests only). */
#ifndef JP_TESTS_PROFILE_TEXT_H
#define JP_TESTS_PROFILE_TEXT_H

#include "model/profile.h"

/* "root;...;leaf SAMPLES VALUE" per cell of kind k, sorted, one per line;
 * thread names first when the profile has them. Caller frees. */
char *ut_collapsed(const jp_profile *p, jp_kind k);

#endif
