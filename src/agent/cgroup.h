/* cgroup.h - which container (and pod) a process runs in, from the text of
 * /proc/PID/cgroup.
 *
 * Handles cgroup v1 (one line per hierarchy) and v2 ("0::/path"), with the
 * cgroupfs and systemd drivers, for containerd ("cri-containerd-<id>.scope"
 * or a bare id under kubepods), CRI-O ("crio-<id>.scope", never the
 * "crio-conmon-" monitor), Docker ("docker-<id>.scope", "/docker/<id>") and
 * podman ("libpod-<id>", under a --cgroup-parent such as a kubelet's
 * "kubepods/burstable/pod<uid>", or "libpod-<id>.scope"; never its
 * "libpod-conmon-" monitor).
 * The pod UID is taken from the "pod<uid>" component when there is one
 * (systemd spells its dashes as underscores).
 *
 * Pure parsing over a buffer; thread-safe; no heap. */
#ifndef JP_AGENT_CGROUP_H
#define JP_AGENT_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/error.h"

#define AGENT_CONTAINER_ID_LEN 64

typedef struct agent_cgroup {
    char container_id[AGENT_CONTAINER_ID_LEN + 1]; /* lowercase hex; "" when none */
    char runtime[16]; /* "containerd", "cri-o", "docker", "podman", "" */
    char pod_uid[40]; /* "1234abcd-...", "" when none */
} agent_cgroup;

/* Parses the text of a /proc/PID/cgroup file. Returns true when a container
 * id or a pod UID was found. */
bool agent_cgroup_parse(const char *text, size_t len, agent_cgroup *out);

/* Reads /proc/PID/cgroup and parses it. JP_ERR_NOT_FOUND when the process is
 * gone, JP_ERR_IO otherwise; not being in a container is JP_OK with an empty
 * result. */
jp_err agent_cgroup_read(pid_t pid, agent_cgroup *out, jp_error *err);

#endif
