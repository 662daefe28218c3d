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
# the formats other tools read and send (callers link $(ZLIB_LIBS)): the
# protobuf wire format and gzip they share, pprof, OpenTelemetry profiles
# (OTLP), Pyroscope's ingest (its name, labels and multipart bodies)
libjpwire_a_SOURCES += \
	src/wire/protobuf.c src/wire/protobuf.h \
	src/wire/gzip.c src/wire/gzip.h \
	src/wire/sample_type.c src/wire/sample_type.h \
	src/wire/pprof.c src/wire/pprof.h \
	src/wire/pprof_decode.c src/wire/pprof_decode.h \
	src/wire/otlp_proto.h \
	src/wire/otlp_decode.c src/wire/otlp_decode.h \
	src/wire/otlp_dict.c src/wire/otlp_dict.h \
	src/wire/otlp_encode.c src/wire/otlp_encode.h \
	src/wire/multipart.c src/wire/multipart.h \
	src/wire/pyroscope.c src/wire/pyroscope.h
# one offline HTML file with the web page's flame graph (callers link
# libjpweb.a, the page's files, after libjpwire.a)
libjpwire_a_SOURCES += \
	src/wire/html.c src/wire/html.h
# Kubernetes Pods from the API server's JSON (the agent's pod watch, the
# kubectl client's pods of a service)
libjpwire_a_SOURCES += \
	src/wire/k8s_pod.c src/wire/k8s_pod.h
# flame trees as JSON (jprof-top's --format json and the page's shape)
libjpwire_a_SOURCES += \
	src/wire/flame_json.c src/wire/flame_json.h
