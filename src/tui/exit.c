/* exit.c - the exit status of a failed target operation (exit.h). */
#include "tui/exit.h"

int tui_exit_status(jp_err code)
{
    switch (code) {
    case JP_ERR_NOT_FOUND:
        return TUI_EXIT_NO_PROCESS;
    case JP_ERR_NOT_JVM:
        return TUI_EXIT_NOT_JVM;
    case JP_ERR_PERMISSION:
        return TUI_EXIT_PERMISSION;
    case JP_ERR_TIMEOUT:
        return TUI_EXIT_ATTACH_TIMEOUT;
    case JP_ERR_EXITED:
        return TUI_EXIT_EXITED;
    case JP_ERR_ATTACH_DISABLED:
        return TUI_EXIT_ATTACH_DISABLED;
    case JP_ERR_AGENT_REFUSED:
        return TUI_EXIT_AGENT_REFUSED;
    case JP_ERR_CONFLICT:
        return TUI_EXIT_CONFLICT;
    case JP_ERR_USAGE:
        return TUI_EXIT_USAGE;
    default:
        return TUI_EXIT_ERROR;
    }
}

int tui_exit_status_kubectl(const jp_error *err)
{
    if (err->code == JP_ERR_PROTOCOL || err->code == JP_ERR_UNSUPPORTED)
        return TUI_EXIT_KUBECTL;
    if (err->code == JP_ERR_NOT_FOUND)
        return TUI_EXIT_NO_SERVICE;
    return tui_exit_status(err->code);
}
