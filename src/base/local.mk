noinst_LIBRARIES += libjpbase.a
libjpbase_a_SOURCES = \
	src/base/error.c src/base/error.h \
	src/base/xalloc.c src/base/xalloc.h \
	src/base/hash.c src/base/hash.h \
	src/base/strbuf.c src/base/strbuf.h \
	src/base/timeutil.c src/base/timeutil.h \
	src/base/datapath.c src/base/datapath.h \
	src/base/stopsig.c src/base/stopsig.h \
	src/base/failinj.c src/base/failinj.h \
	src/base/utf8.c src/base/utf8.h \
	src/base/base64.c src/base/base64.h
