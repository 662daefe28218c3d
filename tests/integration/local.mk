# Every test here goes into INTEGRATION_TEST_LIST (not TESTS): Makefile.am adds
# the list to TESTS unless configure --disable-integration-tests (make distcheck).
INTEGRATION_TEST_LIST =
# the image test runs after every other one, the pods test after it (set
# here: rules below read them)
JPROF_IMAGES_LOG = tests/integration/test_images.sh.log
JPROF_PODS_LOG = tests/integration/test_pods.sh.log
# Integration tests: real JVMs, the JDK's jfr tool as oracle, tmux.
# Benchmarks are run by hand (bench/*/run), never by make check.

# The test workload (tests/java/JprofWorkload.java), compiled into the build
# dir. The tests find it through JPROF_WORKLOAD_CLASSES (record-jfr.sh compiles
# it itself when it is missing, so a test run without javac here still works
# with any JDK the test finds).
JPROF_WORKLOAD_CLASS = tests/java/classes/shop/JprofWorkload.class
if HAVE_JAVAC
$(JPROF_WORKLOAD_CLASS): $(srcdir)/tests/java/JprofWorkload.java
	$(AM_V_GEN)rm -rf tests/java/classes && $(MKDIR_P) tests/java/classes && \
	$(JAVAC) -d tests/java/classes $(srcdir)/tests/java/JprofWorkload.java
jprof-workload: $(JPROF_WORKLOAD_CLASS)
else
jprof-workload:
	@echo "javac not found by configure: the test workload is compiled by record-jfr.sh"
endif
.PHONY: jprof-workload

INTEGRATION_TEST_LIST += tests/integration/test_jfr_oracle.sh
# The parallel test driver names the log after the script; build the workload
# first. (The target is spelled through a variable so automake does not see it
# as an override of its own rule: make merges the prerequisites.)
JPROF_ORACLE_LOG = tests/integration/test_jfr_oracle.sh.log
$(JPROF_ORACLE_LOG): jprof-top jprof-workload

EXTRA_DIST += tests/java/JprofWorkload.java tests/java/FixtureWork.java tests/java/Leak.java \
	tests/integration/test_jfr_oracle.sh \
	tests/integration/jfr_oracle.py \
	tests/integration/gc_oracle.py \
	tests/integration/record-jfr.sh

clean-local: clean-local-integration
clean-local-integration:
	rm -rf tests/java/classes tests/integration/jfr-oracle.d
.PHONY: clean-local-integration

# jprof-top's command line and its interactive flame view, driven in tmux.
INTEGRATION_TEST_LIST += tests/integration/test_tui_flame.sh
JPROF_TUI_LOG = tests/integration/test_tui_flame.sh.log
$(JPROF_TUI_LOG): jprof-top
EXTRA_DIST += tests/integration/test_tui_flame.sh
# the differential flame graph (--diff) and --io-detail, in tmux and batch
INTEGRATION_TEST_LIST += tests/integration/test_tui_diff.sh
JPROF_TUI_DIFF_LOG = tests/integration/test_tui_diff.sh.log
$(JPROF_TUI_DIFF_LOG): jprof-top jprof-workload
EXTRA_DIST += tests/integration/test_tui_diff.sh
# exports other tools read back: pprof decoded by protoc (Debian's
# protobuf-compiler) against the schema of pprof_profile.proto
INTEGRATION_TEST_LIST += tests/integration/test_exports.sh
JPROF_EXPORTS_LOG = tests/integration/test_exports.sh.log
$(JPROF_EXPORTS_LOG): jprof-top jprof-workload
EXTRA_DIST += tests/integration/test_exports.sh tests/integration/pprof_profile.proto \
	tests/integration/pprof_collapsed.py
# make install DESTDIR=...: every program runs from the staged tree, man
# pages and the helper jar are there, the jar is found next to the program
INTEGRATION_TEST_LIST += tests/integration/test_install.sh
JPROF_INSTALL_LOG = tests/integration/test_install.sh.log
if HAVE_JAVAC
$(JPROF_INSTALL_LOG): jprof-top jprof-agent jprof-server jprof-helper.jar
else
$(JPROF_INSTALL_LOG): jprof-top jprof-agent jprof-server
endif
EXTRA_DIST += tests/integration/test_install.sh
# shared set-up sourced by the shell tests (paths, JDKs, workloads, counters)
EXTRA_DIST += tests/integration/lib.sh

