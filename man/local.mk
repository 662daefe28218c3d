# Man pages, one per program.
dist_man_MANS += man/jprof-top.1
