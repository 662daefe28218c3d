# libFuzzer targets are built by scripts/fuzz (they need clang), not by make.
