# src/agent: jprof-agent (discovery, pod watch, policy, collection, upload, /metrics).
noinst_LIBRARIES += libjpagent.a
libjpagent_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) $(ZSTD_CFLAGS)
libjpagent_a_SOURCES = \
	src/agent/cgroup.c src/agent/cgroup.h \
	src/agent/hostmode.c src/agent/hostmode.h \
	src/agent/queue.c src/agent/queue.h \
	src/agent/metrics.c src/agent/metrics.h \
	src/agent/upload.c src/agent/upload.h \
	src/agent/k8s_conn.c src/agent/k8s_conn.h \
	src/agent/k8s_watch.c src/agent/k8s_watch.h \
	src/agent/collect.c src/agent/collect.h \
	src/agent/run.c src/agent/run.h
AGENT_LIBS = libjpagent.a libjpjvm.a libjpwire.a libjpjfr.a libjpmodel.a libjpbase.a \
	$(CURL_LIBS) $(JANSSON_LIBS) $(ZSTD_LIBS) -lpthread -lm

sbin_PROGRAMS += jprof-agent
jprof_agent_SOURCES = src/agent/main.c
jprof_agent_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JANSSON_CFLAGS)
jprof_agent_LDADD = $(AGENT_LIBS)
EXTRA_DIST += bench/agent/run bench/agent/Spin.java
