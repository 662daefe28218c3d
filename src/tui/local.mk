bin_PROGRAMS += jprof-top
jprof_top_SOURCES = src/tui/main.c
jprof_top_CFLAGS = $(AM_CFLAGS) $(NCURSES_CFLAGS) $(JANSSON_CFLAGS)
jprof_top_LDADD = libjpjfr.a libjpmodel.a libjpbase.a $(NCURSES_LIBS) $(JANSSON_LIBS) -lm
