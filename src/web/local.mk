# src/web: the files of the web page (web/), compiled in by web_gen, a tiny
# build tool, into a library of their own: jprof-server serves them (so
# `make install` installs nothing else) and jprof-top's --format html inlines
# the flame graph's CSS and scripts from them. Both link libjpweb.a.
WEB_FILES = index.html app.css app.js flame.js views.js util.js export.js
WEB_SRC = web/index.html web/app.css web/app.js web/flame.js web/views.js web/util.js web/export.js
EXTRA_DIST += $(WEB_SRC)
if CROSS_COMPILING
# a cross build runs web_gen here, so it is built for this machine
web_gen$(EXEEXT): $(srcdir)/src/web/web_gen.c
	$(AM_V_CC)$(CC_FOR_BUILD) -std=c11 -O2 -o $@ $(srcdir)/src/web/web_gen.c
CLEANFILES += web_gen$(EXEEXT)
EXTRA_DIST += src/web/web_gen.c
else
noinst_PROGRAMS += web_gen
web_gen_SOURCES = src/web/web_gen.c
endif
noinst_LIBRARIES += libjpweb.a
libjpweb_a_SOURCES = src/web/web_files.h
nodist_libjpweb_a_SOURCES = src/web/web_files.c
CLEANFILES += src/web/web_files.c
src/web/web_files.c: web_gen$(EXEEXT) $(WEB_SRC)
	$(AM_V_GEN)$(MKDIR_P) src/web && ./web_gen$(EXEEXT) $(srcdir) $(WEB_FILES) >$@.tmp && \
	mv $@.tmp $@
