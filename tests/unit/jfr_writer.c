/* jfr_writer.c - synthetic JFR chunks for the reader's unit tests. */
#include "jfr_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void jw_die(const char *what)
{
    fprintf(stderr, "jfr_writer: %s\n", what);
    abort();
}

void jw_init(jw_buf *b)
{
    memset(b, 0, sizeof *b);
}

void jw_free(jw_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

void jw_bytes(jw_buf *b, const void *p, size_t n)
{
    if (b->len + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->len + n)
            c *= 2;
        b->data = realloc(b->data, c);
        if (!b->data)
            jw_die("out of memory");
        b->cap = c;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
}

void jw_u8(jw_buf *b, uint8_t v)
{
    jw_bytes(b, &v, 1);
}

void jw_be16(jw_buf *b, uint16_t v)
{
    jw_u8(b, (uint8_t)(v >> 8));
    jw_u8(b, (uint8_t)v);
}

void jw_be32(jw_buf *b, uint32_t v)
{
    jw_be16(b, (uint16_t)(v >> 16));
    jw_be16(b, (uint16_t)v);
}

void jw_be64(jw_buf *b, uint64_t v)
{
    jw_be32(b, (uint32_t)(v >> 32));
    jw_be32(b, (uint32_t)v);
}

void jw_varint(jw_buf *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        if (v < 0x80) {
            jw_u8(b, (uint8_t)v);
            return;
        }
        jw_u8(b, (uint8_t)(v | 0x80));
        v >>= 7;
    }
    jw_u8(b, (uint8_t)v); /* 9th byte: 8 full bits */
}

void jw_varint_pad(jw_buf *b, uint64_t v, int n)
{
    if (n < 1 || n > 9 || (n < 9 && n * 7 < 64 && (v >> (n * 7)) != 0))
        jw_die("padded varint does not fit");
    for (int i = 0; i < n - 1 && i < 8; i++) {
        jw_u8(b, (uint8_t)((v & 0x7f) | 0x80));
        v >>= 7;
    }
    jw_u8(b, (uint8_t)(n == 9 ? v : v & 0x7f));
}

void jw_patch5(jw_buf *b, size_t at, uint64_t v)
{
    if (v >> 35)
        jw_die("value too big for 5 bytes");
    for (int i = 0; i < 4; i++) {
        b->data[at + i] = (uint8_t)((v & 0x7f) | 0x80);
        v >>= 7;
    }
    b->data[at + 4] = (uint8_t)v;
}

void jw_str_null(jw_buf *b)
{
    jw_u8(b, JW_NULL);
}

void jw_str_empty(jw_buf *b)
{
    jw_u8(b, JW_EMPTY);
}

void jw_str_pool(jw_buf *b, uint64_t key)
{
    jw_u8(b, JW_POOL);
    jw_varint(b, key);
}

void jw_str_utf8(jw_buf *b, const char *s)
{
    jw_u8(b, JW_UTF8);
    jw_varint(b, strlen(s));
    jw_bytes(b, s, strlen(s));
}

/* Decodes one UTF-8 code point (input is trusted test data). */
static uint32_t jw_utf8_next(const unsigned char **pp)
{
    const unsigned char *p = *pp;
    uint32_t cp;
    if (p[0] < 0x80) {
        cp = p[0];
        p += 1;
    } else if (p[0] < 0xe0) {
        cp = (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
        p += 2;
    } else if (p[0] < 0xf0) {
        cp = (uint32_t)(p[0] & 0x0f) << 12 | (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
        p += 3;
    } else {
        cp = (uint32_t)(p[0] & 0x07) << 18 | (uint32_t)(p[1] & 0x3f) << 12 |
             (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
        p += 4;
    }
    *pp = p;
    return cp;
}

void jw_str_chars(jw_buf *b, const char *s)
{
    uint16_t units[1024];
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && n + 2 <= sizeof units / sizeof units[0]) {
        uint32_t cp = jw_utf8_next(&p);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            units[n++] = (uint16_t)(0xd800 + (cp >> 10));
            units[n++] = (uint16_t)(0xdc00 + (cp & 0x3ff));
        } else {
            units[n++] = (uint16_t)cp;
        }
    }
    jw_u8(b, JW_CHARS);
    jw_varint(b, n);
    for (size_t i = 0; i < n; i++)
        jw_varint(b, units[i]);
}

void jw_str_latin1(jw_buf *b, const char *s)
{
    unsigned char bytes[1024];
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && n < sizeof bytes) {
        uint32_t cp = jw_utf8_next(&p);
        if (cp > 0xff)
            jw_die("not Latin-1");
        bytes[n++] = (unsigned char)cp;
    }
    jw_u8(b, JW_LATIN1);
    jw_varint(b, n);
    jw_bytes(b, bytes, n);
}

