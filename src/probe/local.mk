# src/probe: jprof-probe, the in-container end of the kubectl-exec source
# (docs/PROBE.md). Static and stripped ($(PROBE_LDFLAGS), configure.ac).
# probe_username.c comes before libjpjvm.a so the archive's NSS-based
# jvm_user_name is not linked (jvm/username.h).
bin_PROGRAMS += jprof-probe
jprof_probe_SOURCES = src/probe/main.c \
	src/probe/proto.c src/probe/proto.h \
	src/probe/probe_profile.c src/probe/probe_profile.h \
	src/probe/probe_fs.c src/probe/probe_fs.h \
	src/probe/probe_dev.c src/probe/probe_dev.h \
	src/probe/probe_username.c
jprof_probe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
jprof_probe_LDFLAGS = $(AM_LDFLAGS) $(PROBE_LDFLAGS)
jprof_probe_LDADD = libjpjvm.a libjpwire.a libjpjfr.a libjpmodel.a libjpbase.a $(JANSSON_LIBS) \
	-lpthread -lm
