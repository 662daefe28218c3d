# Man pages, one per program.
dist_man_MANS += man/jprof-top.1
dist_man_MANS += man/jprof-server.8
# jprof-agent and the concepts page (annotations, status reasons)
dist_man_MANS += man/jprof-agent.8 man/jprof.7
# the kubectl plugin and the probe it streams into pods
dist_man_MANS += man/kubectl-jprof.1 man/jprof-probe.1
