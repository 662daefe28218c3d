/* otlp_dict.h - the OTLP profiles decoder's state and its dictionary
 * lookups (otlp_dict.c): the tables of a message's ProfilesDictionary kept
 * as spans of the input, and strings, attributes, functions and locations
 * read from them once each, on first use. Internal to otlp_decode.c, which
 * reads the resource profiles, profiles and samples (see otlp_decode.h for
 * what the decoder does).
 *
 * Ownership: everything here belongs to one ot_dec (ot_dict_cleanup); the
 * input is borrowed for its life. Not thread-safe. */
#ifndef JP_WIRE_OTLP_DICT_H
#define JP_WIRE_OTLP_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/hash.h"
#include "base/strbuf.h"
#include "wire/otlp_decode.h"
#include "wire/protobuf.h"

typedef struct ot_span {
    uint32_t off, len; /* into the input */
} ot_span;

typedef struct ot_table {
    ot_span *v;
    size_t n, cap;
} ot_table;

enum { T_MAPPING, T_LOCATION, T_FUNCTION, T_STRING, T_ATTRIBUTE, T_STACK, T_COUNT };

/* What an attribute can say about a sample (or a location's frame type). */
enum {
    ID_NS,
    ID_SERVICE,
    ID_POD,
    ID_CONTAINER,
    ID_NODE,
    ID_HOST,
    ID_CLUSTER,
    ID_WORKLOAD,
    ID_RT_NAME,
    ID_RT_VERSION,
    ID_PID,
    ID_THREAD,
    ID_COUNT,
    ID_FRAME_TYPE = ID_COUNT, /* locations only */
    ID_NONE
};

typedef struct ot_str {
    const char *s; /* NULL: not said */
    uint32_t len;
} ot_str;

typedef struct ot_ident {
    ot_str v[ID_COUNT];
} ot_ident;

typedef struct ot_attr {
    uint8_t read; /* the entry was decoded */
    uint8_t slot; /* ID_* */
    ot_str val;
    char num[24]; /* an integer value as text (process.pid) */
} ot_attr;

typedef struct ot_name {
    uint32_t off, len; /* into the names arena */
    uint8_t kind;      /* the kind a suffix of the name said, JP_FRAME_UNKNOWN none */
} ot_name;

typedef struct ot_loc {
    uint32_t first, n;  /* into lnames (and pframes): the frames, root first */
    uint32_t pf_target; /* pframes[first..] hold target pf_target - 1's frames; 0 none */
    uint8_t kind;       /* jp_frame_kind */
    uint8_t read;
} ot_loc;

typedef struct ot_dec {
    const uint8_t *in;
    size_t len;
    const jp_otlp_limits *lim;
    const jp_batch_target *defaults;
    jp_otlp_result *out;
    jp_error *err;
    ot_table t[T_COUNT];
    uint8_t *str_ok;   /* per string: 1 once checked for UTF-8 */
    ot_attr *attrs;    /* per attribute_table entry */
    ot_name *fn;       /* per function: its printed name */
    uint8_t *fn_read;  /* per function: fn[] is set */
    ot_loc *locs;      /* per location */
    ot_name *lnames;   /* frames of the locations read */
    uint32_t *pframes; /* ... as frames of the profile of a location's last target */
    size_t nlnames, lnames_cap, pframes_cap;
    jp_strbuf names; /* arena of printed names */
    jp_strbuf scratch;
    jp_u64map stack_of;  /* (stack index << 20 | target) -> profile stack + 1 */
    jp_u64map target_of; /* identity hash -> target index */
    uint32_t *frames;    /* one stack's profile frames, root first */
    size_t frames_cap;
    uint64_t *lines; /* one location's line functions */
    size_t lines_cap;
    uint32_t *slocs; /* one stack's locations, leaf first */
    size_t slocs_cap;
    size_t nframes, nthreads, nstacks, nrows; /* over all targets, for limits */
} ot_dec;

/* Sets d->err ("OTLP profiles: ...") and returns code. */
jp_err ot_fail(ot_dec *d, jp_err code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A reader over entry i of table t. */
void ot_entry(const ot_dec *d, int t, size_t i, jp_pb_reader *r);

/* An index into table t, checked. */
jp_err ot_index(ot_dec *d, int t, uint64_t i, const char *where);

/* string_table[i], checked for range and UTF-8. */
jp_err ot_string(ot_dec *d, uint64_t i, ot_str *s, const char *where);

/* Reads every dictionary field of the message (they merge, as protobuf
 * merges a repeated embedded message), then sizes the caches. */
jp_err ot_pass_dictionary(ot_dec *d);

jp_err ot_utf8(ot_dec *d, const jp_pb_field *f, const char *where);

/* A KeyValue (Resource.attributes: key inline or by index) or a
 * KeyValueAndUnit (attribute_table: key by index); `kvu` tells which. */
jp_err ot_key_value(ot_dec *d, jp_pb_reader *r, bool kvu, ot_attr *a);

/* Applies the attribute_indices field f (packed or not) to id. */
jp_err ot_apply_attrs(ot_dec *d, const jp_pb_reader *r, const jp_pb_field *f, ot_ident *id);

/* location_table[i]'s frames (root first), read once. */
jp_err ot_location(ot_dec *d, uint64_t i, const ot_loc **out);

/* Frees what the lookups hold (not the result). */
void ot_dict_cleanup(ot_dec *d);

#endif
