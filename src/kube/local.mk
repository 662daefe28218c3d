# src/kube: the kubectl client library - the pods of a service and a probe
# session over `kubectl exec -i` (kube.h). jprof-top's kubectl source and
# kubectl-jprof call it; no program lives here.
noinst_LIBRARIES += libjpkube.a
libjpkube_a_SOURCES = \
	src/kube/kube.h src/kube/kube_int.h \
	src/kube/kube_ctl.c \
	src/kube/kube_pods.c \
	src/kube/kube_probe.c \
	src/kube/kube_session.c
libjpkube_a_CPPFLAGS = $(AM_CPPFLAGS) -DJP_BUILD_PROBE='"$(abs_top_builddir)/jprof-probe"'
libjpkube_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
