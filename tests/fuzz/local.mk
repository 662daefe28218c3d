# libFuzzer targets are built and run by scripts/fuzz (they need clang), not
# by make: fuzz_jfr (JFR reader), fuzz_threadprint (Thread.print text),
# fuzz_k8s_pods (Kubernetes pod JSON, cgroup lines, kubeconfig),
# fuzz_batch_json (the server's ingest body), fuzz_probe_req (jprof-probe's
# request lines), fuzz_api_query (jprof-server's query strings),
# fuzz_histogram (GC.class_histogram text and its JSON), fuzz_otlp
# (OpenTelemetry profiles bodies), fuzz_pyroscope (Pyroscope's /ingest: name,
# multipart, labels, pprof). Seeds in
# tests/fuzz/corpus/, dictionaries next to the targets.
EXTRA_DIST += tests/fuzz/fuzz_jfr.c tests/fuzz/fuzz_threadprint.c tests/fuzz/fuzz_k8s_pods.c \
	tests/fuzz/fuzz_batch_json.c tests/fuzz/fuzz_probe_req.c tests/fuzz/gen_jfr_corpus.c tests/fuzz/jfr.dict \
	tests/fuzz/batch.dict tests/fuzz/corpus tests/fuzz/fuzz_api_query.c tests/fuzz/api_query.dict \
	tests/fuzz/fuzz_histogram.c tests/fuzz/fuzz_otlp.c tests/fuzz/otlp.dict \
	tests/fuzz/fuzz_pyroscope.c
