/* source_server.h - a target of a service on jprof-server as a source of
 * jprof-top's screens (source.h), and the list of the service's targets.
 *
 * Ownership: every target and the picker hold a connection of their own
 * (tui_client); the option strings are borrowed (argv). Not thread-safe. */
#ifndef JP_TUI_SOURCE_SERVER_H
#define JP_TUI_SOURCE_SERVER_H

#include "base/error.h"
#include "tui/server_client.h"
#include "tui/source.h"
#include "tui/target.h"

/* Opens the target of pod (pid < 0: any JVM of it) with the flame range
 * index range (tui_range_names). */
jp_err tui_server_open(const tui_client_opts *ro, const char *pod, long long pid, int range,
                       const tui_target_opts *o, tui_target **out, jp_error *err);

/* The same on a connected r (taken over), starting from the snapshot r
 * already holds, if any. Never NULL. */
tui_target *tui_server_open_on(tui_client *r, const char *pod, long long pid, int range,
                               const tui_target_opts *o);

/* The JVM of one entry of r's /threads answer (r borrowed: it must outlive
 * the target), for batch output; NULL when the entry has no snapshot. */
tui_target *tui_server_target(tui_client *r, const json_t *entry, const tui_target_opts *o);

/* The picker of the service's targets; r is connected and taken over. */
tui_picker *tui_picker_server(tui_client *r, const tui_client_opts *ro, int range);

/* The pod (and pid) of the newest thread snapshot of the service, or of
 * pod when given: what opens first. JP_ERR_NOT_FOUND when there is none. */
jp_err tui_server_first(tui_client *r, const char *pod, char *buf, size_t len, long long *pid,
                        jp_error *err);

#endif
