# Man pages, one per program.
dist_man_MANS += man/jprof-top.1
dist_man_MANS += man/jprof-server.8
# jprof-agent and the concepts page (annotations, status reasons)
dist_man_MANS += man/jprof-agent.8 man/jprof.7
