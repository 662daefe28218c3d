# Benchmarks are run by hand (bench/*/run), never by make check.
