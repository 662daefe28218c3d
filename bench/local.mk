# Benchmarks are run by hand (bench/*/run), never by make check: they print
# figures for docs/PERFORMANCE.md, they do not pass or fail.
#   make bench-jfr     JFR parsing speed and memory of jprof-top vs the JDK's jfr
#   make bench-jfr-asprof  (ASPROF_HOME=...) the same vs async-profiler's jfrconv, every kind
#   make bench-jfr-peers   (ASPROF_HOME=..., JFR_GO_PARSER=...) one- and four-chunk files,
#                      jprof-top vs jfrconv and Grafana's Go parser, paired runs
#   make bench-live    first snapshot and 2,000-thread snapshot cost vs jcmd and jstack
#   make bench-agent   agent RSS/CPU and workload throughput loss, profiling on vs off
#   make bench-agent-snapshots  what 60 s thread snapshots cost (10 JVMs, 2,000 threads)
#   make bench-server  (see bench/server/run) ingest rows/s and query latency per store
#   make bench-decode  ingest batch decoding: the pull parser vs a jansson tree (bench/wire/run)
#   make bench-soak    RSS and open files of agent and server over an hour (bench/soak/run)
#   make bench-heap    what a class histogram of a 2 GB heap pauses the JVM, vs jcmd (bench/heap/run)
bench-jfr: jprof-top
	$(srcdir)/bench/jfr/run
bench-jfr-asprof: jprof-top
	$(srcdir)/bench/jfr/asprof
bench-jfr-peers: jprof-top
	$(srcdir)/bench/jfr/peers
bench-live: jprof-top jprof-probe
	$(srcdir)/bench/live/run
bench-agent: jprof-agent jprof-server
	$(srcdir)/bench/agent/run
bench-agent-snapshots: jprof-agent jprof-server jprof-top
	$(srcdir)/bench/agent/snapshots
bench-soak: jprof-agent jprof-server bench/server/load
	$(srcdir)/bench/soak/run
bench-heap: jprof-probe
	$(srcdir)/bench/heap/run
.PHONY: bench-jfr bench-jfr-asprof bench-jfr-peers bench-live bench-agent bench-agent-snapshots bench-soak bench-heap

EXTRA_DIST += bench/jfr/run bench/jfr/asprof bench/jfr/peers bench/jfr/lib.sh bench/live/run bench/agent/run \
	bench/agent/Spin.java bench/agent/snapshots bench/soak/run bench/heap/run

# bench/jfr/decode: the JFR reader's cost per event over a file already in
# memory (bench/jfr/peers runs it beside the whole-program figures)
noinst_PROGRAMS += bench/jfr/decode
bench_jfr_decode_SOURCES = bench/jfr/decode.c
bench_jfr_decode_LDADD = libjpjfr.a libjpmodel.a libjpbase.a -lm -lpthread

# bench/wire: what decoding an ingest batch costs, the server's pull decoder
# against a jansson tree of the same text (make bench-decode; bench/wire/run)
noinst_PROGRAMS += bench/wire/decode
bench_wire_decode_SOURCES = bench/wire/decode.c
bench_wire_decode_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
bench_wire_decode_LDADD = libjpwire.a libjpmodel.a libjpbase.a $(JANSSON_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS) -lm
bench-decode: bench/wire/decode
	$(srcdir)/bench/wire/run
.PHONY: bench-decode
EXTRA_DIST += bench/wire/run