void jw_str(jw_buf *b, int enc, const char *s)
{
    switch (enc) {
    case JW_NULL:
        jw_str_null(b);
        break;
    case JW_EMPTY:
        jw_str_empty(b);
        break;
    case JW_CHARS:
        jw_str_chars(b, s);
        break;
    case JW_LATIN1:
        jw_str_latin1(b, s);
        break;
    default:
        jw_str_utf8(b, s);
        break;
    }
}

/* ---- chunks, events, metadata, checkpoints ---- */

void jw_chunk_begin(jw_chunk *c, jw_buf *b, int minor, int64_t start_ns, int64_t start_ticks,
                    int64_t ticks_per_sec)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->start = b->len;
    c->minor = minor;
    c->start_ns = start_ns;
    c->start_ticks = start_ticks;
    c->ticks_per_sec = ticks_per_sec;
    c->meta_enc = JW_UTF8;
    jw_bytes(b, "FLR", 4);
    jw_be16(b, 2);
    jw_be16(b, (uint16_t)minor);
    for (int i = 0; i < 7; i++)
        jw_be64(b, 0); /* patched by jw_chunk_end */
    if (minor == 0) {
        jw_be32(b, 1); /* 2.0: capabilities, 1 = compressed integers */
    } else {
        jw_u8(b, 0); /* 2.1: file state (0 = finished), pad, u16 flags */
        jw_u8(b, 0);
        jw_be16(b, 1);
    }
}

static void jw_put64_at(jw_buf *b, size_t at, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        b->data[at + (size_t)i] = (uint8_t)v;
}

void jw_chunk_end(jw_chunk *c, int64_t duration_ns)
{
    size_t s = c->start;
    jw_put64_at(c->b, s + 8, c->b->len - s);
    jw_put64_at(c->b, s + 16, c->cp_off);
    jw_put64_at(c->b, s + 24, c->meta_off);
    jw_put64_at(c->b, s + 32, (uint64_t)c->start_ns);
    jw_put64_at(c->b, s + 40, (uint64_t)duration_ns);
    jw_put64_at(c->b, s + 48, (uint64_t)c->start_ticks);
    jw_put64_at(c->b, s + 56, (uint64_t)c->ticks_per_sec);
}

size_t jw_event_begin(jw_buf *b, uint64_t type)
{
    size_t start = b->len;
    jw_bytes(b, "\0\0\0\0\0", 5);
    jw_varint(b, type);
    return start;
}

void jw_event_end(jw_buf *b, size_t start)
{
    jw_patch5(b, start, b->len - start);
}

typedef struct jw_strtab {
    const char *s[512];
    size_t n;
} jw_strtab;

static uint64_t jw_intern(jw_strtab *t, const char *s)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->s[i], s))
            return i;
    if (t->n == sizeof t->s / sizeof t->s[0])
        jw_die("too many metadata strings");
    t->s[t->n] = s;
    return t->n++;
}

