#include "agent/k8s_conn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base64.h"
#include "base/xalloc.h"

#define YAML_LINES_MAX 100000
#define YAML_DEPTH_MAX 32

void agent_k8s_conn_cleanup(agent_k8s_conn *c)
{
    free(c->server);
    free(c->token);
    free(c->token_file);
    free(c->ca);
    free(c->ca_file);
    free(c->cert);
    free(c->key);
    free(c->cert_file);
    free(c->key_file);
    free(c->source);
    memset(c, 0, sizeof *c);
}

/* Reads a whole small file (heap, NUL-terminated). */
static jp_err slurp(const char *path, size_t cap, char **out, size_t *len, jp_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return jp_error_set(err, JP_ERR_IO, "%s: %s", path, strerror(errno));
    char *buf = jp_xmalloc(cap + 1);
    size_t n = 0;
    jp_err rc = JP_OK;
    for (;;) {
        ssize_t r = read(fd, buf + n, cap + 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = jp_error_set(err, JP_ERR_IO, "%s: %s", path, strerror(errno));
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > cap) {
            rc = jp_error_set(err, JP_ERR_LIMIT, "%s: larger than %zu bytes", path, cap);
            break;
        }
    }
    close(fd);
    if (rc != JP_OK) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return JP_OK;
}

jp_err agent_k8s_conn_incluster(agent_k8s_conn *c, const char *sa_dir, jp_error *err)
{
    memset(c, 0, sizeof *c);
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host)
        return jp_error_set(err, JP_ERR_USAGE,
                            "not in a cluster (KUBERNETES_SERVICE_HOST is not set): use "
                            "--kubeconfig FILE or --mode host");
    if (!sa_dir)
        sa_dir = AGENT_SA_DIR;
    char path[512];
    size_t n = strlen(host) + 32;
    c->server = jp_xmalloc(n);
    /* an IPv6 service address needs brackets in a URL */
    snprintf(c->server, n, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
             port && *port ? port : "443");
    snprintf(path, sizeof path, "%s/token", sa_dir);
    if (access(path, R_OK) != 0) {
        jp_err rc = jp_error_set(err, JP_ERR_PERMISSION, "%s: %s (is a service account mounted?)",
                                 path, strerror(errno));
        agent_k8s_conn_cleanup(c);
        return rc;
    }
    c->token_file = jp_xstrdup(path);
    snprintf(path, sizeof path, "%s/ca.crt", sa_dir);
    c->ca_file = jp_xstrdup(path);
    c->source = jp_xstrdup("in-cluster service account");
    return JP_OK;
}

/* ---- the YAML subset ---- */

typedef struct yline {
    int indent;
    char *text; /* content, comment stripped, trailing spaces trimmed */
    unsigned no;
} yline;

typedef struct yparser {
    yline *lines;
    size_t n, i;
    jp_error *err;
} yparser;

static jp_err yfail(yparser *p, unsigned no, const char *what)
{
    return jp_error_set(p->err, JP_ERR_UNSUPPORTED, "line %u: %s", no, what);
}

