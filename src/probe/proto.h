/* proto.h - jprof-probe's line protocol, the request side (docs/PROBE.md).
 *
 * Requests are JSON objects, one per line, on the probe's stdin; they come
 * from the kubectl client but travel through a pod, so they are parsed as
 * untrusted input: every line is bounded (PROBE_LINE_MAX, longer lines are
 * rejected with their line number and skipped to the next newline), every
 * field is checked for type and range, and errors say which field of which
 * line ("line 3: kinds[1]: unknown kind \"cpux\"").
 *
 * Ownership: probe_req is caller storage without heap. probe_line_reader is
 * caller storage holding a fixed buffer. Not thread-safe. */
#ifndef JP_PROBE_PROTO_H
#define JP_PROBE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define PROBE_PROTOCOL 1
#define PROBE_LINE_MAX 65536 /* bytes of one request line, newline excluded */
#define PROBE_ID_MAX 64

typedef enum probe_op {
    PROBE_OP_HELLO = 0,
    PROBE_OP_SNAPSHOT,
    PROBE_OP_PROFILE_START,
    PROBE_OP_PROFILE_READ,
    PROBE_OP_PROFILE_STOP,
    PROBE_OP_BYE,
    PROBE_OP_HEAP, /* a class histogram (pauses the JVM: only when the user asks) */
} probe_op;

/* "hello", "snapshot", "profile_start", ... */
const char *probe_op_name(probe_op op);

typedef struct probe_req {
    probe_op op;
    char id[PROBE_ID_MAX]; /* echoed in the reply; "" when absent */
    /* profile_start */
    uint32_t kinds;      /* bit (1 << jp_kind); default cpu */
    int64_t interval_ns; /* cpu sampling period; default 10 ms, 1 ms .. 1 s */
    int64_t window_ns;   /* how much history a read returns; default 30 s, max 1 h */
    /* snapshot */
    size_t max_frames; /* frames per thread sent; 0 = all */
    /* heap */
    bool all; /* GC.class_histogram -all: unreachable objects too, no full GC */
} probe_req;

/* Parses one request line (len bytes, no newline). lineno labels errors.
 * JP_ERR_FORMAT for malformed JSON or a wrong field, JP_ERR_UNSUPPORTED for
 * an unknown op or a protocol version we do not speak. */
jp_err probe_req_parse(const char *line, size_t len, unsigned long lineno, probe_req *out,
                       jp_error *err);

/* Reads newline-terminated lines from a file descriptor into a fixed buffer. */
typedef struct probe_line_reader {
    int fd;
    char buf[PROBE_LINE_MAX + 1];
    size_t len;       /* bytes of the current (possibly partial) line */
    char ahead[4096]; /* read-ahead past a newline */
    size_t ahead_off, ahead_len;
    bool skipping; /* discarding the rest of an overlong line */
    bool eof;
    unsigned long lineno;
} probe_line_reader;

void probe_line_reader_init(probe_line_reader *r, int fd);

/* Returns 1 with a line in *line and *len (NUL-terminated, valid until the next
 * call), 0 at end of input, -1 on an overlong line (err says which; the
 * reader skips it, call again) or a read error other than EINTR (err).
 * EINTR returns -2 so the caller can look at its signal flag. */
int probe_line_read(probe_line_reader *r, const char **line, size_t *len, jp_error *err);

#endif