# Live JVMs (src/jvm): attach, snapshots from both sources, analyses, JFR
# control, error cases, on JDK 17 and 25. Workloads: tests/java/Deadlocks.java,
# tests/java/Contention.java (compiled by the script into the build dir).
INTEGRATION_TEST_LIST += tests/integration/test_live_jvm.sh
JPROF_LIVE_LOG = tests/integration/test_live_jvm.sh.log
if HAVE_JAVAC
$(JPROF_LIVE_LOG): jprof-probe jprof-helper.jar
else
$(JPROF_LIVE_LOG): jprof-probe
endif
EXTRA_DIST += tests/integration/test_live_jvm.sh tests/java/Deadlocks.java \
	tests/java/Contention.java tests/java/HelperLoad.java
clean-local: clean-local-live
clean-local-live:
	rm -rf tests/integration/live-jvm.d
.PHONY: clean-local-live

# jprof-server's API suite (server_api.py) on the embedded store; the same
# suite runs against ClickHouse through JPROF_SERVER_CMD.
INTEGRATION_TEST_LIST += tests/integration/test_server_api.sh
JPROF_SERVER_API_LOG = tests/integration/test_server_api.sh.log
$(JPROF_SERVER_API_LOG): jprof-server jprof-top jprof-workload
EXTRA_DIST += tests/integration/test_server_api.sh tests/integration/server_api.py
# the server and the agent under valgrind (JPROF_VALGRIND=1; make check-valgrind-integration)
EXTRA_DIST += tests/integration/vgwrap.py

# jprof-server on the ClickHouse store: a throwaway clickhouse-server
# (clickhouse-server.sh), the store-level comparison with the embedded store
# (tests/unit/test_store_clickhouse, run only by the script: it needs the
# server's URL), the shared API suite, and outage/recovery.
check_PROGRAMS += tests/unit/test_store_clickhouse
tests_unit_test_store_clickhouse_SOURCES = tests/unit/test_store_clickhouse.c
tests_unit_test_store_clickhouse_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_store_clickhouse_LDADD = libjpserver.a libjpwire.a libjpweb.a libjpmodel.a libjpbase.a \
	$(CMOCKA_LIBS) $(CURL_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) $(ZSTD_LIBS) $(ZLIB_LIBS) -lpthread -lm
INTEGRATION_TEST_LIST += tests/integration/test_server_clickhouse.sh
JPROF_SERVER_CH_LOG = tests/integration/test_server_clickhouse.sh.log
$(JPROF_SERVER_CH_LOG): jprof-server jprof-top jprof-workload tests/unit/test_store_clickhouse
EXTRA_DIST += tests/integration/test_server_clickhouse.sh \
	tests/integration/test_server_clickhouse_cases.py \
	tests/integration/clickhouse-server.sh
# jprof-server on a sharded, replicated ClickHouse: ZooKeeper and four
# clickhouse-server (2 shards x 2 replicas, clickhouse-cluster.sh), two
# jprof-servers, the agent in host mode and the load generator; idempotency
# across replicas and shards, the fault sequence, exact totals afterwards
# (JPROF_CLUSTER_FULL=1: the longer fleet of docs/SCALE.md).
INTEGRATION_TEST_LIST += tests/integration/test_clickhouse_cluster.py
JPROF_CH_CLUSTER_LOG = tests/integration/test_clickhouse_cluster.py.log
$(JPROF_CH_CLUSTER_LOG): jprof-server jprof-agent bench/server/load jprof-workload
EXTRA_DIST += tests/integration/test_clickhouse_cluster.py tests/integration/clickhouse-cluster.sh
# the JFR upload case records the workload once and keeps it here (both suites)
clean-local: clean-local-server-api
clean-local-server-api:
	rm -rf tests/integration/server-api.d
.PHONY: clean-local-server-api

# What other profilers send: OTLP profiles (async-profiler's files, beside the
# JFR fixtures) and Pyroscope's /ingest (the fixtures posted as its Java agent
# posts them), checked against jprof-top's reading of the same recordings.
INTEGRATION_TEST_LIST += tests/integration/test_ingest_formats.py
JPROF_INGEST_FORMATS_LOG = tests/integration/test_ingest_formats.py.log
$(JPROF_INGEST_FORMATS_LOG): jprof-server jprof-top
EXTRA_DIST += tests/integration/test_ingest_formats.py

