# src/wire: JSON codecs of model types (jansson), zstd framing, HTTP client (libcurl).
noinst_LIBRARIES += libjpwire.a
libjpwire_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(ZSTD_CFLAGS) $(CURL_CFLAGS) $(ZLIB_CFLAGS)
libjpwire_a_SOURCES = \
	src/wire/zstd_frame.c src/wire/zstd_frame.h
# upload batches (the agent -> server contract, docs/API.md)
libjpwire_a_SOURCES += \
	src/wire/batch.c src/wire/batch.h \
	src/wire/batch_json.c src/wire/batch_json.h \
	src/wire/json_pull.c src/wire/json_pull.h
# thread snapshots + analyses (jprof-top -b --format json, batches)
libjpwire_a_SOURCES += \
	src/wire/snapshot_json.c src/wire/snapshot_json.h
# GC summaries (jprof-top -b --format json)
libjpwire_a_SOURCES += \
	src/wire/gc_json.c src/wire/gc_json.h
# heap histograms and their growth (--heap, batches, /api/v1/heap)
libjpwire_a_SOURCES += \
	src/wire/heap_json.c src/wire/heap_json.h
# jprof-server's query API, read by jprof-top's remote view
libjpwire_a_SOURCES += \
	src/wire/http_client.c src/wire/http_client.h \
	src/wire/query_json.c src/wire/query_json.h
# exports other tools read (gzipped pprof; callers link $(ZLIB_LIBS))
libjpwire_a_SOURCES += \
	src/wire/pprof.c src/wire/pprof.h
# one offline HTML file with the web page's flame graph (callers link
# libjpweb.a, the page's files, after libjpwire.a)
libjpwire_a_SOURCES += \
	src/wire/html.c src/wire/html.h
