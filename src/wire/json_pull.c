#include "wire/json_pull.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

enum { E_VALUE, E_VALUE_OR_END, E_KEY, E_KEY_OR_END, E_COLON, E_COMMA_OR_END };

void jpull_init(jpull *p, const char *buf, size_t len)
{
    memset(p, 0, sizeof *p);
    p->buf = buf;
    p->len = len;
    p->expect = E_VALUE;
    jp_strbuf_init(&p->scratch, 0);
}

void jpull_cleanup(jpull *p)
{
    jp_strbuf_cleanup(&p->scratch);
}

static jpull_tok jpull_fail(jpull *p, const char *what)
{
    snprintf(p->err, sizeof p->err, "invalid JSON at byte %zu: %s", p->pos, what);
    p->pos = p->len;
    p->done = true;
    p->expect = -1;
    return JPULL_ERROR;
}

static void jpull_ws(jpull *p)
{
    while (p->pos < p->len) {
        char c = p->buf[p->pos];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
            break;
        p->pos++;
    }
}

static void jpull_after_value(jpull *p)
{
    if (p->depth == 0)
        p->done = true;
    else
        p->expect = E_COMMA_OR_END;
}

static void jpull_put_utf8(jp_strbuf *b, unsigned c)
{
    char o[4];
    size_t n;
    if (c < 0x80)
        o[0] = (char)c, n = 1;
    else if (c < 0x800)
        o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f)), n = 2;
    else if (c < 0x10000)
        o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | ((c >> 6) & 0x3f)),
        o[2] = (char)(0x80 | (c & 0x3f)), n = 3;
    else
        o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | ((c >> 12) & 0x3f)),
        o[2] = (char)(0x80 | ((c >> 6) & 0x3f)), o[3] = (char)(0x80 | (c & 0x3f)), n = 4;
    jp_strbuf_append(b, o, n);
}

static bool jpull_hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return false;
    }
    *out = v;
    return true;
}

