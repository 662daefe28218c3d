# libFuzzer targets are built by scripts/fuzz (they need clang), not by make.
EXTRA_DIST += tests/fuzz/fuzz_jfr.c tests/fuzz/gen_jfr_corpus.c tests/fuzz/jfr.dict \
	tests/fuzz/corpus/jfr
