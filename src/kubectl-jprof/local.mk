# src/kubectl-jprof: the kubectl plugin, on jprof-top's front end (libjptui.a:
# the kubectl source, the reports and the writers) and the kubectl client.
bin_PROGRAMS += kubectl-jprof
kubectl_jprof_SOURCES = src/kubectl-jprof/main.c src/kubectl-jprof/annotate.c \
	src/kubectl-jprof/plugin.h
kubectl_jprof_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
kubectl_jprof_LDADD = libjptui.a libjpkube.a libjpjvm.a libjpwire.a libjpweb.a libjpjfr.a \
	libjpmodel.a libjpbase.a $(JANSSON_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) $(DLOPEN_LIBS) -lpthread -lm
EXTRA_DIST += contrib/krew/jprof.yaml