# jprof-agent: k8s mode against the FAKE API server (fake-k8s-api.py, stdlib
# python, loopback only), the uploader against a tiny test peer, and host mode
# end to end with a real JVM and the real jprof-server.
INTEGRATION_TEST_LIST += tests/integration/test_agent_k8s.py tests/integration/test_agent_upload.py \
	tests/integration/test_agent_host.py
JPROF_AGENT_K8S_LOG = tests/integration/test_agent_k8s.py.log
$(JPROF_AGENT_K8S_LOG): jprof-agent
JPROF_AGENT_UPLOAD_LOG = tests/integration/test_agent_upload.py.log
$(JPROF_AGENT_UPLOAD_LOG): jprof-agent
JPROF_AGENT_HOST_LOG = tests/integration/test_agent_host.py.log
$(JPROF_AGENT_HOST_LOG): jprof-agent jprof-server jprof-workload
EXTRA_DIST += tests/integration/test_agent_k8s.py tests/integration/test_agent_upload.py \
	tests/integration/test_agent_host.py tests/integration/fake-k8s-api.py

# "hungry": class histograms and their growth on a JVM with a known leak
# (tests/java/Leak.java, compiled by the test): a local pid (batch and the
# Heap screen in tmux), kubectl (fake kubectl, a namespaced JVM), agent -> server.
INTEGRATION_TEST_LIST += tests/integration/test_heap.py
JPROF_HEAP_LOG = tests/integration/test_heap.py.log
$(JPROF_HEAP_LOG): jprof-agent jprof-server jprof-top kubectl-jprof jprof-probe
EXTRA_DIST += tests/integration/test_heap.py
# The async-profiler engine: error paths always; the engine itself only when
# JPROF_ASPROF_LIB names a libasyncProfiler.so (else a loud SKIPPED, exit 0).
INTEGRATION_TEST_LIST += tests/integration/test_agent_asprof.py
JPROF_AGENT_ASPROF_LOG = tests/integration/test_agent_asprof.py.log
$(JPROF_AGENT_ASPROF_LOG): jprof-agent jprof-server jprof-workload
EXTRA_DIST += tests/integration/test_agent_asprof.py

# jprof-top on live JVMs (JDK 17 and 25): batch JSON/text and every error
# exit status; the interactive screens driven in tmux, SIGTERM and SIGHUP
# while recording. Workloads: tests/java/Contention.java, Deadlocks.java.
INTEGRATION_TEST_LIST += tests/integration/test_live_batch.sh tests/integration/test_tui_live.sh
JPROF_LIVE_BATCH_LOG = tests/integration/test_live_batch.sh.log
JPROF_TUI_LIVE_LOG = tests/integration/test_tui_live.sh.log
if HAVE_JAVAC
$(JPROF_LIVE_BATCH_LOG) $(JPROF_TUI_LIVE_LOG): jprof-top jprof-helper.jar
else
$(JPROF_LIVE_BATCH_LOG) $(JPROF_TUI_LIVE_LOG): jprof-top
endif
EXTRA_DIST += tests/integration/test_live_batch.sh tests/integration/test_tui_live.sh \
	tests/java/ManyThreads.java
clean-local: clean-local-tui-live
clean-local-tui-live:
	rm -rf tests/integration/live-batch.d tests/integration/tui-live.d
.PHONY: clean-local-tui-live

# jprof-top's remote view (-n NS -s SVC) end to end: the real server on its
# embedded store, the agent in host mode and real JVMs; batch, the screens in
# tmux, error cases, and scripts/demo without a terminal.
INTEGRATION_TEST_LIST += tests/integration/test_tui_remote.sh
JPROF_TUI_REMOTE_LOG = tests/integration/test_tui_remote.sh.log
$(JPROF_TUI_REMOTE_LOG): jprof-top jprof-server jprof-agent
EXTRA_DIST += tests/integration/test_tui_remote.sh

