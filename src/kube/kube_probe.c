/* kube_probe.c - which jprof-probe goes to a pod. A pod's architecture is
 * what the loader says its `uname -m` is (else its node's
 * status.nodeInfo.architecture); the probe sent is the one of that
 * architecture among the installed ones: jprof-probe for the build's own
 * (JP_ARCH), jprof-probe-ARCH beside it for another (docs/ARM64.md). Every
 * candidate is checked by its ELF header, so a probe of the wrong
 * architecture is never streamed into a pod where it cannot run.
 * Owns nothing: results go to the caller's buffers. */
#include "kube/kube_int.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef JP_BUILD_PROBE
#define JP_BUILD_PROBE ""
#endif

/* `uname -m` names and ELF machine numbers, with Kubernetes' name (a
 * node's status.nodeInfo.architecture, GOARCH) for each. */
static const struct {
    const char *machine, *arch;
    unsigned elf; /* e_machine; 0: none of its own */
} arches[] = {
    {"x86_64", "amd64", 62}, {"amd64", "amd64", 0},       {"aarch64", "arm64", 183},
    {"arm64", "arm64", 0},   {"armv7l", "arm", 40},       {"armv6l", "arm", 0},
    {"i686", "386", 3},      {"i386", "386", 0},          {"ppc64le", "ppc64le", 21},
    {"s390x", "s390x", 22},  {"riscv64", "riscv64", 243},
};

static bool is_word(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (n >= max ||
            !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
              (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '-' || s[n] == '.'))
            return false;
    return n > 0;
}

bool kube_arch_of_machine(const char *machine, char *buf, size_t len)
{
    buf[0] = '\0';
    if (!machine || !is_word(machine, 31) || strcmp(machine, "unknown") == 0)
        return false;
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
        if (strcmp(machine, arches[i].machine) == 0) {
            snprintf(buf, len, "%s", arches[i].arch);
            return true;
        }
    snprintf(buf, len, "%s", machine); /* one jprof knows no probe for: said so by name */
    return true;
}

/* The architecture an ELF file is for ("" when it is not an ELF file jprof
 * knows; its first 20 bytes only). */
static const char *elf_arch(const char *path)
{
    unsigned char h[20];
    FILE *f = fopen(path, "rb");
    if (!f)
        return "";
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    if (got != sizeof h || memcmp(h, "\177ELF", 4) != 0 || (h[5] != 1 && h[5] != 2))
        return "";
    unsigned m = h[5] == 1 ? h[18] | (unsigned)h[19] << 8 : (unsigned)h[18] << 8 | h[19];
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
        if (arches[i].elf && arches[i].elf == m)
            return arches[i].arch;
    return "";
}

/* path, when it is a readable probe for arch. */
static bool probe_of(const char *path, const char *arch)
{
    return access(path, R_OK) == 0 && strcmp(elf_arch(path), arch) == 0;
}

/* dir/jprof-probe-ARCH, then dir/jprof-probe, whichever is arch's. */
static bool probe_in(const char *dir, const char *arch, char *buf, size_t len)
{
    snprintf(buf, len, "%s/jprof-probe-%s", dir, arch);
    if (probe_of(buf, arch))
        return true;
    snprintf(buf, len, "%s/jprof-probe", dir);
    return probe_of(buf, arch);
}

static void dir_of(const char *path, char *buf, size_t len)
{
    char tmp[512];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(buf, len, "%s", dirname(tmp));
}

/* The probe named by --probe or $JPROF_PROBE, for arch (NULL: taken as it
 * is): that file when it is arch's, else jprof-probe-ARCH beside it. */
static jp_err named_probe(const char *named, const char *arch, char *buf, size_t len, jp_error *err)
{
    if (access(named, R_OK) != 0)
        return jp_error_set(err, JP_ERR_NOT_FOUND, "probe %s: cannot read it", named);
    if (!arch || probe_of(named, arch)) {
        snprintf(buf, len, "%s", named);
        return JP_OK;
    }
    char dir[512];
    dir_of(named, dir, sizeof dir);
    snprintf(buf, len, "%s/jprof-probe-%s", dir, arch);
    if (probe_of(buf, arch))
        return JP_OK;
    const char *is = elf_arch(named);
    return jp_error_set(err, JP_ERR_UNSUPPORTED,
                        "the probe %s is %s%s%s, and there is no jprof-probe-%s beside it "
                        "(docs/ARM64.md says how to build one)",
                        named, *is ? "an " : "not a probe program", is, *is ? " program" : "",
                        arch);
}

jp_err kube_probe_find(const kube_opts *o, const char *arch, char *buf, size_t len, jp_error *err)
{
    const char *env = getenv("JPROF_PROBE");
    const char *named = o->probe ? o->probe : env && *env ? env : NULL;
    if (named)
        return named_probe(named, arch, buf, len, err);
    const char *want = arch ? arch : JP_ARCH;
    char self[512] = "", dir[512] = "";
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        dir_of(self, dir, sizeof dir);
        if (probe_in(dir, want, buf, len))
            return JP_OK;
    }
    if (JP_BUILD_PROBE[0]) {
        char bdir[512];
        dir_of(JP_BUILD_PROBE, bdir, sizeof bdir);
        if (probe_in(bdir, want, buf, len))
            return JP_OK;
    }
    if (strcmp(want, JP_ARCH) == 0)
        return jp_error_set(err, JP_ERR_NOT_FOUND,
                            "jprof-probe not found next to this program (set JPROF_PROBE or "
                            "--probe to the static jprof-probe built with jprof)");
    return jp_error_set(err, JP_ERR_UNSUPPORTED,
                        "no jprof-probe-%s is installed next to %s: install jprof's %s probe "
                        "there (make install of a jprof build with the %s cross compiler "
                        "installs it, jprof's image has it: docs/ARM64.md), or name one with "
                        "--probe",
                        want, *dir ? dir : "this program", want, want);
}

jp_err kube_node_arch(const kube_opts *o, const char *node, char *buf, size_t len, jp_error *err)
{
    buf[0] = '\0';
    if (!node || !is_word(node, 253))
        return jp_error_set(err, JP_ERR_USAGE, "node name \"%.64s\" is not valid",
                            node ? node : "");
    const char *args[] = {"get", "node", node, "-o", "jsonpath={.status.nodeInfo.architecture}",
                          NULL};
    jp_strbuf sb;
    jp_strbuf_init(&sb, 4096);
    jp_err rc = kube_run(o, args, &sb, err);
    if (rc == JP_OK) {
        char word[64];
        snprintf(word, sizeof word, "%.*s", (int)(sb.len < 63 ? sb.len : 63),
                 sb.data ? sb.data : "");
        word[strcspn(word, "\r\n")] = '\0';
        if (!kube_arch_of_machine(word, buf, len))
            rc = jp_error_set(err, JP_ERR_PROTOCOL,
                              "node %s: status.nodeInfo.architecture is not an architecture "
                              "name (%zu bytes)",
                              node, sb.len);
    }
    jp_strbuf_cleanup(&sb);
    return rc;
}
