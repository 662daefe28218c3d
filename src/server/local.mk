# src/server: jprof-server (HTTP, auth, ingest, stores, query API, /metrics).
noinst_LIBRARIES += libjpserver.a
libjpserver_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS) $(MHD_CFLAGS)
libjpserver_a_SOURCES = \
	src/server/store.c src/server/store.h \
	src/server/store_sqlite.c src/server/store_sqlite.h src/server/sqlite_int.h \
	src/server/sqlite_query.c src/server/sqlite_write.c src/server/winblob.c src/server/winblob.h \
	src/server/sqlite_rollup.c
libjpserver_a_SOURCES += \
	src/server/auth.c src/server/auth.h \
	src/server/metrics.c src/server/metrics.h \
	src/server/server.h src/server/http.c \
	src/server/ingest.c src/server/ingest.h src/server/ingest_otlp.c \
	src/server/ingest_pyroscope.c \
	src/server/api_int.h src/server/api.c \
	src/server/api_query.c src/server/api_query.h \
	src/server/api_docs.c src/server/api_threads.c src/server/api_diff.c \
	src/server/api_gc.c src/server/api_heap.c

sbin_PROGRAMS += jprof-server
jprof_server_SOURCES = src/server/main.c
jprof_server_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(JANSSON_CFLAGS)
jprof_server_LDADD = libjpserver.a libjpwire.a libjpweb.a libjpjfr.a libjpmodel.a libjpbase.a \
	$(MHD_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS) -lpthread -lm

# the web page (web/, its files a library of their own: src/web/local.mk),
# served by web.c; --web-dir DIR serves a directory instead (development)
libjpserver_a_SOURCES += src/server/web.c src/server/web.h

# bench/server: the benchmark client (run by bench/server/run, not by make check)
noinst_PROGRAMS += bench/server/load
bench_server_load_SOURCES = bench/server/load.c
bench_server_load_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS)
bench_server_load_LDADD = libjpwire.a libjpmodel.a libjpbase.a $(CURL_LIBS) $(JANSSON_LIBS) \
	$(ZSTD_LIBS) -lpthread -lm
EXTRA_DIST += bench/server/run

# The ClickHouse store (--clickhouse URL): libcurl over ClickHouse's HTTP interface.
libjpserver_a_CFLAGS += $(CURL_CFLAGS)
libjpserver_a_SOURCES += \
	src/server/store_clickhouse.c src/server/store_clickhouse.h src/server/ch_int.h \
	src/server/ch_http.c src/server/ch_query.c src/server/ch_write.c \
	src/server/ch_rollup.c src/server/ch_schema.c src/server/ch_flame.c src/server/ch_stage.c
jprof_server_LDADD += $(CURL_LIBS)
