/* jfr_writer.h - a small JFR writer for tests: synthetic chunks in format
 * 2.0 (JDK 11 layout) and 2.1 (JDK 17 layout, and async-profiler's types).
 *
 * Test-only. A jw_buf is caller storage (jw_init / jw_free) that grows
 * without limit; everything is written big-endian / LEB128 exactly as the
 * JDK and async-profiler do, with knobs for the odd forms (padded varints,
 * every string encoding) that readers must accept. Aborts on misuse. */
#ifndef JP_TESTS_JFR_WRITER_H
#define JP_TESTS_JFR_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct jw_buf {
    uint8_t *data;
    size_t len, cap;
} jw_buf;

void jw_init(jw_buf *b);
void jw_free(jw_buf *b);
void jw_u8(jw_buf *b, uint8_t v);
void jw_bytes(jw_buf *b, const void *p, size_t n);
void jw_be16(jw_buf *b, uint16_t v);
void jw_be32(jw_buf *b, uint32_t v);
void jw_be64(jw_buf *b, uint64_t v);
/* Minimal LEB128 (JFR flavour: the 9th byte carries 8 bits). */
void jw_varint(jw_buf *b, uint64_t v);
/* Padded, non-minimal form in exactly n bytes (1..9); v must fit. */
void jw_varint_pad(jw_buf *b, uint64_t v, int n);
/* Patches a 5-byte padded varint at `at`. */
void jw_patch5(jw_buf *b, size_t at, uint64_t v);

/* Strings in each of the six encodings. */
enum { JW_NULL = 0, JW_EMPTY = 1, JW_POOL = 2, JW_UTF8 = 3, JW_CHARS = 4, JW_LATIN1 = 5 };
void jw_str_null(jw_buf *b);
void jw_str_empty(jw_buf *b);
void jw_str_pool(jw_buf *b, uint64_t key);
void jw_str_utf8(jw_buf *b, const char *s);
/* s is UTF-8; written as UTF-16 units (surrogate pairs for astral chars). */
void jw_str_chars(jw_buf *b, const char *s);
/* s is UTF-8 whose code points are all < 256; written as Latin-1 bytes. */
void jw_str_latin1(jw_buf *b, const char *s);
/* Writes s in encoding enc (JW_UTF8 / JW_CHARS / JW_LATIN1 / JW_EMPTY / JW_NULL). */
void jw_str(jw_buf *b, int enc, const char *s);

/* ---- metadata ---- */
typedef struct jw_field {
    const char *name;
    uint64_t type;
    bool cpool;
    bool array;
} jw_field;

#define JW_MAX_FIELDS 16
typedef struct jw_class {
    uint64_t id;
    const char *name;
    const char *super; /* NULL, or e.g. "jdk.jfr.Event" */
    int nfields;
    jw_field fields[JW_MAX_FIELDS];
} jw_class;

/* ---- chunks ---- */
typedef struct jw_chunk {
    jw_buf *b;
    size_t start; /* offset of the header in b */
    int minor;    /* 0 = format 2.0, 1 = format 2.1 */
    int64_t start_ns, start_ticks, ticks_per_sec;
    uint64_t meta_off; /* relative to start; 0 until written */
    uint64_t cp_off;   /* last checkpoint, relative; 0 until written */
    int meta_enc;      /* encoding of metadata strings (default JW_UTF8) */
    size_t delta_at;   /* where the last checkpoint's delta (9 bytes) sits in b */
} jw_chunk;

void jw_chunk_begin(jw_chunk *c, jw_buf *b, int minor, int64_t start_ns, int64_t start_ticks,
                    int64_t ticks_per_sec);
/* Patches the header (size, offsets, duration). */
void jw_chunk_end(jw_chunk *c, int64_t duration_ns);

/* Events: size as a 5-byte padded varint (like async-profiler), patched by
 * jw_event_end. Returns the event's start offset. */
size_t jw_event_begin(jw_buf *b, uint64_t type);
void jw_event_end(jw_buf *b, size_t start);

void jw_metadata(jw_chunk *c, const jw_class *classes, size_t n);
/* A checkpoint chained to the one before (delta) with npools pools; write
 * the pools, then jw_checkpoint_end. */