# Busy threads and locks on a real server (issue #20): Debian's tomcat10 with
# its examples, run by the test as the tomcat user on a loopback port, under a
# bounded `ab` load; locally and through agent -> server -> jprof-top; then
# tests/java/Contention.java's contended monitor and ReentrantLock.
INTEGRATION_TEST_LIST += tests/integration/test_tomcat_truth.sh
JPROF_TOMCAT_TRUTH_LOG = tests/integration/test_tomcat_truth.sh.log
# It loads both cores for half a minute: it runs after every other test of
# the run (those in TEST_LOGS), so their timing is not its load's.
JPROF_TOMCAT_AFTER = $(filter-out $(JPROF_TOMCAT_TRUTH_LOG) $(JPROF_IMAGES_LOG) $(JPROF_PODS_LOG),$(TEST_LOGS))
# The browser test (Chromium, an agent, JVMs) is the other heavy one: it runs
# after every test but the Tomcat one, which then runs after it.
JPROF_WEB_AFTER = $(filter-out $(JPROF_TOMCAT_TRUTH_LOG) $(JPROF_WEB_LOG) $(JPROF_IMAGES_LOG) \
	$(JPROF_PODS_LOG),$(TEST_LOGS))
if HAVE_JAVAC
$(JPROF_TOMCAT_TRUTH_LOG): jprof-top jprof-server jprof-agent jprof-helper.jar $(JPROF_TOMCAT_AFTER)
else
$(JPROF_TOMCAT_TRUTH_LOG): jprof-top jprof-server jprof-agent $(JPROF_TOMCAT_AFTER)
endif
EXTRA_DIST += tests/integration/test_tomcat_truth.sh
clean-local: clean-local-tomcat-truth
clean-local-tomcat-truth:
	rm -rf tests/integration/tomcat-truth.d
.PHONY: clean-local-tomcat-truth
# The web page in headless Chromium (playwright-core from npm, Debian's
# chromium): the real server, agent (host mode) and JVMs; every view,
# search, zoom, reverse, sandwich, compare, the URL contract, tokens.
INTEGRATION_TEST_LIST += tests/integration/test_web.sh
JPROF_WEB_LOG = tests/integration/test_web.sh.log
$(JPROF_WEB_LOG): jprof-server jprof-agent jprof-workload $(JPROF_WEB_AFTER)
EXTRA_DIST += tests/integration/test_web.sh tests/integration/test_web.mjs \
	tests/integration/package.json tests/integration/package-lock.json
clean-local: clean-local-web
clean-local-web:
	rm -rf tests/integration/web-test.d
.PHONY: clean-local-web

# kubectl-jprof and the kubectl-exec source against a FAKE kubectl
# (fake-kubectl.py: no API server runs here) whose "pods" are real JVMs in
# their own pid and mount namespaces with a private /tmp (needs root).
INTEGRATION_TEST_LIST += tests/integration/test_kubectl_jprof.sh
JPROF_KUBE_LOG = tests/integration/test_kubectl_jprof.sh.log
$(JPROF_KUBE_LOG): kubectl-jprof jprof-probe jprof-top
EXTRA_DIST += tests/integration/test_kubectl_jprof.sh tests/integration/fake-kubectl.py
clean-local: clean-local-kube
clean-local-kube:
	rm -rf tests/integration/kubectl-jprof.d
.PHONY: clean-local-kube

# contrib/k8s rendered by `kubectl kustomize` (every overlay) and checked by
# k8s_check.py, the project's own schema check; broken copies must fail it.
INTEGRATION_TEST_LIST += tests/integration/test_k8s_manifests.sh
JPROF_K8S_LOG = tests/integration/test_k8s_manifests.sh.log
if HAVE_JAVAC
$(JPROF_K8S_LOG): jprof-server jprof-agent jprof-top jprof-helper.jar jprof-workload
else
$(JPROF_K8S_LOG): jprof-server jprof-agent jprof-top jprof-workload
endif
EXTRA_DIST += tests/integration/test_k8s_manifests.sh tests/integration/k8s_check.py

# The container image: make distdir, scripts/build-images (offline base),
# then the programs run inside the archive it wrote. The slowest test, and it
# loads both cores while compiling: it runs last of all, after the Tomcat one.
# (Not in make distcheck, which runs unit tests only.)
INTEGRATION_TEST_LIST += tests/integration/test_images.sh
JPROF_IMAGES_AFTER = $(filter-out $(JPROF_IMAGES_LOG) $(JPROF_PODS_LOG),$(TEST_LOGS))
$(JPROF_IMAGES_LOG): $(JPROF_IMAGES_AFTER)
EXTRA_DIST += tests/integration/test_images.sh

