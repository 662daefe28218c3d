# src/jvm: everything that touches a live JVM (see src/jvm/attach.h).
noinst_LIBRARIES += libjpjvm.a
libjpjvm_a_SOURCES = \
	src/jvm/proc.c src/jvm/proc.h \
	src/jvm/procstat.c src/jvm/procstat.h \
	src/jvm/username.c src/jvm/username.h \
	src/jvm/attach.c src/jvm/attach.h \
	src/jvm/cleanup.c src/jvm/cleanup.h \
	src/jvm/targetfs.c src/jvm/targetfs.h \
	src/jvm/threadprint.c src/jvm/threadprint.h \
	src/jvm/histogram.c src/jvm/histogram.h src/jvm/histogram_take.c \
	src/jvm/snapshot_take.c src/jvm/snapshot_take.h \
	src/jvm/recorder.c src/jvm/recorder.h \
	src/jvm/jfc.c src/jvm/jfc.h \
	src/jvm/engine.c src/jvm/engine.h src/jvm/engine_int.h \
	src/jvm/engine_jfr.c src/jvm/engine_asprof.c
libjpjvm_a_CPPFLAGS = $(AM_CPPFLAGS) -DJP_BUILD_HELPER_JAR='"$(abs_top_builddir)/jprof-helper.jar"'
libjpjvm_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)

# The helper agent jar (ThreadMXBean -> JSON), installed to $(pkgdatadir).
JPROF_HELPER_SRC = src/jvm/helper/JprofHelper.java
EXTRA_DIST += $(JPROF_HELPER_SRC) src/jvm/helper/MANIFEST.MF
if HAVE_JAVAC
pkgdata_DATA += jprof-helper.jar
CLEANFILES += jprof-helper.jar
jprof-helper.jar: $(srcdir)/src/jvm/helper/JprofHelper.java $(srcdir)/src/jvm/helper/MANIFEST.MF
	$(AM_V_GEN)rm -rf jprof-helper.classes && mkdir -p jprof-helper.classes && \
	$(JAVAC) -nowarn --release 11 -d jprof-helper.classes $(srcdir)/src/jvm/helper/JprofHelper.java && \
	$(JAR) cfm $@.tmp $(srcdir)/src/jvm/helper/MANIFEST.MF -C jprof-helper.classes . && \
	mv $@.tmp $@ && rm -rf jprof-helper.classes
endif
