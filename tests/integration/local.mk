# Integration tests: real JVMs, the JDK's jfr tool as oracle, tmux.
