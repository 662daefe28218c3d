#include "server/auth.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/xalloc.h"

struct auth_token {
    char *secret;
    size_t len;
    auth_role role;
    bool all;
    char **ns;
    size_t nns;
};

struct auth_table {
    auth_token *tokens;
    size_t n, cap;
};

void auth_free(auth_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++) {
        /* wipe the secret before giving the memory back */
        memset(t->tokens[i].secret, 0, t->tokens[i].len);
        free(t->tokens[i].secret);
        for (size_t k = 0; k < t->tokens[i].nns; k++)
            free(t->tokens[i].ns[k]);
        free(t->tokens[i].ns);
    }
    free(t->tokens);
    free(t);
}

size_t auth_count(const auth_table *t)
{
    return t ? t->n : 0;
}

static bool auth_parse_role(const char *s, size_t n, auth_role *r)
{
    if (n == 6 && !memcmp(s, "ingest", 6))
        *r = AUTH_INGEST;
    else if (n == 4 && !memcmp(s, "read", 4))
        *r = AUTH_READ;
    else if (n == 5 && !memcmp(s, "admin", 5))
        *r = AUTH_ADMIN;
    else
        return false;
    return true;
}

/* Splits a line into up to 4 whitespace-separated fields. */
static size_t auth_fields(const char *s, size_t len, const char **f, size_t *fl)
{
    size_t n = 0, i = 0;
    while (i < len && n < 4) {
        while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i >= len)
            break;
        size_t st = i;
        while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            i++;
        f[n] = s + st;
        fl[n++] = i - st;
    }
    return n;
}

static jp_err auth_add_scope(auth_token *tok, const char *s, size_t n, const char *name,
                             size_t line, jp_error *err)
{
    if (n == 1 && s[0] == '*') {
        tok->all = true;
        return JP_OK;
    }
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != ',')
            continue;
        if (i == start)
            return jp_error_set(err, JP_ERR_FORMAT, "%s:%zu: empty namespace in scope", name, line);
        tok->ns = jp_xreallocarray(tok->ns, tok->nns + 1, sizeof *tok->ns);
        tok->ns[tok->nns++] = jp_xstrndup(s + start, i - start);
        start = i + 1;
    }
    return JP_OK;
}

static jp_err auth_line(auth_table *t, const char *s, size_t len, const char *name, size_t line,
                        jp_error *err)
{
    const char *hash = memchr(s, '#', len);
    if (hash)
        len = (size_t)(hash - s);
    const char *f[4];
    size_t fl[4];
    size_t n = auth_fields(s, len, f, fl);
    if (n == 0)
        return JP_OK;
    if (n != 3)
        return jp_error_set(err, JP_ERR_FORMAT,
                            "%s:%zu: expected `TOKEN ROLE SCOPE` (3 fields), found %zu", name, line,
                            n);
    if (fl[0] < 16 || fl[0] > AUTH_TOKEN_MAX)
        return jp_error_set(err, JP_ERR_FORMAT, "%s:%zu: a token must be 16..%d characters", name,
                            line, AUTH_TOKEN_MAX);
    auth_role role;
    if (!auth_parse_role(f[1], fl[1], &role))
        return jp_error_set(err, JP_ERR_FORMAT, "%s:%zu: role must be ingest, read or admin", name,
                            line);
    if (t->n >= AUTH_TOKENS_MAX)
        return jp_error_set(err, JP_ERR_LIMIT, "%s: more than %d tokens", name, AUTH_TOKENS_MAX);
    t->tokens = jp_xgrow(t->tokens, &t->cap, t->n + 1, sizeof *t->tokens);
    auth_token *tok = &t->tokens[t->n++];
    memset(tok, 0, sizeof *tok);
    tok->secret = jp_xstrndup(f[0], fl[0]);
    tok->len = fl[0];
    tok->role = role;
    return auth_add_scope(tok, f[2], fl[2], name, line, err);
}

jp_err auth_parse(const char *text, size_t len, const char *name, auth_table **out, jp_error *err)
{
    auth_table *t = jp_xcalloc(1, sizeof *t);
    size_t line = 0, start = 0;
    jp_err rc = JP_OK;
    for (size_t i = 0; i <= len && !rc; i++) {
        if (i < len && text[i] != '\n')
            continue;
        line++;
        rc = auth_line(t, text + start, i - start, name, line, err);
        start = i + 1;
    }
    if (!rc && t->n == 0)
        rc = jp_error_set(err, JP_ERR_FORMAT, "%s: no tokens", name);
    if (rc) {
        auth_free(t);
        t = NULL;
    }
    *out = t;
    return rc;
}

jp_err auth_load(const char *path, auth_table **out, jp_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return jp_error_set(err, JP_ERR_IO, "%s: %s", path, strerror(errno));
    jp_strbuf b;
    jp_strbuf_init(&b, 16u << 20);
    char chunk[4096];
    size_t n;
    jp_err rc = JP_OK;
    while (!rc && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        if (jp_strbuf_append(&b, chunk, n))
            rc = jp_error_set(err, JP_ERR_LIMIT, "%s: larger than 16 MiB", path);
    fclose(f);
    if (!rc)
        rc = auth_parse(b.data ? b.data : "", b.len, path, out, err);
    if (b.data)
        memset(b.data, 0, b.len);
    jp_strbuf_cleanup(&b);
    return rc;
}

/* Constant time in the stored token's length and in where the bytes differ. */
static bool auth_equal(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < alen; i++)
        diff |= (unsigned char)(a[i] ^ (i < blen ? b[i] : 0));
    return diff == 0;
}

const auth_token *auth_lookup(const auth_table *t, const char *presented, size_t len)
{
    const auth_token *found = NULL;
    if (!t || len == 0 || len > AUTH_TOKEN_MAX)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        if (auth_equal(t->tokens[i].secret, t->tokens[i].len, presented, len) && !found)
            found = &t->tokens[i];
    return found;
}

bool auth_has_role(const auth_token *tok, auth_role role)
{
    return tok && (tok->role == role || tok->role == AUTH_ADMIN);
}

bool auth_in_scope(const auth_token *tok, const char *ns)
{
    if (!tok)
        return false;
    if (tok->all)
        return true;
    for (size_t i = 0; ns && i < tok->nns; i++)
        if (!strcmp(tok->ns[i], ns))
            return true;
    return false;
}

bool auth_all_namespaces(const auth_token *tok)
{
    return tok && tok->all;
}

const char *auth_role_name(const auth_token *tok)
{
    return !tok                      ? "none"
           : tok->role == AUTH_ADMIN ? "admin"
           : tok->role == AUTH_READ  ? "read"
                                     : "ingest";
}