/* One escape after a backslash at p->pos; appends its UTF-8 to scratch. */
static bool jpull_escape(jpull *p)
{
    if (p->pos >= p->len)
        return false;
    char c = p->buf[p->pos++];
    const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
    for (const char *m = map; *m; m += 2)
        if (*m == c) {
            jp_strbuf_putc(&p->scratch, m[1]);
            return true;
        }
    unsigned u, lo;
    if (c != 'u' || p->len - p->pos < 4 || !jpull_hex4(p->buf + p->pos, &u))
        return false;
    p->pos += 4;
    if (u >= 0xdc00 && u <= 0xdfff)
        return false;
    if (u >= 0xd800 && u <= 0xdbff) {
        if (p->len - p->pos < 6 || p->buf[p->pos] != '\\' || p->buf[p->pos + 1] != 'u' ||
            !jpull_hex4(p->buf + p->pos + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
            return false;
        p->pos += 6;
        u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (u == 0)
        return false; /* NUL inside a string: refused, like jansson does */
    jpull_put_utf8(&p->scratch, u);
    return true;
}

/* A string starting at the opening quote. */
static bool jpull_string(jpull *p)
{
    size_t start = ++p->pos;
    bool escaped = false;
    while (p->pos < p->len) {
        unsigned char c = (unsigned char)p->buf[p->pos];
        if (c == '"') {
            if (escaped) {
                jp_strbuf_append(&p->scratch, p->buf + start, p->pos - start);
                p->str = jp_strbuf_str(&p->scratch);
                p->slen = p->scratch.len;
            } else {
                p->str = p->buf + start;
                p->slen = p->pos - start;
            }
            p->pos++;
            return true;
        }
        if (c < 0x20)
            return false;
        if (c == '\\') {
            if (!escaped) {
                jp_strbuf_reset(&p->scratch);
                escaped = true;
            }
            jp_strbuf_append(&p->scratch, p->buf + start, p->pos - start);
            p->pos++;
            if (!jpull_escape(p))
                return false;
            start = p->pos;
            continue;
        }
        size_t n =
            c < 0x80 ? 1 : jp_utf8_len((const unsigned char *)p->buf + p->pos, p->len - p->pos);
        if (!n)
            return false;
        p->pos += n;
    }
    return false;
}

static jpull_tok jpull_number(jpull *p)
{
    size_t start = p->pos;
    bool neg = false, real = false, overflow = false;
    uint64_t v = 0;
    if (p->buf[p->pos] == '-')
        neg = true, p->pos++;
    if (p->pos >= p->len || p->buf[p->pos] < '0' || p->buf[p->pos] > '9')
        return jpull_fail(p, "bad number");
    if (p->buf[p->pos] == '0' && p->pos + 1 < p->len && p->buf[p->pos + 1] >= '0' &&
        p->buf[p->pos + 1] <= '9')
        return jpull_fail(p, "leading zero in a number");
    while (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9') {
        unsigned dgt = (unsigned)(p->buf[p->pos++] - '0');
        if (v > (UINT64_MAX - dgt) / 10)
            overflow = true;
        else
            v = v * 10 + dgt;
    }
    if (p->pos < p->len && p->buf[p->pos] == '.') {
        real = true;
        p->pos++;
        if (p->pos >= p->len || p->buf[p->pos] < '0' || p->buf[p->pos] > '9')
            return jpull_fail(p, "bad fraction");
        while (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9')
            p->pos++;
    }
    if (p->pos < p->len && (p->buf[p->pos] == 'e' || p->buf[p->pos] == 'E')) {
        real = true;
        p->pos++;
        if (p->pos < p->len && (p->buf[p->pos] == '+' || p->buf[p->pos] == '-'))
            p->pos++;
        if (p->pos >= p->len || p->buf[p->pos] < '0' || p->buf[p->pos] > '9')
            return jpull_fail(p, "bad exponent");
        while (p->pos < p->len && p->buf[p->pos] >= '0' && p->buf[p->pos] <= '9')
            p->pos++;
    }
    if (!real && !overflow && v <= (uint64_t)INT64_MAX + neg) {
        p->i = neg ? (int64_t)(0 - v) : (int64_t)v;
        jpull_after_value(p);
        return JPULL_INT;
    }
    char tmp[64];
    size_t n = p->pos - start;
    if (n >= sizeof tmp)
        return jpull_fail(p, "number too long");
    memcpy(tmp, p->buf + start, n);
    tmp[n] = '\0';
    p->d = strtod(tmp, NULL);
    jpull_after_value(p);
    return JPULL_REAL;
}

static jpull_tok jpull_literal(jpull *p, const char *word, jpull_tok t)
{
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->buf + p->pos, word, n) != 0)
        return jpull_fail(p, "unexpected character");
    p->pos += n;
    jpull_after_value(p);
    return t;
}

static jpull_tok jpull_value(jpull *p)
{
    char c = p->buf[p->pos];
    p->tok_start = p->pos;
    switch (c) {
    case '{':
    case '[':
        if (p->depth >= JPULL_MAX_DEPTH)
            return jpull_fail(p, "nested too deeply");
        p->stack[p->depth++] = c == '{' ? 'o' : 'a';
        p->pos++;
        p->expect = c == '{' ? E_KEY_OR_END : E_VALUE_OR_END;
        return c == '{' ? JPULL_OBJ_BEGIN : JPULL_ARR_BEGIN;
    case '"':
        if (!jpull_string(p))
            return jpull_fail(p, "bad string (control character, escape or UTF-8)");
        jpull_after_value(p);
        return JPULL_STRING;
    case 't':
        return jpull_literal(p, "true", JPULL_TRUE);
    case 'f':
        return jpull_literal(p, "false", JPULL_FALSE);
    case 'n':
        return jpull_literal(p, "null", JPULL_NULL);
    default:
        if (c == '-' || (c >= '0' && c <= '9'))
            return jpull_number(p);
        return jpull_fail(p, "unexpected character");
    }
}

static jpull_tok jpull_close(jpull *p, char c)
{
    char want = c == '}' ? 'o' : 'a';
    if (!p->depth || p->stack[p->depth - 1] != want)
        return jpull_fail(p, "mismatched bracket");
    p->depth--;
    p->pos++;
    jpull_after_value(p);
    return c == '}' ? JPULL_OBJ_END : JPULL_ARR_END;
}

jpull_tok jpull_next(jpull *p)
{
    for (;;) {
        jpull_ws(p);
        if (p->expect < 0)
            return JPULL_ERROR;
        if (p->done)
            return p->pos == p->len ? JPULL_END : jpull_fail(p, "data after the document");
        if (p->pos >= p->len)
            return jpull_fail(p, "unexpected end of input");
        char c = p->buf[p->pos];
        switch (p->expect) {
        case E_COLON:
            if (c != ':')
                return jpull_fail(p, "expected ':'");
            p->pos++;
            p->expect = E_VALUE;
            continue;
        case E_COMMA_OR_END:
            if (c == ',') {
                p->pos++;
                p->expect = p->stack[p->depth - 1] == 'o' ? E_KEY : E_VALUE;
                continue;
            }
            if (c == '}' || c == ']')
                return jpull_close(p, c);
            return jpull_fail(p, "expected ',' or a closing bracket");
        case E_KEY_OR_END:
        case E_KEY:
            if (c == '}' && p->expect == E_KEY_OR_END)
                return jpull_close(p, c);
            if (c != '"')
                return jpull_fail(p, "expected an object key");
            if (!jpull_string(p))
                return jpull_fail(p, "bad key string");
            p->expect = E_COLON;
            return JPULL_KEY;
        case E_VALUE_OR_END:
            if (c == ']')
                return jpull_close(p, c);
            return jpull_value(p);
        default:
            return jpull_value(p);
        }
    }
}

bool jpull_skip(jpull *p, jpull_tok t)
{
    if (t == JPULL_ERROR)
        return false;
    if (t != JPULL_OBJ_BEGIN && t != JPULL_ARR_BEGIN)
        return true;
    int d = 1;
    while (d > 0) {
        jpull_tok x = jpull_next(p);
        if (x == JPULL_ERROR || x == JPULL_END)
            return false;
        if (x == JPULL_OBJ_BEGIN || x == JPULL_ARR_BEGIN)
            d++;
        else if (x == JPULL_OBJ_END || x == JPULL_ARR_END)
            d--;
    }
    return true;
}

bool jpull_capture(jpull *p, jpull_tok t, size_t *start, size_t *end)
{
    *start = p->tok_start;
    if (!jpull_skip(p, t))
        return false;
    *end = p->pos;
    return true;
}
