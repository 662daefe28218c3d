# src/tui: jprof-top. Everything but the curses loop is a library (libjptui.a)
# that kubectl-jprof links too and the unit tests drive without a terminal;
# only terminal.c (in the program) links ncurses.
noinst_LIBRARIES += libjptui.a
# the model every source feeds, and the sources (one file each)
libjptui_a_SOURCES = \
	src/tui/target.c src/tui/target.h src/tui/source.h \
	src/tui/source_pid.c src/tui/source_pid.h \
	src/tui/source_kubectl.c src/tui/source_kubectl.h \
	src/tui/source_server.c src/tui/source_server.h \
	src/tui/server_client.c src/tui/server_client.h \
	src/tui/recording.c src/tui/recording.h
# the screens (no terminal: state in, canvas out), the flame view and its panels
libjptui_a_SOURCES += \
	src/tui/canvas.c src/tui/canvas.h \
	src/tui/lines.c src/tui/lines.h \
	src/tui/screens.c src/tui/screens.h src/tui/screens_int.h \
	src/tui/screen_threads.c src/tui/screen_text.c src/tui/screen_flame.c \
	src/tui/screen_picker.c \
	src/tui/flame_view.c src/tui/flame_view.h \
	src/tui/flame_panel.c src/tui/flame_panel.h \
	src/tui/flame_table.c src/tui/flame_table.h \
	src/tui/flame_io.c src/tui/flame_io.h \
	src/tui/flame_chrome.c src/tui/flame_chrome.h \
	src/tui/flame_layout.c src/tui/flame_layout.h
# the reports: the same words on the screens and in batch output
libjptui_a_SOURCES += \
	src/tui/report_target.c src/tui/report_target.h \
	src/tui/report_service.c src/tui/report_service.h \
	src/tui/report_gc.c src/tui/report_gc.h \
	src/tui/report_heap.c src/tui/report_heap.h \
	src/tui/report_profile.c src/tui/report_profile.h \
	src/tui/report_diff.c src/tui/report_diff.h \
	src/tui/report_io.c src/tui/report_io.h
# the program's parts kubectl-jprof shares: options, exit statuses, signals,
# batch output
libjptui_a_SOURCES += \
	src/tui/options.c src/tui/options.h \
	src/tui/exit.c src/tui/exit.h \
	src/tui/stop.c src/tui/stop.h \
	src/tui/batch.c src/tui/batch.h \
	src/tui/batch_recording.c src/tui/batch_recording.h \
	src/tui/batch_server.c src/tui/batch_server.h
libjptui_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)

bin_PROGRAMS += jprof-top
jprof_top_SOURCES = src/tui/main.c \
	src/tui/interactive.c src/tui/interactive.h \
	src/tui/terminal.c src/tui/terminal.h
jprof_top_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(JANSSON_CFLAGS)
jprof_top_LDADD = libjptui.a libjpkube.a libjpjvm.a libjpwire.a libjpweb.a libjpjfr.a libjpmodel.a libjpbase.a $(NCURSES_LIBS) $(JANSSON_LIBS) $(ZLIB_LIBS) $(DLOPEN_LIBS) -lm
