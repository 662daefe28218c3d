# Man pages, one per program.
dist_man_MANS += man/jprof-top.1
dist_man_MANS += man/jprof-server.8