/* An element with attribute pairs (NULL-terminated key/value list). */
static void jw_element(jw_buf *b, jw_strtab *t, const char *name, const char *const *attrs,
                       uint64_t nchildren)
{
    jw_varint(b, jw_intern(t, name));
    size_t na = 0;
    while (attrs && attrs[2 * na])
        na++;
    jw_varint(b, na);
    for (size_t i = 0; i < na; i++) {
        jw_varint(b, jw_intern(t, attrs[2 * i]));
        jw_varint(b, jw_intern(t, attrs[2 * i + 1]));
    }
    jw_varint(b, nchildren);
}

static char jw_ids[512][24];

static void jw_tree(jw_buf *tree, jw_strtab *t, const jw_class *classes, size_t n)
{
    static const char *const region[] = {"gmtOffset", "0", "locale", "en_US", NULL};
    size_t ids = 0;
    jw_element(tree, t, "root", NULL, 2);
    jw_element(tree, t, "metadata", NULL, n);
    for (size_t i = 0; i < n; i++) {
        const jw_class *c = &classes[i];
        snprintf(jw_ids[ids], sizeof jw_ids[0], "%llu", (unsigned long long)c->id);
        const char *attrs[] = {
            "id", jw_ids[ids++], "name", c->name, c->super ? "superType" : NULL, c->super, NULL};
        jw_element(tree, t, "class", attrs, (uint64_t)c->nfields);
        for (int j = 0; j < c->nfields; j++) {
            const jw_field *f = &c->fields[j];
            snprintf(jw_ids[ids], sizeof jw_ids[0], "%llu", (unsigned long long)f->type);
            const char *fa[9] = {"name", f->name, "class", jw_ids[ids++]};
            int k = 4;
            if (f->cpool) {
                fa[k++] = "constantPool";
                fa[k++] = "true";
            }
            if (f->array) {
                fa[k++] = "dimension";
                fa[k++] = "1";
            }
            fa[k] = NULL;
            jw_element(tree, t, "field", fa, 0);
            if (ids >= 510)
                jw_die("too many ids");
        }
    }
    jw_element(tree, t, "region", region, 0);
}

void jw_metadata(jw_chunk *c, const jw_class *classes, size_t n)
{
    jw_strtab t = {.n = 0};
    jw_buf tree;
    jw_init(&tree);
    jw_tree(&tree, &t, classes, n);
    c->meta_off = c->b->len - c->start;
    size_t ev = jw_event_begin(c->b, 0);
    jw_varint(c->b, (uint64_t)c->start_ticks);
    jw_varint(c->b, 0);
    jw_varint(c->b, 1); /* metadata id */
    jw_varint(c->b, t.n);
    for (size_t i = 0; i < t.n; i++)
        jw_str(c->b, c->meta_enc, t.s[i]);
    jw_bytes(c->b, tree.data, tree.len);
    jw_event_end(c->b, ev);
    jw_free(&tree);
}

size_t jw_checkpoint_begin(jw_chunk *c, uint64_t npools)
{
    uint64_t here = c->b->len - c->start;
    size_t ev = jw_event_begin(c->b, 1);
    jw_varint(c->b, (uint64_t)c->start_ticks);
    jw_varint(c->b, 0);
    /* delta to the previous checkpoint (negative), 0 for the first */
    int64_t delta = c->cp_off ? (int64_t)c->cp_off - (int64_t)here : 0;
    c->delta_at = c->b->len;
    jw_varint_pad(c->b, (uint64_t)delta, 9); /* padded so tests can patch it */
    jw_u8(c->b, 0);                          /* type flags */
    jw_varint(c->b, npools);
    c->cp_off = here;
    return ev;
}

void jw_checkpoint_end(jw_chunk *c, size_t start)
{
    jw_event_end(c->b, start);
}

void jw_pool(jw_buf *b, uint64_t type, uint64_t count)
{
    jw_varint(b, type);
    jw_varint(b, count);
}

/* ---- the standard type system ---- */

#define F(n, t)                                                                                    \
    {                                                                                              \
        n, t, false, false                                                                         \
    }