size_t jw_checkpoint_begin(jw_chunk *c, uint64_t npools);
void jw_checkpoint_end(jw_chunk *c, size_t start);
/* Pool header: type id and entry count. */
void jw_pool(jw_buf *b, uint64_t type, uint64_t count);

/* ---- a standard type system ---- */
enum {
    JW_BOOLEAN = 4,
    JW_CHAR,
    JW_FLOAT,
    JW_DOUBLE,
    JW_BYTE,
    JW_SHORT,
    JW_INT,
    JW_LONG,
    JW_STRING = 20,
    JW_CLASS,
    JW_THREAD,
    JW_CLASSLOADER,
    JW_FRAMETYPE,
    JW_THREADSTATE,
    JW_STACKTRACE,
    JW_STACKFRAME,
    JW_METHOD,
    JW_VSPACE,
    JW_PACKAGE,
    JW_SYMBOL,
    JW_THREADGROUP,
    JW_EXEC = 101,
    JW_TLAB_IN,
    JW_TLAB_OUT,
    JW_MONITOR,
    JW_PARK,
    JW_SETTING = 108,
    JW_WALL = 118,
    JW_ALLOC_SAMPLE = 119,
    JW_OTHER = 150
};

/* Flavours of the standard metadata. */
enum {
    JW_JDK11, /* format 2.0 field lists */
    JW_JDK17, /* 2.1: Class.hidden, ThreadPark.until, ... */
    JW_FUTURE /* 2.1 plus unknown fields of every shape ahead of the known ones */
};

/* Writes the metadata of the standard types in the given flavour. */
void jw_std_metadata(jw_chunk *c, int flavour);
/* The standard classes (at most 40) into out; returns how many. */
size_t jw_std_classes(int flavour, jw_class *out);
/* The standard pools (one checkpoint) for jw_std_chunk's frames. */
void jw_std_pools(jw_chunk *c, int flavour);

/* Standard pool entries (inside a pool of the matching type). */
void jw_symbol(jw_buf *b, uint64_t key, int enc, const char *s);
void jw_class_entry(jw_buf *b, int flavour, uint64_t key, uint64_t name_sym);
void jw_method(jw_buf *b, int flavour, uint64_t key, uint64_t class_key, uint64_t name_sym);
void jw_frametype(jw_buf *b, uint64_t key, const char *desc);
void jw_thread(jw_buf *b, int flavour, uint64_t key, const char *os_name, uint64_t os_tid,
               const char *java_name);
/* A stack trace of n frames given leaf first: methods[i] with frame type key types[i]. */
void jw_stack(jw_buf *b, int flavour, uint64_t key, bool truncated, size_t n,
              const uint64_t *methods, const uint64_t *types);

/* Standard events. */
void jw_ev_exec(jw_buf *b, int flavour, uint64_t ticks, uint64_t thread, uint64_t stack);
void jw_ev_wall(jw_buf *b, uint64_t ticks, uint64_t thread, uint64_t stack, uint64_t samples);
void jw_ev_alloc_sample(jw_buf *b, uint64_t ticks, uint64_t thread, uint64_t stack,
                        uint64_t weight);
void jw_ev_tlab(jw_buf *b, bool inside, uint64_t ticks, uint64_t thread, uint64_t stack,
                uint64_t alloc_size, uint64_t tlab_size);
void jw_ev_lock(jw_buf *b, int flavour, bool park, uint64_t ticks, uint64_t dur_ticks,
                uint64_t thread, uint64_t stack);
void jw_ev_setting(jw_buf *b, uint64_t ticks, uint64_t id, const char *name, const char *value);
/* An event of a type the reader does not know (arrays, floats, strings). */
void jw_ev_other(jw_buf *b, uint64_t ticks);

/* A whole standard chunk: metadata, a few symbols/classes/methods, 2 threads,
 * 3 stacks, and `n` ExecutionSamples cycling through the stacks, plus one
 * event of each other kind and a "period" setting of 20 ms. Frame names are
 * "com.example.App.main" > "com.example.App.work" > "com.example.Util.leaf"
 * and so on (see jfr_writer.c). Returns the chunk's start offset. */
size_t jw_std_chunk(jw_buf *b, int minor, int flavour, int64_t start_ns, size_t n);

#endif
