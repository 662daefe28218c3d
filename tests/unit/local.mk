# Unit tests: one cmocka program per module.
UNIT_LDADD = libjpjfr.a libjpmodel.a libjpbase.a $(CMOCKA_LIBS) -lm
UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
# Test environment; later fragments append with +=.
AM_TESTS_ENVIRONMENT =

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
tests_unit_test_wire_CFLAGS = $(UNIT_CFLAGS) $(ZSTD_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_wire_LDADD = libjpwire.a $(UNIT_LDADD) $(ZSTD_LIBS) $(JANSSON_LIBS) $(ZLIB_LIBS)

# the protobuf wire format, gzip, OpenTelemetry profiles in and out (with
# the OTLP files async-profiler wrote beside the JFR fixtures)
check_PROGRAMS += tests/unit/test_otlp
TESTS += tests/unit/test_otlp
tests_unit_test_otlp_SOURCES = tests/unit/test_otlp.c
tests_unit_test_otlp_CPPFLAGS = $(AM_CPPFLAGS) -DJPROF_FIXTURE_DIR='"$(abs_top_srcdir)/tests/fixtures/jfr"'
tests_unit_test_otlp_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_otlp_LDADD = libjpwire.a $(UNIT_LDADD) $(JANSSON_LIBS) $(ZLIB_LIBS) -lpthread

# src/jvm + snapshot model/analyses (live-JVM work)
check_PROGRAMS += tests/unit/test_threadprint tests/unit/test_snapshot
TESTS += tests/unit/test_threadprint tests/unit/test_snapshot
tests_unit_test_threadprint_SOURCES = tests/unit/test_threadprint.c tests/unit/data_file.c tests/unit/data_file.h
tests_unit_test_threadprint_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_DATA_DIR='"$(abs_top_srcdir)/tests/unit/data"'
tests_unit_test_threadprint_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_threadprint_LDADD = libjpjvm.a $(UNIT_LDADD) $(JANSSON_LIBS)
tests_unit_test_snapshot_SOURCES = tests/unit/test_snapshot.c
tests_unit_test_snapshot_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_snapshot_LDADD = $(UNIT_LDADD)
EXTRA_DIST += tests/unit/data

# src/tui: batch formats, canvas, layout and the flame view, without a terminal
check_PROGRAMS += tests/unit/test_tui
TESTS += tests/unit/test_tui
tests_unit_test_tui_SOURCES = tests/unit/test_tui.c
tests_unit_test_tui_CFLAGS = $(UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_tui_LDADD = libjptui.a libjpkube.a libjpjvm.a libjpwire.a libjpweb.a $(UNIT_LDADD) $(JANSSON_LIBS) \
	$(ZLIB_LIBS) $(CURL_LIBS)

check_PROGRAMS += tests/unit/test_jvm
TESTS += tests/unit/test_jvm
tests_unit_test_jvm_SOURCES = tests/unit/test_jvm.c
tests_unit_test_jvm_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_jvm_LDADD = libjpjvm.a $(UNIT_LDADD) $(JANSSON_LIBS)

# src/agent: policy, cgroup, pod JSON, naming, host config, queue, /metrics
check_PROGRAMS += tests/unit/test_agent
TESTS += tests/unit/test_agent
tests_unit_test_agent_SOURCES = tests/unit/test_agent.c
tests_unit_test_agent_CFLAGS = $(UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_agent_LDADD = libjpagent.a libjpjvm.a libjpwire.a $(UNIT_LDADD) $(CURL_LIBS) \
	$(JANSSON_LIBS) $(ZSTD_LIBS) -lpthread

# src/agent/asprof: maps classification and session arguments (no library)
check_PROGRAMS += tests/unit/test_agent_asprof
TESTS += tests/unit/test_agent_asprof
tests_unit_test_agent_asprof_SOURCES = tests/unit/test_agent_asprof.c
tests_unit_test_agent_asprof_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_agent_asprof_LDADD = libjpjvm.a $(UNIT_LDADD) $(JANSSON_LIBS)

# jprof-server: tokens and the batch codec; the embedded store through store.h
check_PROGRAMS += tests/unit/test_server tests/unit/test_store_sqlite
TESTS += tests/unit/test_server tests/unit/test_store_sqlite
tests_unit_test_server_SOURCES = tests/unit/test_server.c
tests_unit_test_server_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_server_LDADD = libjpserver.a libjpwire.a libjpweb.a $(UNIT_LDADD) $(JANSSON_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS)
# the API's query-string parser (pure: no daemon, no store)
check_PROGRAMS += tests/unit/test_api_query
TESTS += tests/unit/test_api_query
tests_unit_test_api_query_SOURCES = tests/unit/test_api_query.c
tests_unit_test_api_query_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_api_query_LDADD = libjpserver.a $(UNIT_LDADD)
tests_unit_test_store_sqlite_SOURCES = tests/unit/test_store_sqlite.c
tests_unit_test_store_sqlite_CFLAGS = $(UNIT_CFLAGS) $(SQLITE_CFLAGS)
tests_unit_test_store_sqlite_LDADD = libjpserver.a libjpwire.a libjpweb.a $(UNIT_LDADD) $(SQLITE_LIBS) \
	$(JANSSON_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS) -lpthread

# JFR reader (owned by the JFR helper): unit tests, a synthetic JFR writer, a dump tool.
check_PROGRAMS += tests/unit/test_jfr tests/unit/test_jfr_kinds tests/unit/test_jfr_wire tests/unit/jfr_dump
TESTS += tests/unit/test_jfr tests/unit/test_jfr_kinds tests/unit/test_jfr_wire
tests_unit_test_jfr_SOURCES = tests/unit/test_jfr.c tests/unit/jfr_writer.c tests/unit/jfr_writer.h \
	tests/unit/jfr_test_util.c tests/unit/jfr_test_util.h
tests_unit_test_jfr_kinds_SOURCES = tests/unit/test_jfr_kinds.c tests/unit/jfr_test_util.c \
	tests/unit/jfr_test_util.h
tests_unit_test_jfr_kinds_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_jfr_kinds_CPPFLAGS = $(AM_CPPFLAGS) -DJPROF_FIXTURE_DIR='"$(abs_top_srcdir)/tests/fixtures/jfr"'
tests_unit_test_jfr_kinds_LDADD = $(UNIT_LDADD)
tests_unit_test_jfr_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_jfr_CPPFLAGS = $(AM_CPPFLAGS) -DJPROF_FIXTURE_DIR='"$(abs_top_srcdir)/tests/fixtures/jfr"'
tests_unit_test_jfr_LDADD = $(UNIT_LDADD)
tests_unit_test_jfr_wire_SOURCES = tests/unit/test_jfr_wire.c tests/unit/jfr_writer.c tests/unit/jfr_writer.h
tests_unit_test_jfr_wire_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_jfr_wire_LDADD = $(UNIT_LDADD)
tests_unit_jfr_dump_SOURCES = tests/unit/jfr_dump.c
tests_unit_jfr_dump_LDADD = libjpjfr.a libjpmodel.a libjpbase.a -lm
AM_TESTS_ENVIRONMENT += JPROF_FIXTURES="$${JPROF_FIXTURES:-$(abs_top_srcdir)/tests/fixtures/jfr}"; export JPROF_FIXTURES;
# the recordings the tests read (tests/fixtures/jfr/README.md says how each was made)
EXTRA_DIST += tests/fixtures

# src/tui live screens (Threads, Locks, Deadlocks, stacks) on captured
# Thread.print snapshots, without a terminal or a JVM
check_PROGRAMS += tests/unit/test_tui_live
TESTS += tests/unit/test_tui_live
tests_unit_test_tui_live_SOURCES = tests/unit/test_tui_live.c
tests_unit_test_tui_live_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_DATA_DIR='"$(abs_top_srcdir)/tests/unit/data"'
tests_unit_test_tui_live_CFLAGS = $(UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_tui_live_LDADD = libjptui.a libjpkube.a libjpjvm.a libjpwire.a libjpweb.a $(UNIT_LDADD) $(JANSSON_LIBS) $(ZLIB_LIBS)

# jprof-top's remote view without a server: flame answers folded into a
# profile, reports and screens from stored answers, an unreachable server.
check_PROGRAMS += tests/unit/test_tui_remote
TESTS += tests/unit/test_tui_remote
tests_unit_test_tui_remote_SOURCES = tests/unit/test_tui_remote.c
tests_unit_test_tui_remote_CFLAGS = $(UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_tui_remote_LDADD = libjptui.a libjpkube.a libjpjvm.a libjpwire.a libjpweb.a $(UNIT_LDADD) $(JANSSON_LIBS) $(ZLIB_LIBS) $(DLOPEN_LIBS)

# GC evidence: model/gc.c summaries and the reader's GC events (synthetic chunks)
check_PROGRAMS += tests/unit/test_gc
TESTS += tests/unit/test_gc
tests_unit_test_gc_SOURCES = tests/unit/test_gc.c tests/unit/jfr_writer.c tests/unit/jfr_writer.h
tests_unit_test_gc_CFLAGS = $(UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_gc_LDADD = libjpwire.a $(UNIT_LDADD) $(JANSSON_LIBS)

# heap histograms: the GC.class_histogram parser (JDK 11 to 25 text), growth, JSON
check_PROGRAMS += tests/unit/test_heap
TESTS += tests/unit/test_heap
tests_unit_test_heap_SOURCES = tests/unit/test_heap.c tests/unit/data_file.c tests/unit/data_file.h
tests_unit_test_heap_CPPFLAGS = $(AM_CPPFLAGS) -DTEST_DATA_DIR='"$(abs_top_srcdir)/tests/unit/data"'
tests_unit_test_heap_CFLAGS = $(UNIT_CFLAGS) $(JANSSON_CFLAGS)
tests_unit_test_heap_LDADD = libjpjvm.a libjpwire.a $(UNIT_LDADD) $(JANSSON_LIBS)