#define P(n, t)                                                                                    \
    {                                                                                              \
        n, t, true, false                                                                          \
    }
#define A(n, t)                                                                                    \
    {                                                                                              \
        n, t, false, true                                                                          \
    }
#define PA(n, t)                                                                                   \
    {                                                                                              \
        n, t, true, true                                                                           \
    }

/* The value types: primitives, pools, inline structs. */
static size_t jw_std_types(int flavour, jw_class *out)
{
    bool j11 = flavour == JW_JDK11, fut = flavour == JW_FUTURE;
    size_t n = 0;
    static const struct {
        uint64_t id;
        const char *name;
    } prims[] = {{JW_BOOLEAN, "boolean"}, {JW_CHAR, "char"}, {JW_FLOAT, "float"},
                 {JW_DOUBLE, "double"},   {JW_BYTE, "byte"}, {JW_SHORT, "short"},
                 {JW_INT, "int"},         {JW_LONG, "long"}, {JW_STRING, "java.lang.String"}};
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        out[n++] = (jw_class){.id = prims[i].id, .name = prims[i].name};
    out[n++] =
        (jw_class){JW_CLASS,
                   "java.lang.Class",
                   NULL,
                   j11 ? 4 : 5,
                   {P("classLoader", JW_CLASSLOADER), P("name", JW_SYMBOL),
                    P("package", JW_PACKAGE), F("modifiers", JW_INT), F("hidden", JW_BOOLEAN)}};
    out[n++] = (jw_class){JW_THREAD,
                          "java.lang.Thread",
                          NULL,
                          fut ? 6 : 5,
                          {F("osName", JW_STRING), F("osThreadId", JW_LONG),
                           F("javaName", JW_STRING), F("javaThreadId", JW_LONG),
                           P("group", JW_THREADGROUP), F("virtual", JW_BOOLEAN)}};
    out[n++] = (jw_class){JW_CLASSLOADER,
                          "jdk.types.ClassLoader",
                          NULL,
                          2,
                          {P("type", JW_CLASS), P("name", JW_SYMBOL)}};
    out[n++] =
        (jw_class){JW_FRAMETYPE, "jdk.types.FrameType", NULL, 1, {F("description", JW_STRING)}};
    out[n++] = (jw_class){JW_THREADSTATE, "jdk.types.ThreadState", NULL, 1, {F("name", JW_STRING)}};
    out[n++] = (jw_class){JW_STACKTRACE,
                          "jdk.types.StackTrace",
                          NULL,
                          2,
                          {F("truncated", JW_BOOLEAN), A("frames", JW_STACKFRAME)}};
    out[n++] = (jw_class){JW_STACKFRAME,
                          "jdk.types.StackFrame",
                          NULL,
                          4,
                          {P("method", JW_METHOD), F("lineNumber", JW_INT),
                           F("bytecodeIndex", JW_INT), P("type", JW_FRAMETYPE)}};
    out[n++] = (jw_class){JW_METHOD,
                          "jdk.types.Method",
                          NULL,
                          5,
                          {P("type", JW_CLASS), P("name", JW_SYMBOL), P("descriptor", JW_SYMBOL),
                           F("modifiers", JW_INT), F("hidden", JW_BOOLEAN)}};
    out[n++] = (jw_class){JW_VSPACE,
                          "jdk.types.VirtualSpace",
                          NULL,
                          6,
                          {F("start", JW_LONG), F("committedEnd", JW_LONG), F("ratio", JW_FLOAT),
                           F("weight", JW_DOUBLE), F("label", JW_STRING), F("flag", JW_BOOLEAN)}};
    out[n++] = (jw_class){JW_PACKAGE, "jdk.types.Package", NULL, 1, {P("name", JW_SYMBOL)}};
    out[n++] = (jw_class){JW_SYMBOL, "jdk.types.Symbol", NULL, 1, {F("string", JW_STRING)}};
    out[n++] = (jw_class){JW_THREADGROUP,
                          "jdk.types.ThreadGroup",
                          NULL,
                          2,
                          {P("parent", JW_THREADGROUP), F("name", JW_STRING)}};
    return n;
}

