/* multipart.c - multipart/form-data (see multipart.h). */
#include "wire/multipart.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A header parameter `key=value` or `key="value"` in h[0..n). */
static bool mp_param(const char *h, size_t n, const char *key, const char **v, size_t *vlen)
{
    size_t kl = strlen(key);
    for (size_t i = 0; i + kl < n; i++) {
        if ((i && h[i - 1] != ';' && h[i - 1] != ' ' && h[i - 1] != '\t') ||
            strncasecmp(h + i, key, kl) || h[i + kl] != '=')
            continue;
        const char *p = h + i + kl + 1, *end = h + n;
        if (p < end && *p == '"') {
            const char *q = memchr(p + 1, '"', (size_t)(end - p - 1));
            if (!q)
                return false;
            *v = p + 1;
            *vlen = (size_t)(q - p - 1);
            return true;
        }
        const char *q = p;
        while (q < end && *q != ';' && *q != ' ' && *q != '\t' && *q != '\r')
            q++;
        *v = p;
        *vlen = (size_t)(q - p);
        return true;
    }
    return false;
}

jp_err jp_multipart_boundary(const char *content_type, char *out, size_t outlen, jp_error *err)
{
    if (!content_type || strncasecmp(content_type, "multipart/form-data", 19))
        return jp_error_set(err, JP_ERR_NOT_FOUND, "not multipart/form-data");
    const char *v;
    size_t n;
    if (!mp_param(content_type, strlen(content_type), "boundary", &v, &n) || !n ||
        n > JP_MULTIPART_BOUNDARY_MAX || n + 1 > outlen)
        return jp_error_set(err, JP_ERR_FORMAT,
                            "multipart/form-data without a boundary of 1 to 70 characters");
    memcpy(out, v, n);
    out[n] = '\0';
    return JP_OK;
}

/* Reads one part's headers at body[*pos..) up to the blank line. */
static jp_err mp_headers(const uint8_t *body, size_t len, size_t *pos, jp_mp_part *part,
                         jp_error *err)
{
    size_t start = *pos;
    for (;;) {
        const uint8_t *eol = memmem(body + *pos, len - *pos, "\r\n", 2);
        if (!eol || (size_t)(eol - body) - start > 8192)
            return jp_error_set(err, JP_ERR_FORMAT,
                                "multipart @%zu: part headers without an end within 8 KiB", start);
        const char *h = (const char *)body + *pos;
        size_t n = (size_t)((const char *)eol - h);
        *pos += n + 2;
        if (!n)
            return JP_OK;
        if (n > 20 && !strncasecmp(h, "Content-Disposition:", 20)) {
            const char *v;
            size_t vl;
            if (mp_param(h + 20, n - 20, "name", &v, &vl)) {
                part->name = v;
                part->name_len = vl;
            }
        } else if (n > 13 && !strncasecmp(h, "Content-Type:", 13)) {
            const char *v = h + 13;
            while (v < h + n && (*v == ' ' || *v == '\t'))
                v++;
            part->ctype = v;
            part->ctype_len = (size_t)(h + n - v);
        }
    }
}

jp_err jp_multipart_parse(const uint8_t *body, size_t len, const char *boundary, jp_mp_part *parts,
                          size_t max_parts, size_t *nparts, jp_error *err)
{
    char delim[JP_MULTIPART_BOUNDARY_MAX + 5];
    size_t bl = strlen(boundary);
    if (!bl || bl > JP_MULTIPART_BOUNDARY_MAX)
        return jp_error_set(err, JP_ERR_FORMAT, "multipart: bad boundary");
    snprintf(delim, sizeof delim, "\r\n--%s", boundary);
    size_t dl = bl + 4;
    *nparts = 0;
    /* the first delimiter may open the body without the CRLF */
    size_t pos;
    if (len >= dl - 2 && !memcmp(body, delim + 2, dl - 2)) {
        pos = dl - 2;
    } else {
        const uint8_t *first = memmem(body, len, delim, dl);
        if (!first)
            return jp_error_set(err, JP_ERR_FORMAT, "multipart: no boundary \"%s\" in the body",
                                boundary);
        pos = (size_t)(first - body) + dl;
    }
    for (;;) {
        if (len - pos >= 2 && !memcmp(body + pos, "--", 2))
            return JP_OK; /* the close delimiter */
        if (len - pos < 2 || memcmp(body + pos, "\r\n", 2))
            return jp_error_set(err, JP_ERR_FORMAT, "multipart @%zu: a boundary not ended by CRLF",
                                pos);
        pos += 2;
        if (*nparts >= max_parts)
            return jp_error_set(err, JP_ERR_LIMIT, "multipart: more than %zu parts", max_parts);
        jp_mp_part *p = &parts[*nparts];
        memset(p, 0, sizeof *p);
        p->name = "";
        jp_err rc = mp_headers(body, len, &pos, p, err);
        if (rc)
            return rc;
        const uint8_t *end = memmem(body + pos, len - pos, delim, dl);
        if (!end)
            return jp_error_set(err, JP_ERR_FORMAT,
                                "multipart @%zu: part %zu does not end with the boundary", pos,
                                *nparts);
        p->data = body + pos;
        p->len = (size_t)(end - p->data);
        (*nparts)++;
        pos = (size_t)(end - body) + dl;
    }
}

const jp_mp_part *jp_multipart_find(const jp_mp_part *parts, size_t n, const char *name)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i < n; i++)
        if (parts[i].name_len == nl && !memcmp(parts[i].name, name, nl))
            return &parts[i];
    return NULL;
}
