# jprof-top: the curses-free part is a library so unit tests can drive the
# views without a terminal; only screen.c (in the program) links ncurses.
noinst_LIBRARIES += libjptui.a
libjptui_a_SOURCES = \
	src/tui/report_profile.c src/tui/report_profile.h \
	src/tui/canvas.c src/tui/canvas.h \
	src/tui/flame_chrome.c src/tui/flame_chrome.h \
	src/tui/flame_panel.c src/tui/flame_panel.h \
	src/tui/io_detail.c src/tui/io_detail.h \
	src/tui/flame_layout.c src/tui/flame_layout.h \
	src/tui/target.c src/tui/target.h \
	src/tui/batch.c src/tui/batch.h \
	src/tui/report_target.c src/tui/report_target.h \
	src/tui/report_gc.c src/tui/report_gc.h \
	src/tui/lines.c src/tui/lines.h \
	src/tui/screens.c src/tui/screens.h src/tui/live_render.c \
	src/tui/recording.c src/tui/recording.h \
	src/tui/screen_picker.c src/tui/source.h \
	src/tui/source_kubectl.c src/tui/source_kubectl.h \
	src/tui/source_server.c src/tui/source_server.h \
	src/tui/server_client.c src/tui/server_client.h \
	src/tui/batch_server.c src/tui/batch_server.h \
	src/tui/report_service.c src/tui/report_service.h \
	src/tui/flame_table.c src/tui/flame_table.h \
	src/tui/flame_view.c src/tui/flame_view.h
libjptui_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)

bin_PROGRAMS += jprof-top
jprof_top_SOURCES = src/tui/main.c \
	src/tui/app_common.c src/tui/app_common.h \
	src/tui/interactive.c src/tui/interactive.h \
	src/tui/remote_cli.c src/tui/remote_cli.h \
	src/tui/terminal.c src/tui/terminal.h
jprof_top_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(JANSSON_CFLAGS)
jprof_top_LDADD = libjptui.a libjpkube.a libjpjvm.a libjpwire.a libjpweb.a libjpjfr.a libjpmodel.a libjpbase.a $(NCURSES_LIBS) $(JANSSON_LIBS) $(CURL_LIBS) $(ZLIB_LIBS) -lm