/* The event types, appended after the value types. */
static size_t jw_std_events(int flavour, jw_class *out, size_t n)
{
    bool j11 = flavour == JW_JDK11, fut = flavour == JW_FUTURE;
    if (fut)
        out[n++] = (jw_class){JW_EXEC,
                              "jdk.ExecutionSample",
                              "jdk.jfr.Event",
                              9,
                              {F("startTime", JW_LONG), F("extraSpace", JW_VSPACE),
                               A("extraLongs", JW_LONG), P("sampledThread", JW_THREAD),
                               A("extraNames", JW_STRING), PA("extraRefs", JW_CLASS),
                               P("stackTrace", JW_STACKTRACE), P("state", JW_THREADSTATE),
                               F("extraTail", JW_DOUBLE)}};
    else
        out[n++] = (jw_class){JW_EXEC,
                              "jdk.ExecutionSample",
                              "jdk.jfr.Event",
                              4,
                              {F("startTime", JW_LONG), P("sampledThread", JW_THREAD),
                               P("stackTrace", JW_STACKTRACE), P("state", JW_THREADSTATE)}};
    out[n++] = (jw_class){JW_TLAB_IN,
                          "jdk.ObjectAllocationInNewTLAB",
                          "jdk.jfr.Event",
                          6,
                          {F("startTime", JW_LONG), P("eventThread", JW_THREAD),
                           P("stackTrace", JW_STACKTRACE), P("objectClass", JW_CLASS),
                           F("allocationSize", JW_LONG), F("tlabSize", JW_LONG)}};
    out[n++] = (jw_class){JW_TLAB_OUT,
                          "jdk.ObjectAllocationOutsideTLAB",
                          "jdk.jfr.Event",
                          5,
                          {F("startTime", JW_LONG), P("eventThread", JW_THREAD),
                           P("stackTrace", JW_STACKTRACE), P("objectClass", JW_CLASS),
                           F("allocationSize", JW_LONG)}};
    out[n++] =
        (jw_class){JW_MONITOR,
                   "jdk.JavaMonitorEnter",
                   "jdk.jfr.Event",
                   7,
                   {F("startTime", JW_LONG), F("duration", JW_LONG), P("eventThread", JW_THREAD),
                    P("stackTrace", JW_STACKTRACE), P("monitorClass", JW_CLASS),
                    P("previousOwner", JW_THREAD), F("address", JW_LONG)}};
    if (j11)
        out[n++] =
            (jw_class){JW_PARK,
                       "jdk.ThreadPark",
                       "jdk.jfr.Event",
                       7,
                       {F("startTime", JW_LONG), F("duration", JW_LONG),
                        P("eventThread", JW_THREAD), P("stackTrace", JW_STACKTRACE),
                        P("parkedClass", JW_CLASS), F("timeout", JW_LONG), F("address", JW_LONG)}};
    else
        out[n++] = (jw_class){JW_PARK,
                              "jdk.ThreadPark",
                              "jdk.jfr.Event",
                              8,
                              {F("startTime", JW_LONG), F("duration", JW_LONG),
                               P("eventThread", JW_THREAD), P("stackTrace", JW_STACKTRACE),
                               P("parkedClass", JW_CLASS), F("timeout", JW_LONG),
                               F("until", JW_LONG), F("address", JW_LONG)}};
    out[n++] =
        (jw_class){JW_SETTING,
                   "jdk.ActiveSetting",
                   "jdk.jfr.Event",
                   6,
                   {F("startTime", JW_LONG), F("duration", JW_LONG), P("eventThread", JW_THREAD),
                    F("id", JW_LONG), F("name", JW_STRING), F("value", JW_STRING)}};
    out[n++] = (jw_class){JW_WALL,
                          "profiler.WallClockSample",
                          "jdk.jfr.Event",
                          5,
                          {F("startTime", JW_LONG), P("sampledThread", JW_THREAD),
                           P("stackTrace", JW_STACKTRACE), P("state", JW_THREADSTATE),
                           F("samples", JW_INT)}};
    out[n++] = (jw_class){JW_ALLOC_SAMPLE,
                          "jdk.ObjectAllocationSample",
                          "jdk.jfr.Event",
                          5,
                          {F("startTime", JW_LONG), P("eventThread", JW_THREAD),
                           P("stackTrace", JW_STACKTRACE), P("objectClass", JW_CLASS),
                           F("weight", JW_LONG)}};
    out[n++] = (jw_class){JW_OTHER,
                          "jdk.GCPhaseParallel",
                          "jdk.jfr.Event",
                          7,
                          {F("startTime", JW_LONG), F("space", JW_VSPACE), A("values", JW_LONG),
                           A("names", JW_STRING), A("blob", JW_BYTE), F("d", JW_DOUBLE),
                           F("f", JW_FLOAT)}};
    return n;
}

