# src/kube: the kubectl-exec source (kube.h) and kubectl-jprof, the kubectl
# plugin. The client library is what jprof-top's kubectl source calls.
noinst_LIBRARIES += libjpkube.a
libjpkube_a_SOURCES = \
	src/kube/kube.h src/kube/kube_int.h \
	src/kube/kube_ctl.c \
	src/kube/kube_pods.c \
	src/kube/kube_session.c
libjpkube_a_CPPFLAGS = $(AM_CPPFLAGS) -DJP_BUILD_PROBE='"$(abs_top_builddir)/jprof-probe"'
libjpkube_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)

bin_PROGRAMS += kubectl-jprof
kubectl_jprof_SOURCES = src/kube/plugin.c src/kube/plugin_annotate.c src/kube/plugin.h
kubectl_jprof_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
kubectl_jprof_LDADD = libjpkube.a libjptui.a libjpagent.a libjpjvm.a libjpwire.a libjpweb.a libjpjfr.a \
	libjpmodel.a libjpbase.a $(JANSSON_LIBS) $(CURL_LIBS) $(ZLIB_LIBS) $(ZSTD_LIBS) -lpthread -lm
EXTRA_DIST += contrib/krew/jprof.yaml
