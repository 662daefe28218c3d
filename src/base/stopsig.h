/* stopsig.h - the stop signals every jprof program handles the same way.
 *
 * SIGINT, SIGTERM and SIGHUP go to one handler (which only sets a flag),
 * without SA_RESTART: a blocked read, wait or sleep returns EINTR, so the
 * loop around it looks at the flag at once. SIGPIPE is ignored: a peer that
 * went away is an error return, not the end of the program. */
#ifndef JP_BASE_STOPSIG_H
#define JP_BASE_STOPSIG_H

void jp_stop_signals(void (*handler)(int));

#endif
