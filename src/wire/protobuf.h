/* protobuf.h - the protocol-buffers wire format, written and read by hand
 * (no protobuf library in the stack): what pprof (pprof.c), OpenTelemetry
 * profiles (otlp_*.c) and Pyroscope's labels (pyroscope.c) need, no more.
 *
 * Writing appends fields to a jp_strbuf. A nested message is built in a
 * second buffer and appended with jp_pb_put_message(), which empties that
 * buffer for reuse (messages here nest a few levels deep, so the copies are
 * cheap and no length has to be patched in afterwards).
 *
 * Reading walks one message's fields in order over a borrowed byte span.
 * Every length and varint is checked against the end of its message before
 * it is used; a broken field stops the walk with JP_ERR_FORMAT (or
 * JP_ERR_TRUNCATED) and a message that says which field, at which byte
 * offset of the outermost input. Unknown fields are the caller's to skip
 * (the reader has already stepped over them). Groups (wire types 3 and 4,
 * deprecated since proto2) are refused.
 *
 * Ownership: readers borrow the input, which must outlive them and every
 * field span they hand out. Nothing here allocates except the strbuf
 * appends. Thread-safe for distinct readers and buffers. */
#ifndef JP_WIRE_PROTOBUF_H
#define JP_WIRE_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"

enum { JP_PB_VARINT = 0, JP_PB_I64 = 1, JP_PB_LEN = 2, JP_PB_I32 = 5 };

/* ---- writing ---- */

jp_err jp_pb_put_tag(jp_strbuf *b, unsigned field, unsigned wire);
/* A varint field (uint32/64, int32/64 as two's complement, bool, enum). */
jp_err jp_pb_put_uint(jp_strbuf *b, unsigned field, uint64_t v);
/* A fixed64 field (little-endian, 8 bytes). */
jp_err jp_pb_put_fixed64(jp_strbuf *b, unsigned field, uint64_t v);
/* A length-delimited field: bytes, a string, or an encoded message. */
jp_err jp_pb_put_bytes(jp_strbuf *b, unsigned field, const void *data, size_t len);
/* Appends msg as a length-delimited field and empties msg. */
jp_err jp_pb_put_message(jp_strbuf *b, unsigned field, jp_strbuf *msg);
/* A nested message of two varint fields, 1 = v1 and 2 = v2 (pprof's and
 * OTLP's ValueType: type and unit), built in scratch (left empty). */
jp_err jp_pb_put_pair(jp_strbuf *b, jp_strbuf *scratch, unsigned field, uint64_t v1, uint64_t v2);

/* ---- reading ---- */

typedef struct jp_pb_reader {
    const uint8_t *p, *end;
    size_t base; /* offset of the reader's first byte in the outermost input */
    const uint8_t *start;
    const char *what; /* the message's name, for errors ("Profile", ...) */
} jp_pb_reader;

typedef struct jp_pb_field {
    uint32_t num;
    uint8_t wire;
    uint64_t v;          /* JP_PB_VARINT, JP_PB_I64, JP_PB_I32: the value */
    const uint8_t *data; /* JP_PB_LEN: the payload */
    size_t len;
    size_t off; /* offset of the field's tag in the outermost input */
} jp_pb_field;

/* A reader over the whole input, named `what` in errors. */
void jp_pb_reader_init(jp_pb_reader *r, const uint8_t *data, size_t len, const char *what);
/* A reader over a length-delimited field's payload (a nested message). */
void jp_pb_reader_sub(jp_pb_reader *sub, const jp_pb_reader *parent, const jp_pb_field *f,
                      const char *what);

/* Reads the next field into *f: JP_OK and *more true; JP_OK and *more false
 * at the end of the message; JP_ERR_FORMAT / JP_ERR_TRUNCATED with err set
 * ("protobuf Profile @1234: field 2: length 900 runs past the end of the
 * message (17 bytes left)"). */
jp_err jp_pb_next(jp_pb_reader *r, jp_pb_field *f, bool *more, jp_error *err);

/* Sets err for a field whose wire type does not fit its declaration. */
jp_err jp_pb_wrong_wire(const jp_pb_reader *r, const jp_pb_field *f, jp_error *err);

/* Repeated scalars arrive packed (one length-delimited field) or one field
 * per element; this walks either. `fixed` is 0 for varints, 8 for fixed64. */
typedef struct jp_pb_values {
    const uint8_t *p, *end;
    uint64_t single;
    bool one, done;
    unsigned fixed;
    uint32_t num;     /* the field, for errors */
    size_t off;       /* its offset in the outermost input */
    const char *what; /* its message */
} jp_pb_values;

/* Starts a walk over the values of f; JP_ERR_FORMAT when f's wire type fits
 * neither form (or a packed fixed64 run is not a multiple of 8 bytes). */
jp_err jp_pb_values_init(jp_pb_values *it, const jp_pb_reader *r, const jp_pb_field *f,
                         unsigned fixed, jp_error *err);
/* The next value: JP_OK and *more; JP_ERR_FORMAT on a broken varint. */
jp_err jp_pb_values_next(jp_pb_values *it, uint64_t *v, bool *more, jp_error *err);
/* The number of values a packed fixed-width run holds (1 for a single field). */
size_t jp_pb_values_fixed_count(const jp_pb_values *it);

#endif