size_t jw_std_classes(int flavour, jw_class *out)
{
    return jw_std_events(flavour, out, jw_std_types(flavour, out));
}

void jw_std_metadata(jw_chunk *c, int flavour)
{
    jw_class classes[40];
    size_t n = jw_std_classes(flavour, classes);
    jw_metadata(c, classes, n);
}

void jw_symbol(jw_buf *b, uint64_t key, int enc, const char *s)
{
    jw_varint(b, key);
    jw_str(b, enc, s);
}

void jw_class_entry(jw_buf *b, int flavour, uint64_t key, uint64_t name_sym)
{
    jw_varint(b, key);
    jw_varint(b, 0); /* class loader: null */
    jw_varint(b, name_sym);
    jw_varint(b, 0); /* package: null */
    jw_varint(b, 1); /* modifiers */
    if (flavour != JW_JDK11)
        jw_u8(b, 0); /* hidden */
}

void jw_method(jw_buf *b, int flavour, uint64_t key, uint64_t class_key, uint64_t name_sym)
{
    (void)flavour;
    jw_varint(b, key);
    jw_varint(b, class_key);
    jw_varint(b, name_sym);
    jw_varint(b, 0); /* descriptor: null */
    jw_varint(b, 9);
    jw_u8(b, 0);
}

void jw_frametype(jw_buf *b, uint64_t key, const char *desc)
{
    jw_varint(b, key);
    jw_str_utf8(b, desc);
}

void jw_thread(jw_buf *b, int flavour, uint64_t key, const char *os_name, uint64_t os_tid,
               const char *java_name)
{
    jw_varint(b, key);
    if (os_name)
        jw_str_utf8(b, os_name);
    else
        jw_str_null(b);
    jw_varint(b, os_tid);
    if (!java_name)
        jw_str_null(b);
    else if (!*java_name)
        jw_str_empty(b);
    else
        jw_str_chars(b, java_name); /* the JDK writes Java strings as UTF-16 at times */
    jw_varint(b, key + 1000);
    jw_varint(b, 0); /* group: null */
    if (flavour == JW_FUTURE)
        jw_u8(b, 0);
}

void jw_stack(jw_buf *b, int flavour, uint64_t key, bool truncated, size_t n,
              const uint64_t *methods, const uint64_t *types)
{
    (void)flavour;
    jw_varint(b, key);
    jw_u8(b, truncated);
    jw_varint(b, n);
    for (size_t i = 0; i < n; i++) {
        jw_varint(b, methods[i]);
        jw_varint(b, 10 + i);   /* line */
        jw_varint_pad(b, i, 4); /* bytecode index, padded like HotSpot does */
        jw_varint(b, types[i]);
    }
}

