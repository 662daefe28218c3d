noinst_LIBRARIES += libjpjfr.a
libjpjfr_a_SOURCES = \
	src/jfr/jfr.h \
	src/jfr/input.h src/jfr/internal.h \
	src/jfr/text.c \
	src/jfr/meta.c src/jfr/meta.h \
	src/jfr/plan.c src/jfr/plan.h \
	src/jfr/pool.c src/jfr/pool.h \
	src/jfr/resolve.c src/jfr/resolve.h \
	src/jfr/agg.c src/jfr/agg.h \
	src/jfr/events.c src/jfr/events.h \
	src/jfr/split.c src/jfr/split.h \
	src/jfr/src.c src/jfr/src.h \
	src/jfr/frame_name.c src/jfr/frame_name.h \
	src/jfr/chunk.c src/jfr/chunk.h \
	src/jfr/leak.c src/jfr/leak.h \
	src/jfr/merge.c src/jfr/merge.h \
	src/jfr/reader.c
