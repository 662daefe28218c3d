/* meta.h - one chunk's metadata: the classes and their fields in wire order.
 *
 * Internal to src/jfr. A jfr_meta is caller storage (jfr_meta_init /
 * jfr_meta_cleanup) owning every string and table it holds; it borrows
 * nothing from the input after jfr_meta_parse returns. Type ids are only
 * meaningful inside their chunk, so code looks classes up by name. */
#ifndef JP_JFR_META_H
#define JP_JFR_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "jfr/internal.h"

/* How a value of a class is laid out on the wire. */
typedef enum jfr_prim {
    JFR_P_STRUCT = 0, /* its fields, in order */
    JFR_P_VARINT,     /* short, char, int, long */
    JFR_P_BYTE,       /* boolean, byte */
    JFR_P_F32,        /* float, 4 raw bytes */
    JFR_P_F64,        /* double, 8 raw bytes */
    JFR_P_STRING,     /* java.lang.String: tag + payload */
    JFR_P_UNKNOWN     /* no fields and not a known primitive: undecodable */
} jfr_prim;

typedef struct jfr_field {
    uint32_t name; /* index into the metadata string table */
    uint32_t cls;  /* class index, JFR_NONE when the type id is undefined */
    uint64_t type_id;
    bool cpool;    /* a varlong key into the type's constant pool */
    bool array;    /* varint count, then elements */
    uint8_t width; /* in a flat class (below): 0 a varint, else that many raw bytes */
} jfr_field;

/* A flat class is a struct whose fields are all single values of a fixed
 * wire form: pool keys and short/char/int/long (varints), boolean/byte,
 * float and double (raw bytes). Most pool values and every stack frame are
 * flat: they are skipped and read by their fields' widths, without the
 * generic walk through the metadata. */
enum { JFR_FLAT_NO = 0, JFR_FLAT_MIXED, JFR_FLAT_VARINTS /* every field a varint */ };

typedef struct jfr_class {
    uint64_t id;
    uint32_t name;   /* string index */
    uint32_t field0; /* first field in jfr_meta.fields */
    uint32_t nfields;
    uint8_t prim;   /* jfr_prim */
    bool zero_size; /* a value takes no bytes at all (empty struct) */
    bool event;     /* its super type is jdk.jfr.Event */
    uint8_t flat;   /* JFR_FLAT_* */
} jfr_class;

typedef struct jfr_meta {
    char *text; /* NUL-separated decoded strings */
    size_t text_len, text_cap;
    uint32_t *str_off; /* string i starts at text + str_off[i] */
    size_t nstr, str_cap;
    jfr_class *classes;
    size_t nclasses, classes_cap;
    jfr_field *fields;
    size_t nfields, fields_cap;
    jp_u64map by_id;   /* type id -> class index */
    jp_u64map by_name; /* hash of the name (+ probe) -> class index */
    uint32_t refs;     /* holders, for jfr_meta_new / _ref / _unref */
} jfr_meta;

void jfr_meta_init(jfr_meta *m);
void jfr_meta_cleanup(jfr_meta *m);

/* Heap metadata shared between chunks whose metadata events are identical
 * (a JDK recording repeats the same metadata in every chunk): _new returns
 * one reference, _unref frees with the last one (NULL is a no-op). */
jfr_meta *jfr_meta_new(void);
jfr_meta *jfr_meta_ref(jfr_meta *m);
void jfr_meta_unref(jfr_meta *m);

/* Parses the metadata event starting at `ev` (its size field) and ending
 * before `end`. Errors name the offset of the damage through w. */
jp_err jfr_meta_parse(jfr_meta *m, const uint8_t *ev, const uint8_t *end, const jfr_where *w);

static inline const char *jfr_meta_str(const jfr_meta *m, uint32_t idx)
{
    return idx < m->nstr ? m->text + m->str_off[idx] : "";
}

/* Class index of the class named `name`, or JFR_NONE. */
uint32_t jfr_meta_class(const jfr_meta *m, const char *name);
/* Class index for a type id, or JFR_NONE. */
uint32_t jfr_meta_class_by_id(const jfr_meta *m, uint64_t id);
/* Index (into m->fields) of the field `name` of class cls, or JFR_NONE. */
uint32_t jfr_meta_field(const jfr_meta *m, uint32_t cls, const char *name);
/* Name of a class, "" when cls is JFR_NONE. */
const char *jfr_meta_class_name(const jfr_meta *m, uint32_t cls);

/* Skips `count` compressed integers lying before `end` as a loop of
 * jfr_varint_skip would, a word at a time. False, the cursor unchanged,
 * when they run past `end`. */
bool jfr_varints_skip_n(const uint8_t **pp, const uint8_t *end, uint64_t count);

/* Skips one value of field f (array, pool key, primitive or inline struct).
 * `depth` counts struct nesting; returns JP_OK or an error through w. */
jp_err jfr_skip_field(const jfr_meta *m, const jfr_field *f, const uint8_t **pp, const uint8_t *end,
                      int depth, const jfr_where *w);
/* Skips one value of class cls (not a pool key, not an array). */
jp_err jfr_skip_class(const jfr_meta *m, uint32_t cls, const uint8_t **pp, const uint8_t *end,
                      int depth, const jfr_where *w);

#endif
