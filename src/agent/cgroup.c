#include "agent/cgroup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/proc.h"

static bool is_hex_id(const char *s, size_t n)
{
    if (n != AGENT_CONTAINER_ID_LEN)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
            return false;
    }
    return true;
}

static bool starts(const char *s, size_t n, const char *prefix)
{
    size_t p = strlen(prefix);
    return n >= p && memcmp(s, prefix, p) == 0;
}

/* One path component, e.g. "cri-containerd-<id>.scope" or "<id>". */
static bool component_id(const char *c, size_t n, const char *parent, size_t plen,
                         agent_cgroup *out)
{
    if (n > 6 && memcmp(c + n - 6, ".scope", 6) == 0)
        n -= 6;
    static const struct {
        const char *prefix, *runtime;
    } known[] = {{"cri-containerd-", "containerd"},
                 {"crio-", "cri-o"},
                 {"docker-", "docker"},
                 {"containerd-", "containerd"},
                 {"libpod-", "podman"}};
    if (starts(c, n, "crio-conmon-") || starts(c, n, "libpod-conmon-"))
        return false; /* CRI-O's or podman's monitor process, not the container */
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        size_t p = strlen(known[i].prefix);
        if (starts(c, n, known[i].prefix) && is_hex_id(c + p, n - p)) {
            memcpy(out->container_id, c + p, AGENT_CONTAINER_ID_LEN);
            out->container_id[AGENT_CONTAINER_ID_LEN] = '\0';
            snprintf(out->runtime, sizeof out->runtime, "%s", known[i].runtime);
            return true;
        }
    }
    if (is_hex_id(c, n)) {
        /* cgroupfs driver: a bare id; Docker puts it under /docker */
        memcpy(out->container_id, c, AGENT_CONTAINER_ID_LEN);
        out->container_id[AGENT_CONTAINER_ID_LEN] = '\0';
        snprintf(out->runtime, sizeof out->runtime, "%s",
                 plen == 6 && memcmp(parent, "docker", 6) == 0 ? "docker" : "");
        return true;
    }
    return false;
}

/* "pod<uid>" anywhere in a component, e.g. "kubepods-burstable-pod12ab_..slice". */
static void component_pod(const char *c, size_t n, agent_cgroup *out)
{
    for (size_t i = 0; i + 3 + 36 <= n; i++) {
        if (memcmp(c + i, "pod", 3) != 0)
            continue;
        const char *u = c + i + 3;
        bool ok = true;
        for (size_t k = 0; k < 36 && ok; k++) {
            char ch = u[k];
            bool dash = k == 8 || k == 13 || k == 18 || k == 23;
            ok = dash ? (ch == '-' || ch == '_')
                      : ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'));
        }
        if (!ok)
            continue;
        for (size_t k = 0; k < 36; k++) {
            char ch = u[k];
            if (ch == '_')
                ch = '-';
            out->pod_uid[k] = ch;
        }
        out->pod_uid[36] = '\0';
        return;
    }
}

static void parse_path(const char *p, size_t n, agent_cgroup *out)
{
    const char *parent = "";
    size_t plen = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && p[i] == '/')
            i++;
        size_t s = i;
        while (i < n && p[i] != '/')
            i++;
        if (i == s)
            break;
        if (!out->pod_uid[0])
            component_pod(p + s, i - s, out);
        if (!out->container_id[0])
            component_id(p + s, i - s, parent, plen, out);
        parent = p + s;
        plen = i - s;
    }
}

bool agent_cgroup_parse(const char *text, size_t len, agent_cgroup *out)
{
    memset(out, 0, sizeof *out);
    size_t i = 0;
    while (i < len) {
        size_t e = i;
        while (e < len && text[e] != '\n')
            e++;
        /* hierarchy-id:controllers:path */
        const char *c1 = memchr(text + i, ':', e - i);
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(text + e - c1 - 1)) : NULL;
        if (c2)
            parse_path(c2 + 1, (size_t)(text + e - c2 - 1), out);
        if (out->container_id[0] && out->pod_uid[0])
            break;
        i = e + 1;
    }
    return out->container_id[0] || out->pod_uid[0];
}

jp_err agent_cgroup_read(pid_t pid, agent_cgroup *out, jp_error *err)
{
    char path[64], buf[16384];
    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "/proc/%d/cgroup", (int)pid);
    ssize_t n = jvm_read_small_file(path, buf, sizeof buf);
    if (n < 0)
        return jp_error_set(err, errno == ENOENT || errno == ESRCH ? JP_ERR_NOT_FOUND : JP_ERR_IO,
                            "%s: %s", path, strerror(errno));
    agent_cgroup_parse(buf, (size_t)n, out);
    return JP_OK;
}
