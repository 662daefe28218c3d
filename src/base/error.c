#include "base/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const jp_err_names[JP_ERR__COUNT] = {
    [JP_OK] = "success",
    [JP_ERR_NOMEM] = "out of memory",
    [JP_ERR_IO] = "input/output error",
    [JP_ERR_USAGE] = "invalid usage",
    [JP_ERR_FORMAT] = "malformed input",
    [JP_ERR_TRUNCATED] = "truncated input",
    [JP_ERR_LIMIT] = "input exceeds a limit",
    [JP_ERR_UNSUPPORTED] = "unsupported",
    [JP_ERR_NOT_FOUND] = "not found",
    [JP_ERR_PERMISSION] = "permission denied",
    [JP_ERR_TIMEOUT] = "timed out",
    [JP_ERR_PROTOCOL] = "protocol error",
    [JP_ERR_INTERNAL] = "internal error",
    [JP_ERR_NOT_JVM] = "not a HotSpot JVM",
    [JP_ERR_ATTACH_DISABLED] = "attach mechanism disabled",
    [JP_ERR_EXITED] = "process exited",
    [JP_ERR_AGENT_REFUSED] = "agent loading refused",
    [JP_ERR_CONFLICT] = "another profiler is active",
    [JP_ERR_NOSPACE] = "no space left on the file system",
};

jp_err jp_err_from_errno(int errnum)
{
    if (errnum == ENOSPC || errnum == EDQUOT)
        return JP_ERR_NOSPACE;
    if (errnum == EACCES || errnum == EPERM)
        return JP_ERR_PERMISSION;
    return JP_ERR_IO;
}

const char *jp_strerror(jp_err code)
{
    if ((int)code < 0 || code >= JP_ERR__COUNT || !jp_err_names[code])
        return "unknown error";
    return jp_err_names[code];
}

void jp_error_init(jp_error *e)
{
    e->code = JP_OK;
    e->msg[0] = '\0';
}

/* the name in parentheses: not the analyzer's macro of error.h */
jp_err(jp_error_set)(jp_error *e, jp_err code, const char *fmt, ...)
{
    if (!e)
        return code;
    e->code = code;
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return code;
}

void jp_error_prefix(jp_error *e, const char *fmt, ...)
{
    if (!e)
        return;
    char pre[256];
    va_list ap;
    va_start(ap, fmt);
    // NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start above; clang 14 misses it
    int n = vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    size_t plen = (size_t)n < sizeof pre ? (size_t)n : sizeof pre - 1;
    size_t mlen = strnlen(e->msg, sizeof e->msg - 1);
    if (plen + mlen > sizeof e->msg - 1)
        mlen = sizeof e->msg - 1 - plen; /* keep the prefix, cut the tail */
    memmove(e->msg + plen, e->msg, mlen);
    memcpy(e->msg, pre, plen);
    e->msg[plen + mlen] = '\0';
}