static void jw_ev_space(jw_buf *b)
{
    jw_varint(b, 0x7f0000000000ULL);
    jw_varint(b, 0x7f0000100000ULL);
    jw_be32(b, 0x3f800000);            /* 1.0f */
    jw_be64(b, 0x4000000000000000ULL); /* 2.0 */
    jw_str_latin1(b, "caf\xc3\xa9");
    jw_u8(b, 1);
}

void jw_ev_exec(jw_buf *b, int flavour, uint64_t ticks, uint64_t thread, uint64_t stack)
{
    size_t ev = jw_event_begin(b, JW_EXEC);
    jw_varint(b, ticks);
    if (flavour == JW_FUTURE) {
        jw_ev_space(b);
        jw_varint(b, 3); /* extraLongs */
        jw_varint(b, 1);
        jw_varint_pad(b, 2, 9);
        jw_varint(b, UINT64_MAX);
        jw_varint(b, thread);
        jw_varint(b, 3); /* extraNames: every encoding */
        jw_str_null(b);
        jw_str_chars(b, "x\xf0\x9f\x98\x80y");
        jw_str_pool(b, 1);
        jw_varint(b, 2); /* extraRefs */
        jw_varint(b, 1);
        jw_varint(b, 2);
        jw_varint(b, stack);
        jw_varint(b, 1);
        jw_be64(b, 0);
    } else {
        jw_varint(b, thread);
        jw_varint(b, stack);
        jw_varint(b, 1);
    }
    jw_event_end(b, ev);
}

void jw_ev_wall(jw_buf *b, uint64_t ticks, uint64_t thread, uint64_t stack, uint64_t samples)
{
    size_t ev = jw_event_begin(b, JW_WALL);
    jw_varint(b, ticks);
    jw_varint(b, thread);
    jw_varint(b, stack);
    jw_varint(b, 1);
    jw_varint(b, samples);
    jw_event_end(b, ev);
}

void jw_ev_alloc_sample(jw_buf *b, uint64_t ticks, uint64_t thread, uint64_t stack, uint64_t weight)
{
    size_t ev = jw_event_begin(b, JW_ALLOC_SAMPLE);
    jw_varint(b, ticks);
    jw_varint(b, thread);
    jw_varint(b, stack);
    jw_varint(b, 1);
    jw_varint(b, weight);
    jw_event_end(b, ev);
}

void jw_ev_tlab(jw_buf *b, bool inside, uint64_t ticks, uint64_t thread, uint64_t stack,
                uint64_t alloc_size, uint64_t tlab_size)
{
    size_t ev = jw_event_begin(b, inside ? JW_TLAB_IN : JW_TLAB_OUT);
    jw_varint(b, ticks);
    jw_varint(b, thread);
    jw_varint(b, stack);
    jw_varint(b, 2);
    jw_varint(b, alloc_size);
    if (inside)
        jw_varint(b, tlab_size);
    jw_event_end(b, ev);
}

void jw_ev_lock(jw_buf *b, int flavour, bool park, uint64_t ticks, uint64_t dur_ticks,
                uint64_t thread, uint64_t stack)
{
    size_t ev = jw_event_begin(b, park ? JW_PARK : JW_MONITOR);
    jw_varint(b, ticks);
    jw_varint(b, dur_ticks);
    jw_varint(b, thread);
    jw_varint(b, stack);
    jw_varint(b, 1);
    if (park) {
        jw_varint(b, 0); /* timeout */
        if (flavour != JW_JDK11)
            jw_varint(b, 0); /* until */
    } else {
        jw_varint(b, 2); /* previous owner */
    }
    jw_varint(b, 0xdeadbeef);
    jw_event_end(b, ev);
}

void jw_ev_setting(jw_buf *b, uint64_t ticks, uint64_t id, const char *name, const char *value)
{
    size_t ev = jw_event_begin(b, JW_SETTING);
    jw_varint(b, ticks);
    jw_varint(b, 0);
    jw_varint(b, 1);
    jw_varint(b, id);
    jw_str_utf8(b, name);
    jw_str_utf8(b, value);
    jw_event_end(b, ev);
}

