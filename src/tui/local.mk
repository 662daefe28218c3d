# jprof-top: the curses-free part is a library so unit tests can drive the
# views without a terminal; only screen.c (in the program) links ncurses.
noinst_LIBRARIES += libjptui.a
libjptui_a_SOURCES = \
	src/tui/batch.c src/tui/batch.h \
	src/tui/canvas.c src/tui/canvas.h \
	src/tui/chrome.c src/tui/chrome.h \
	src/tui/flame_json.c src/tui/flame_json.h \
	src/tui/flame_panel.c src/tui/flame_panel.h \
	src/tui/io_detail.c src/tui/io_detail.h \
	src/tui/layout.c src/tui/layout.h \
	src/tui/live.c src/tui/live.h \
	src/tui/live_batch.c src/tui/live_batch.h \
	src/tui/live_report.c src/tui/live_report.h \
	src/tui/gc_report.c src/tui/gc_report.h \
	src/tui/lines.c src/tui/lines.h \
	src/tui/live_view.c src/tui/live_view.h src/tui/live_render.c \
	src/tui/load.c src/tui/load.h \
	src/tui/picker.c src/tui/source.h \
	src/tui/source_kubectl.c src/tui/source_kubectl.h \
	src/tui/source_server.c src/tui/source_server.h \
	src/tui/remote.c src/tui/remote.h \
	src/tui/remote_batch.c src/tui/remote_batch.h \
	src/tui/remote_report.c src/tui/remote_report.h \
	src/tui/table_panel.c src/tui/table_panel.h \
	src/tui/view.c src/tui/view.h
libjptui_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)

bin_PROGRAMS += jprof-top
jprof_top_SOURCES = src/tui/main.c \
	src/tui/app_common.c src/tui/app_common.h \
	src/tui/interactive.c src/tui/interactive.h \
	src/tui/remote_cli.c src/tui/remote_cli.h \
	src/tui/screen.c src/tui/screen.h
jprof_top_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(JANSSON_CFLAGS)
jprof_top_LDADD = libjptui.a libjpkube.a libjpjvm.a libjpwire.a libjpweb.a libjpjfr.a libjpmodel.a libjpbase.a $(NCURSES_LIBS) $(JANSSON_LIBS) $(CURL_LIBS) $(ZLIB_LIBS) -lm
