/* exit.h - jprof-top's exit statuses (man/jprof-top.1, EXIT STATUS), the
 * same for every source, and the status of a failed target operation. */
#ifndef JP_TUI_EXIT_H
#define JP_TUI_EXIT_H

#include "base/error.h"

#define TUI_EXIT_OK 0
#define TUI_EXIT_ERROR 1
#define TUI_EXIT_USAGE 2
#define TUI_EXIT_PARTIAL 3 /* a damaged file, or a partial answer */
/* a target that cannot be read (pid, or the JVM in a pod) */
#define TUI_EXIT_NO_PROCESS 4
#define TUI_EXIT_NOT_JVM 5
#define TUI_EXIT_PERMISSION 6
#define TUI_EXIT_ATTACH_TIMEOUT 7
#define TUI_EXIT_EXITED 8
#define TUI_EXIT_ATTACH_DISABLED 9
#define TUI_EXIT_AGENT_REFUSED 10
#define TUI_EXIT_CONFLICT 11
/* jprof-server and kubectl */
#define TUI_EXIT_UNREACHABLE 20  /* server unreachable, timed out, or failing */
#define TUI_EXIT_UNAUTHORIZED 21 /* 401: token missing or unknown */
#define TUI_EXIT_FORBIDDEN 22    /* 403: namespace outside the token's scope */
#define TUI_EXIT_NO_SERVICE 23   /* the server has no such service (kubectl: no pod) */
#define TUI_EXIT_KUBECTL 24      /* kubectl failed, or the pod cannot take the probe */

/* The exit status for a failure of a target's operation (open, refresh). */
int tui_exit_status(jp_err code);

/* The same through kubectl: the pod cannot take the probe (24), no such
 * pod or service (23), else as for a pid. */
int tui_exit_status_kubectl(const jp_error *err);

#endif