void jw_ev_other(jw_buf *b, uint64_t ticks)
{
    size_t ev = jw_event_begin(b, JW_OTHER);
    jw_varint(b, ticks);
    jw_ev_space(b);
    jw_varint(b, 2);
    jw_varint(b, 5);
    jw_varint(b, 6);
    jw_varint(b, 2);
    jw_str_utf8(b, "a");
    jw_str_empty(b);
    jw_varint(b, 3);
    jw_bytes(b, "\x01\x02\x03", 3);
    jw_be64(b, 0);
    jw_be32(b, 0);
    jw_event_end(b, ev);
}

/* The standard pools: frame types, threads, stacks (before the methods and
 * classes they refer to, on purpose), methods, classes, symbols, strings. */
void jw_std_pools(jw_chunk *c, int flavour)
{
    jw_buf *b = c->b;
    size_t cp = jw_checkpoint_begin(c, 7);
    jw_pool(b, JW_FRAMETYPE, 3);
    jw_frametype(b, 1, "Interpreted");
    jw_frametype(b, 2, "JIT compiled");
    jw_frametype(b, 3, "Inlined");
    jw_pool(b, JW_THREAD, 2);
    jw_thread(b, flavour, 1, "main", 100, "main");
    jw_thread(b, flavour, 2, "worker-os", 101, "");
    jw_pool(b, JW_STACKTRACE, 3);
    const uint64_t m1[] = {3, 2, 1}, t1[] = {2, 1, 1};
    const uint64_t m2[] = {2, 1}, t2[] = {3, 1};
    const uint64_t m3[] = {1}, t3[] = {1};
    jw_stack(b, flavour, 1, false, 3, m1, t1);
    jw_stack(b, flavour, 2, false, 2, m2, t2);
    jw_stack(b, flavour, 3, true, 1, m3, t3);
    jw_pool(b, JW_METHOD, 3);
    jw_method(b, flavour, 1, 1, 3);
    jw_method(b, flavour, 2, 1, 4);
    jw_method(b, flavour, 3, 2, 5);
    jw_pool(b, JW_CLASS, 2);
    jw_class_entry(b, flavour, 1, 1);
    jw_class_entry(b, flavour, 2, 2);
    jw_pool(b, JW_SYMBOL, 5);
    jw_symbol(b, 1, JW_UTF8, "com/example/App");
    jw_symbol(b, 2, JW_LATIN1, "com/example/Util");
    jw_symbol(b, 3, JW_CHARS, "main");
    jw_varint(b, 4); /* "work" through the string pool */
    jw_str_pool(b, 7);
    jw_symbol(b, 5, JW_UTF8, "leaf");
    jw_pool(b, JW_STRING, 1);
    jw_symbol(b, 7, JW_UTF8, "work");
    jw_checkpoint_end(c, cp);
}

size_t jw_std_chunk(jw_buf *b, int minor, int flavour, int64_t start_ns, size_t n)
{
    jw_chunk c;
    jw_chunk_begin(&c, b, minor, start_ns, 1000, 1000000000);
    jw_std_metadata(&c, flavour);
    jw_ev_setting(b, 1000, JW_EXEC, "period", "20 ms");
    for (size_t i = 0; i < n; i++)
        jw_ev_exec(b, flavour, 1000 + i * 1000000, 1 + i % 2, 1 + i % 3);
    jw_ev_other(b, 2000);
    jw_ev_tlab(b, true, 3000, 1, 1, 100, 4096);
    jw_ev_tlab(b, false, 3000, 1, 2, 70000, 0);
    jw_ev_alloc_sample(b, 3000, 2, 1, 512);
    jw_ev_lock(b, flavour, false, 4000, 5000000, 1, 2);
    jw_ev_lock(b, flavour, true, 4000, 7000000, 2, 1);
    jw_ev_wall(b, 5000, 1, 3, 3);
    jw_std_pools(&c, flavour);
    jw_chunk_end(&c, 1000000000);
    return c.start;
}
