# src/probe: jprof-probe, the in-container end of the kubectl-exec source
# (docs/PROBE.md). Static and stripped ($(PROBE_LDFLAGS), configure.ac).
# probe_username.c comes before libjpjvm.a so the archive's NSS-based
# jvm_user_name is not linked (jvm/username.h).
bin_PROGRAMS += jprof-probe
jprof_probe_SOURCES = src/probe/main.c \
	src/probe/proto.c src/probe/proto.h \
	src/probe/probe_profile.c src/probe/probe_profile.h \
	src/probe/probe_fs.c src/probe/probe_fs.h \
	src/probe/probe_reach.c src/probe/probe_reach.h \
	src/probe/probe_dev.c src/probe/probe_dev.h \
	src/probe/probe_username.c
jprof_probe_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
jprof_probe_LDFLAGS = $(AM_LDFLAGS) $(PROBE_LDFLAGS)
jprof_probe_LDADD = libjpjvm.a libjpwire.a libjpjfr.a libjpmodel.a libjpbase.a $(JANSSON_LIBS) \
	-lpthread -lm

# jprof-probe-ARCH: the probe for the other architecture (docs/ARM64.md),
# when configure found its cross compiler and -dev packages: this tree
# configured for $(XPROBE_HOST) in cross-ARCH/ and its jprof-probe built
# there. make always asks that build (its own make knows what is out of
# date) and copies the probe when it changed. Installed beside jprof-probe:
# jprof-top and kubectl-jprof send the one of the pod's architecture.
# make check-cross (tests/cross/local.mk) runs that build's tests under qemu.
if CROSS_PROBE
XPROBE_DIR = cross-$(XPROBE_ARCH)
XPROBE = jprof-probe-$(XPROBE_ARCH)
bin_SCRIPTS = $(XPROBE)
$(XPROBE_DIR)/Makefile: $(top_srcdir)/configure
	$(AM_V_GEN)$(MKDIR_P) $(XPROBE_DIR) && cd $(XPROBE_DIR) && \
	env -u CC -u CFLAGS -u CPPFLAGS -u LDFLAGS -u LIBS -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR \
		$(abs_top_srcdir)/configure $(XPROBE_CONFIGURE_FLAGS) >configure.out 2>&1 || \
		{ cat configure.out; exit 1; }
$(XPROBE): $(XPROBE_DIR)/Makefile jp-force
	@$(MAKE) -C $(XPROBE_DIR) jprof-probe
	@cmp -s $(XPROBE_DIR)/jprof-probe $@ || { cp $(XPROBE_DIR)/jprof-probe $@.tmp && mv $@.tmp $@; }
CLEANFILES += $(XPROBE)
endif
jp-force:
distclean-local: distclean-local-xprobe
distclean-local-xprobe:
	rm -rf cross-$(XPROBE_ARCH)
.PHONY: jp-force distclean-local-xprobe
