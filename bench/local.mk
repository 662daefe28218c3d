# Benchmarks are run by hand (bench/*/run), never by make check: they print
# figures for docs/PERFORMANCE.md, they do not pass or fail.
#   make bench-jfr    JFR parsing speed and memory of jprof-top vs the JDK's jfr
bench-jfr: jprof-top
	$(srcdir)/bench/jfr/run
.PHONY: bench-jfr

EXTRA_DIST += bench/jfr/run