# Real pods (tests/integration/pods.sh): podman + runc containers from the
# image test_images.sh built (so they run after it, reusing its archive)
# and pod images assembled from this build's JDKs (kept in the test's store
# while their inputs do not change), locked down the way clusters lock them;
# kubectl-jprof and jprof-top -n -s through the FAKE kubectl over them (the
# matrix of man kubectl-jprof, LOCKED-DOWN PODS), and jprof-agent in a
# container with exactly the privileges of contrib/k8s's DaemonSet, against
# the FAKE API over HTTPS, jprof-server. make check runs every distinct
# route once (~4 min); `make check-pods` the full matrix, every case in a
# pod of its own (JPROF_PODS_FULL=1, 14-18 min here).
INTEGRATION_TEST_LIST += tests/integration/test_pods.sh
check-pods: all
	JPROF_PODS_FULL=1 $(MAKE) $(AM_MAKEFLAGS) check TESTS=tests/integration/test_pods.sh
.PHONY: check-pods
$(JPROF_PODS_LOG): kubectl-jprof jprof-probe jprof-top jprof-server jprof-workload \
	$(filter $(JPROF_IMAGES_LOG),$(TEST_LOGS))
EXTRA_DIST += tests/integration/test_pods.sh tests/integration/pods.sh \
	tests/integration/pod-images.py tests/integration/daemonset.py
clean-local: clean-local-pods
clean-local-pods:
	rm -rf tests/integration/pods.d
.PHONY: clean-local-pods

# Faults of the environment (tests/integration/test_faults.py): the embedded
# store on a tmpfs that fills up (503, reads work, nothing acknowledged lost),
# the real agent against it and with its target's /tmp nearly full, clock
# skew. Own mount namespace (unshare -m, root): nothing outside sees the mounts.
INTEGRATION_TEST_LIST += tests/integration/test_faults.py
JPROF_FAULTS_LOG = tests/integration/test_faults.py.log
$(JPROF_FAULTS_LOG): jprof-server jprof-agent jprof-workload
EXTRA_DIST += tests/integration/test_faults.py
clean-local: clean-local-faults
clean-local-faults:
	rm -rf tests/integration/faults.*
.PHONY: clean-local-faults

# The other architecture (docs/ARM64.md): the cross build in cross-ARCH/
# (configure --with-cross-probe; src/probe/local.mk) run here under
# qemu-user: its unit tests, the reader on every fixture byte for byte against
# this build's, the probe's protocol with JVMs of both architectures, the
# server's API suite. Without a cross build: a loud skip (a failure in CI).
INTEGRATION_TEST_LIST += tests/integration/test_cross.py
JPROF_CROSS_LOG = tests/integration/test_cross.py.log
EXTRA_DIST += tests/integration/test_cross.py
# (every unit test program; not from TESTS, which make check TESTS=... replaces)
JPROF_CROSS_UNIT = $(filter-out tests/unit/test_store_clickhouse,$(filter tests/unit/test_%,$(check_PROGRAMS)))
AM_TESTS_ENVIRONMENT += JPROF_CROSS_ARCH='$(XPROBE_ARCH)' JPROF_CROSS_DIR='cross-$(XPROBE_ARCH)' \
	JPROF_CROSS_EMULATOR='$(XPROBE_EMULATOR)' JPROF_CROSS_UNIT_TESTS='$(JPROF_CROSS_UNIT)'; \
	export JPROF_CROSS_ARCH JPROF_CROSS_DIR JPROF_CROSS_EMULATOR JPROF_CROSS_UNIT_TESTS;
if CROSS_PROBE
# the cross build's programs this test runs (its make knows what is out of date)
$(JPROF_CROSS_LOG): jprof-top jprof-probe jprof-server $(XPROBE) cross-programs
cross-programs: $(XPROBE)
	@$(MAKE) -C $(XPROBE_DIR) jprof-top jprof-server $(JPROF_CROSS_UNIT)
endif
clean-local: clean-local-cross
clean-local-cross:
	rm -rf tests/integration/cross.d
.PHONY: clean-local-cross cross-programs
