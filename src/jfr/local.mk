noinst_LIBRARIES += libjpjfr.a
libjpjfr_a_SOURCES = \
	src/jfr/jfr.h
