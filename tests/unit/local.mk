# Unit tests: one cmocka program per module.
UNIT_LDADD = libjpjfr.a libjpmodel.a libjpbase.a $(CMOCKA_LIBS) -lm
UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)

check_PROGRAMS += tests/unit/test_base tests/unit/test_model
TESTS += tests/unit/test_base tests/unit/test_model
tests_unit_test_base_SOURCES = tests/unit/test_base.c
tests_unit_test_base_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_base_LDADD = $(UNIT_LDADD)
tests_unit_test_model_SOURCES = tests/unit/test_model.c
tests_unit_test_model_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_model_LDADD = $(UNIT_LDADD)

check_PROGRAMS += tests/unit/test_wire
TESTS += tests/unit/test_wire
tests_unit_test_wire_SOURCES = tests/unit/test_wire.c
tests_unit_test_wire_CFLAGS = $(UNIT_CFLAGS) $(ZSTD_CFLAGS)
tests_unit_test_wire_LDADD = libjpwire.a $(UNIT_LDADD) $(ZSTD_LIBS) $(JANSSON_LIBS)