/* Strips a " #" comment outside quotes and trailing blanks, in place. */
static void strip_comment(char *s)
{
    char q = 0;
    for (char *p = s; *p; p++) {
        if (q) {
            if (*p == q)
                q = 0;
        } else if (*p == '\'' || *p == '"') {
            q = *p;
        } else if (*p == '#' && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
            *p = '\0';
            break;
        }
    }
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

static json_t *scalar(yparser *p, unsigned no, const char *s, jp_err *rc)
{
    size_t n = strlen(s);
    if (strcmp(s, "{}") == 0)
        return json_object();
    if (strcmp(s, "[]") == 0)
        return json_array();
    if (s[0] == '&' || s[0] == '*' || s[0] == '|' || s[0] == '>' || s[0] == '!' ||
        (s[0] == '{' || s[0] == '[')) {
        *rc = yfail(p, no,
                    "anchors, aliases, tags, block scalars and flow collections are "
                    "not supported in a kubeconfig here");
        return NULL;
    }
    if (s[0] == '\'' || s[0] == '"') {
        char q = s[0];
        if (n < 2 || s[n - 1] != q) {
            *rc = yfail(p, no, "unterminated quoted string (multi-line scalars are not supported)");
            return NULL;
        }
        char *o = jp_xmalloc(n);
        size_t k = 0;
        for (size_t i = 1; i + 1 < n; i++) {
            if (q == '\'' && s[i] == '\'' && s[i + 1] == '\'')
                i++;
            else if (q == '"' && s[i] == '\\' && i + 2 < n) {
                i++;
                char e = s[i];
                if (e == 'n')
                    e = '\n';
                else if (e == 't')
                    e = '\t';
                o[k++] = e;
                continue;
            }
            o[k++] = s[i];
        }
        o[k] = '\0';
        json_t *j = json_string(o);
        free(o);
        return j ? j : json_string("");
    }
    if (strcmp(s, "true") == 0)
        return json_true();
    if (strcmp(s, "false") == 0)
        return json_false();
    if (strcmp(s, "null") == 0 || strcmp(s, "~") == 0)
        return json_null();
    json_t *j = json_string(s);
    return j ? j : json_string("");
}

static json_t *ynode(yparser *p, int indent, int depth, jp_err *rc);

/* The value after "key:" or "- ", or the block below it. */
static json_t *yvalue(yparser *p, const char *rest, int indent, unsigned no, int depth, jp_err *rc)
{
    if (*rest)
        return scalar(p, no, rest, rc);
    if (p->i < p->n && p->lines[p->i].indent > indent)
        return ynode(p, p->lines[p->i].indent, depth + 1, rc);
    /* "key:" followed by "- item" at the same indent (kubectl writes this) */
    if (p->i < p->n && p->lines[p->i].indent == indent && p->lines[p->i].text[0] == '-')
        return ynode(p, indent, depth + 1, rc);
    return json_null();
}

static json_t *yseq(yparser *p, int indent, int depth, jp_err *rc)
{
    json_t *a = json_array();
    while (p->i < p->n && p->lines[p->i].indent == indent && p->lines[p->i].text[0] == '-') {
        yline *l = &p->lines[p->i];
        if (l->text[1] && l->text[1] != ' ') {
            *rc = yfail(p, l->no, "expected '- ' for a list item");
            break;
        }
        char *rest = l->text + 1;
        int extra = 1;
        while (*rest == ' ') {
            rest++;
            extra++;
        }
        json_t *v;
        if (*rest && (strstr(rest, ": ") || rest[strlen(rest) - 1] == ':') && rest[0] != '\'' &&
            rest[0] != '"') {
            /* "- key: v": the item is a map whose first line is this one */
            l->indent = indent + extra;
            l->text = rest;
            v = ynode(p, l->indent, depth + 1, rc);
        } else {
            p->i++;
            v = yvalue(p, rest, indent, l->no, depth, rc);
        }
        if (!v)
            break;
        json_array_append_new(a, v);
    }
    if (*rc != JP_OK) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static json_t *ymap(yparser *p, int indent, int depth, jp_err *rc)
{
    json_t *o = json_object();
    while (p->i < p->n && p->lines[p->i].indent == indent && p->lines[p->i].text[0] != '-') {
        yline *l = &p->lines[p->i];
        char *colon = strstr(l->text, ": ");
        size_t tl = strlen(l->text);
        if (!colon && tl && l->text[tl - 1] == ':')
            colon = l->text + tl - 1;
        if (!colon || colon == l->text) {
            *rc = yfail(p, l->no, "expected 'key: value'");
            break;
        }
        *colon = '\0';
        char *key = l->text;
        if ((key[0] == '"' || key[0] == '\'') && strlen(key) >= 2) {
            key++;
            key[strlen(key) - 1] = '\0';
        }
        char *rest = colon + 1;
        while (*rest == ' ')
            rest++;
        p->i++;
        json_t *v = yvalue(p, rest, indent, l->no, depth, rc);
        if (!v)
            break;
        json_object_set_new(o, key, v);
    }
    if (*rc != JP_OK) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *ynode(yparser *p, int indent, int depth, jp_err *rc)
{
    if (depth > YAML_DEPTH_MAX) {
        *rc = yfail(p, p->lines[p->i].no, "nested too deeply");
        return NULL;
    }
    return p->lines[p->i].text[0] == '-' ? yseq(p, indent, depth, rc) : ymap(p, indent, depth, rc);
}

jp_err agent_yaml_parse(const char *text, size_t len, json_t **out, jp_error *err)
{
    *out = NULL;
    if (len > AGENT_KUBECONFIG_MAX)
        return jp_error_set(err, JP_ERR_LIMIT, "larger than %u bytes", AGENT_KUBECONFIG_MAX);
    if (memchr(text, '\0', len))
        return jp_error_set(err, JP_ERR_FORMAT, "contains a NUL byte");
    char *buf = jp_xstrndup(text, len);
    yparser p = {.err = err};
    size_t cap = 0;
    unsigned no = 0;
    jp_err rc = JP_OK;
    for (char *line = buf, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        no++;
        int ind = 0;
        while (line[ind] == ' ')
            ind++;
        if (line[ind] == '\t') {
            rc = jp_error_set(err, JP_ERR_FORMAT, "line %u: tab used for indentation", no);
            goto out;
        }
        strip_comment(line + ind);
        if (!line[ind] || strcmp(line + ind, "---") == 0)
            continue;
        if (p.n == YAML_LINES_MAX) {
            rc = jp_error_set(err, JP_ERR_LIMIT, "more than %d lines", YAML_LINES_MAX);
            goto out;
        }
        p.lines = jp_xgrow(p.lines, &cap, p.n + 1, sizeof *p.lines);
        p.lines[p.n++] = (yline){.indent = ind, .text = line + ind, .no = no};
    }
    if (!p.n) {
        rc = jp_error_set(err, JP_ERR_FORMAT, "empty document");
        goto out;
    }
    *out = ynode(&p, p.lines[0].indent, 0, &rc);
    if (rc == JP_OK && p.i < p.n) {
        rc = yfail(&p, p.lines[p.i].no, "unexpected indentation");
        json_decref(*out);
        *out = NULL;
    }
out:
    free(p.lines);
    free(buf);
    return rc;
}

/* ---- kubeconfig ---- */

static json_t *named(json_t *root, const char *list, const char *name, const char *inner)
{
    json_t *a = json_object_get(root, list);
    size_t i;
    json_t *e;
    json_array_foreach(a, i, e)
    {
        json_t *n = json_object_get(e, "name");
        if (json_is_string(n) && strcmp(json_string_value(n), name) == 0)
            return json_object_get(e, inner);
    }
    return NULL;
}

static const char *jstr(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static char *path_in(const char *base_dir, const char *p)
{
    if (p[0] == '/' || !base_dir)
        return jp_xstrdup(p);
    size_t n = strlen(base_dir) + strlen(p) + 2;
    char *o = jp_xmalloc(n);
    snprintf(o, n, "%s/%s", base_dir, p);
    return o;
}

static jp_err b64_field(json_t *o, const char *k, uint8_t **out, size_t *len, jp_error *err)
{
    const char *v = jstr(o, k);
    if (!v)
        return JP_OK;
    jp_err rc = jp_base64_decode(v, strlen(v), out, len, err);
    if (rc != JP_OK)
        jp_error_prefix(err, "%s: ", k);
    return rc;
}

static jp_err kc_user(json_t *user, const char *base_dir, agent_k8s_conn *c, jp_error *err)
{
    if (!user)
        return JP_OK; /* anonymous */
    if (json_object_get(user, "exec"))
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "the user uses an exec credential plugin, which jprof-agent does not "
                            "run; give it a token (token/tokenFile) or a client certificate");
    if (json_object_get(user, "auth-provider"))
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "auth-provider users are not supported; use a token or a client "
                            "certificate");
    if (jstr(user, "username") || jstr(user, "password"))
        return jp_error_set(err, JP_ERR_UNSUPPORTED,
                            "basic auth (username/password) is not supported");
    const char *v;
    if ((v = jstr(user, "token")))
        c->token = jp_xstrdup(v);
    if ((v = jstr(user, "tokenFile")))
        c->token_file = path_in(base_dir, v);
    if ((v = jstr(user, "client-certificate")))
        c->cert_file = path_in(base_dir, v);
    if ((v = jstr(user, "client-key")))
        c->key_file = path_in(base_dir, v);
    jp_err rc;
    if ((rc = b64_field(user, "client-certificate-data", &c->cert, &c->cert_len, err)) ||
        (rc = b64_field(user, "client-key-data", &c->key, &c->key_len, err)))
        return rc;
    return JP_OK;
}

static jp_err kc_extract(json_t *root, const char *base_dir, agent_k8s_conn *c, jp_error *err)
{
    const char *cur = jstr(root, "current-context");
    if (!cur)
        return jp_error_set(err, JP_ERR_FORMAT, "no current-context");
    json_t *ctx = named(root, "contexts", cur, "context");
    if (!json_is_object(ctx))
        return jp_error_set(err, JP_ERR_FORMAT, "context '%.100s' not found", cur);
    const char *cname = jstr(ctx, "cluster"), *uname = jstr(ctx, "user");
    json_t *cl = cname ? named(root, "clusters", cname, "cluster") : NULL;
    if (!json_is_object(cl))
        return jp_error_set(err, JP_ERR_FORMAT, "cluster '%.100s' of context '%.100s' not found",
                            cname ? cname : "", cur);
    const char *server = jstr(cl, "server");
    if (!server || (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0))
        return jp_error_set(err, JP_ERR_FORMAT, "cluster '%.100s': server must be an http(s) URL",
                            cname);
    c->server = jp_xstrdup(server);
    size_t n = strlen(c->server);
    while (n && c->server[n - 1] == '/')
        c->server[--n] = '\0';
    const char *v;
    if ((v = jstr(cl, "certificate-authority")))
        c->ca_file = path_in(base_dir, v);
    c->insecure = json_is_true(json_object_get(cl, "insecure-skip-tls-verify"));
    jp_err rc = b64_field(cl, "certificate-authority-data", &c->ca, &c->ca_len, err);
    if (rc != JP_OK)
        return rc;
    json_t *user = uname ? named(root, "users", uname, "user") : NULL;
    if (uname && !user)
        return jp_error_set(err, JP_ERR_FORMAT, "user '%.100s' not found", uname);
    if ((rc = kc_user(user, base_dir, c, err)))
        return rc;
    size_t sl = strlen(cur) + 32;
    c->source = jp_xmalloc(sl);
    snprintf(c->source, sl, "kubeconfig context %s", cur);
    return JP_OK;
}

jp_err agent_kubeconfig_parse(const char *text, size_t len, const char *base_dir, agent_k8s_conn *c,
                              jp_error *err)
{
    memset(c, 0, sizeof *c);
    json_t *root = NULL;
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
        i++;
    jp_err rc;
    if (i < len && text[i] == '{') {
        json_error_t je;
        root = len <= AGENT_KUBECONFIG_MAX ? json_loadb(text, len, 0, &je) : NULL;
        rc = root ? JP_OK : jp_error_set(err, JP_ERR_FORMAT, "not valid JSON");
    } else {
        rc = agent_yaml_parse(text, len, &root, err);
    }
    if (rc == JP_OK && !json_is_object(root))
        rc = jp_error_set(err, JP_ERR_FORMAT, "a kubeconfig must be a map");
    if (rc == JP_OK)
        rc = kc_extract(root, base_dir, c, err);
    json_decref(root);
    if (rc != JP_OK)
        agent_k8s_conn_cleanup(c);
    return rc;
}

jp_err agent_kubeconfig_load(const char *path, agent_k8s_conn *c, jp_error *err)
{
    char *text = NULL;
    size_t len = 0;
    memset(c, 0, sizeof *c);
    jp_err rc = slurp(path, AGENT_KUBECONFIG_MAX, &text, &len, err);
    if (rc != JP_OK)
        return rc;
    char dir[512];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    rc = agent_kubeconfig_parse(text, len, dir, c, err);
    free(text);
    if (rc != JP_OK)
        jp_error_prefix(err, "%s: ", path);
    return rc;
}
