/* source_kubectl.h - a pod through `kubectl exec` as a source of
 * jprof-top's screens (source.h), and the picker of a service's pods.
 *
 * The session (kube/kube.h) streams jprof-probe into the container; the
 * probe takes Thread.print snapshots and records the Flame screen's JFR
 * window in the container, parses it there and sends aggregated stacks.
 * Closing the target (tui_target_free) says bye: the probe stops its
 * recording and removes itself and its files.
 *
 * Ownership: the kube_opts strings are borrowed for the target's or the
 * picker's life (they point into argv). Not thread-safe. */
#ifndef JP_TUI_SOURCE_KUBECTL_H
#define JP_TUI_SOURCE_KUBECTL_H

#include "base/error.h"
#include "kube/kube.h"
#include "tui/source.h"
#include "tui/target.h"
#include "wire/k8s_pod.h"

/* Opens pod (container NULL: the first that runs a JVM; p, when known,
 * names the containers) as a target of the screens. */
jp_err tui_kubectl_open(const kube_opts *ko, const char *pod, const char *container,
                        const jp_pod *p, const tui_target_opts *o, tui_target **out, jp_error *err);

/* The probe session of a target tui_kubectl_open made (NULL for another
 * source). */
kube_session *tui_kubectl_session(const tui_target *l);

/* The picker of service's pods; pods, when not NULL, is a list already
 * read, taken over (shown first without asking kubectl again). */
tui_picker *tui_picker_kubectl(const kube_opts *ko, const char *service, const char *container,
                               jp_pod_list *pods);

/* The JVMs of the target's container other than its own, as
 * kube_hello_others writes them; returns how many. */
size_t tui_kubectl_others(const tui_target *l, char *buf, size_t len);

#endif
