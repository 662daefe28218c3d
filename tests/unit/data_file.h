/* data_file.h - reads a file of tests/unit/data (tests only). */
#ifndef JP_TESTS_DATA_FILE_H
#define JP_TESTS_DATA_FILE_H

#include <stddef.h>

/* The whole of TEST_DATA_DIR/name, NUL-terminated (the test fails when it
 * cannot be read); *len gets its size. Caller frees. */
char *ut_data_file(const char *name, size_t *len);

#endif
