/* error.h - jprof's one numbered error enum and a context-carrying error value.
 *
 * Codes are append-only: never renumber, they may reach users as exit codes.
 * Only the outermost layer (a main.c) prints an error; libraries fill a
 * jp_error and return its code. */
#ifndef JP_BASE_ERROR_H
#define JP_BASE_ERROR_H

#include <stddef.h>

typedef enum jp_err {
    JP_OK = 0,
    JP_ERR_NOMEM = 1,            /* allocation failed */
    JP_ERR_IO = 2,               /* open/read/write/mmap failed (errno in the message) */
    JP_ERR_USAGE = 3,            /* bad argument from the caller or the command line */
    JP_ERR_FORMAT = 4,           /* malformed input: wrong magic, bad field, broken reference */
    JP_ERR_TRUNCATED = 5,        /* input ends before a structure it announced */
    JP_ERR_LIMIT = 6,            /* input exceeds an explicit cap (size, count, depth) */
    JP_ERR_UNSUPPORTED = 7,      /* valid but not handled (e.g. an unknown major version) */
    JP_ERR_NOT_FOUND = 8,        /* a named thing does not exist */
    JP_ERR_PERMISSION = 9,       /* the OS refused (EPERM/EACCES) */
    JP_ERR_TIMEOUT = 10,         /* a bounded wait ran out */
    JP_ERR_PROTOCOL = 11,        /* a peer answered something we cannot use */
    JP_ERR_INTERNAL = 12,        /* a bug in jprof */
    JP_ERR_NOT_JVM = 13,         /* the process is not a HotSpot JVM (never signalled) */
    JP_ERR_ATTACH_DISABLED = 14, /* JVM runs with -XX:+DisableAttachMechanism */
    JP_ERR_EXITED = 15,          /* the target process exited while we talked to it */
    JP_ERR_AGENT_REFUSED = 16,   /* the JVM refused to load an agent */
    JP_ERR_CONFLICT = 17,        /* someone else's profiler is active in the target */
    JP_ERR_NOSPACE = 18,         /* a file system is full (ENOSPC, EDQUOT, SQLITE_FULL) */
    JP_ERR__COUNT
} jp_err;

/* Short fixed description of a code; never NULL. */
const char *jp_strerror(jp_err code);

/* The code for a failed system call's errno: JP_ERR_NOSPACE for a full file
 * system, JP_ERR_PERMISSION for EACCES/EPERM, else JP_ERR_IO. */
jp_err jp_err_from_errno(int errnum);

/* An error with context, e.g. "app.jfr: chunk 3 @0x1a2b: pool count 9e9 exceeds limit".
 * Caller storage; jp_error_init() before use. */
typedef struct jp_error {
    jp_err code;
    char msg[512];
} jp_error;

void jp_error_init(jp_error *e);

/* Set code and a printf-style message; returns code so callers can
 * `return jp_error_set(e, JP_ERR_FORMAT, "...")`. e may be NULL. */
jp_err jp_error_set(jp_error *e, jp_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#ifdef __clang_analyzer__
/* For clang's static analyzer only (make tidy): it does not look into
 * error.c, so it took `return jp_error_set(e, JP_ERR_IO, ...)` for a
 * possible JP_OK and followed error paths as if they had succeeded (outputs
 * never written, buffers already freed). Say here that the code comes back. */
#define jp_error_set(e, code, ...) (jp_error_set((e), (code), __VA_ARGS__), (code))
#endif

/* Prepend context ("file.jfr: ") to an existing message, keeping the code. */
void jp_error_prefix(jp_error *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
