#include "agent/hostmode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/xalloc.h"
#include "jvm/proc.h"

void agent_host_service(const char *cmdline, size_t len, char *out, size_t outlen)
{
    out[0] = '\0';
    static const char prop[] = "-Djprof.service=";
    for (size_t off = 0; off < len;) {
        const char *a = cmdline + off;
        size_t alen = strnlen(a, len - off);
        if (alen > sizeof prop - 1 && memcmp(a, prop, sizeof prop - 1) == 0) {
            snprintf(out, outlen, "%.*s", (int)(alen - (sizeof prop - 1)), a + sizeof prop - 1);
            return; /* the explicit name wins */
        }
        off += alen + 1;
    }
    char main[512];
    jvm_cmdline_main(cmdline, len, main, sizeof main);
    if (!main[0])
        return;
    size_t n = strlen(main);
    if (n > 4 && strcmp(main + n - 4, ".jar") == 0) {
        const char *base = strrchr(main, '/');
        base = base ? base + 1 : main;
        snprintf(out, outlen, "%.*s", (int)(main + n - 4 - base), base);
        return;
    }
    /* "module/pkg.Class" or "pkg.Class": the class without its package */
    const char *cls = strrchr(main, '/');
    cls = cls ? cls + 1 : main;
    const char *dot = strrchr(cls, '.');
    snprintf(out, outlen, "%s", dot && dot[1] ? dot + 1 : cls);
}

void agent_host_config_init(agent_host_config *c)
{
    memset(c, 0, sizeof *c);
}

static void entry_cleanup(agent_host_entry *e)
{
    free(e->service);
    for (size_t i = 0; i < e->nann; i++) {
        free((char *)e->ann[i].key);
        free((char *)e->ann[i].value);
    }
}

void agent_host_config_cleanup(agent_host_config *c)
{
    for (size_t i = 0; i < c->count; i++)
        entry_cleanup(&c->items[i]);
    free(c->items);
    memset(c, 0, sizeof *c);
}

static bool all_digits(const char *s, size_t n)
{
    if (n == 0 || n > 9)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

/* Splits a line into at most `max` whitespace-separated words. */
static size_t words(char *line, char **w, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            *p++ = '\0';
        if (!*p)
            break;
        if (n == max)
            return max + 1;
        w[n++] = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\r')
            p++;
    }
    return n;
}

static jp_err parse_line(char *line, unsigned lineno, agent_host_config *out, jp_error *err)
{
    char *w[AGENT_HOST_ANN_MAX + 3];
    size_t n = words(line, w, sizeof w / sizeof w[0] - 1);
    if (n == 0 || w[0][0] == '#')
        return JP_OK;
    if (n > sizeof w / sizeof w[0] - 1)
        return jp_error_set(err, JP_ERR_FORMAT, "line %u: too many words", lineno);
    if (out->count == AGENT_HOST_CONFIG_MAX)
        return jp_error_set(err, JP_ERR_LIMIT, "line %u: more than %d entries", lineno,
                            AGENT_HOST_CONFIG_MAX);
    agent_host_entry e = {.line = lineno};
    size_t i = 0;
    if (strcmp(w[0], "pid") == 0) {
        if (n < 2 || !all_digits(w[1], strlen(w[1])))
            return jp_error_set(err, JP_ERR_FORMAT, "line %u: 'pid' needs a number", lineno);
        e.pid = (pid_t)strtol(w[1], NULL, 10);
        i = 2;
    } else if (all_digits(w[0], strlen(w[0]))) {
        e.pid = (pid_t)strtol(w[0], NULL, 10);
        i = 1;
    } else {
        if (strchr(w[0], '='))
            return jp_error_set(err, JP_ERR_FORMAT,
                                "line %u: starts with '%.40s'; expected a service name or pid",
                                lineno, w[0]);
        e.service = jp_xstrdup(w[0]);
        i = 1;
    }
    for (; i < n; i++) {
        char *eq = strchr(w[i], '=');
        if (!eq || eq == w[i] || strncmp(w[i], "jprof.io/", 9) != 0) {
            entry_cleanup(&e);
            return jp_error_set(err, JP_ERR_FORMAT,
                                "line %u: '%.60s' is not a jprof.io/KEY=VALUE annotation", lineno,
                                w[i]);
        }
        e.ann[e.nann].key = jp_xstrndup(w[i], (size_t)(eq - w[i]));
        e.ann[e.nann].value = jp_xstrdup(eq + 1);
        e.nann++;
    }
    out->items = jp_xgrow(out->items, &out->cap, out->count + 1, sizeof *out->items);
    out->items[out->count++] = e;
    return JP_OK;
}

jp_err agent_host_config_parse(const char *text, size_t len, agent_host_config *out, jp_error *err)
{
    if (len > AGENT_HOST_CONFIG_BYTES)
        return jp_error_set(err, JP_ERR_LIMIT, "config larger than %u bytes",
                            AGENT_HOST_CONFIG_BYTES);
    unsigned lineno = 0;
    for (size_t i = 0; i < len;) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        lineno++;
        if (e - i > 4096)
            return jp_error_set(err, JP_ERR_LIMIT, "line %u: longer than 4096 bytes", lineno);
        char line[4097];
        memcpy(line, text + i, e - i);
        line[e - i] = '\0';
        if (memchr(text + i, '\0', e - i))
            return jp_error_set(err, JP_ERR_FORMAT, "line %u: contains a NUL byte", lineno);
        jp_err rc = parse_line(line, lineno, out, err);
        if (rc != JP_OK)
            return rc;
        i = e + 1;
    }
    return JP_OK;
}

jp_err agent_host_config_load(const char *path, agent_host_config *out, jp_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return jp_error_set(err, JP_ERR_IO, "%s: %s", path, strerror(errno));
    char *buf = jp_xmalloc(AGENT_HOST_CONFIG_BYTES + 1);
    size_t len = 0;
    jp_err rc = JP_OK;
    for (;;) {
        ssize_t n = read(fd, buf + len, AGENT_HOST_CONFIG_BYTES + 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = jp_error_set(err, JP_ERR_IO, "%s: %s", path, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        len += (size_t)n;
        if (len > AGENT_HOST_CONFIG_BYTES) {
            rc = jp_error_set(err, JP_ERR_LIMIT, "%s: larger than %u bytes", path,
                              AGENT_HOST_CONFIG_BYTES);
            break;
        }
    }
    close(fd);
    if (rc == JP_OK) {
        rc = agent_host_config_parse(buf, len, out, err);
        if (rc != JP_OK)
            jp_error_prefix(err, "%s: ", path);
    }
    free(buf);
    return rc;
}

const agent_host_entry *agent_host_config_match(const agent_host_config *c, pid_t pid,
                                                const char *service)
{
    for (size_t i = 0; i < c->count; i++)
        if (c->items[i].pid && c->items[i].pid == pid)
            return &c->items[i];
    for (size_t i = 0; service && *service && i < c->count; i++)
        if (c->items[i].service && strcmp(c->items[i].service, service) == 0)
            return &c->items[i];
    return NULL;
}
