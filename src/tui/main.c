/* jprof-top: option parsing and dispatch to batch mode or the interactive
 * view, on a recording (--jfr) or a live JVM (-p, or the list of JVMs). Exit statuses are
 * documented in man/jprof-top.1 (EXIT STATUS). */
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "jvm/snapshot_take.h"
#include "model/diff.h"
#include "model/profile.h"
#include "tui/batch.h"
#include "tui/batch_recording.h"
#include "tui/batch_server.h"
#include "tui/exit.h"
#include "tui/interactive.h"
#include "tui/options.h"
#include "tui/recording.h"
#include "tui/report_profile.h"
#include "tui/server_client.h"
#include "tui/source_kubectl.h"
#include "tui/stop.h"
#include "wire/http_client.h"

static int kube_fail(const jp_error *err)
{
    fprintf(stderr, "jprof-top: %s\n", err->msg);
    return tui_exit_status_kubectl(err);
}

static int kubectl_main(const tui_args *a)
{
    kube_opts ko;
    kube_opts_init(&ko);
    ko.ns = a->ro.ns;
    ko.context = a->context;
    ko.kubeconfig = a->kubeconfig;
    ko.image = a->debug_image;
    ko.debug = a->debug_image != NULL;
    ko.jvm_pid = a->jvm_pid;
    ko.command = a->command_line;
    tui_target_opts o;
    tui_target_opts_init(&o);
    if (a->interval_ns > 0)
        o.interval_ns = a->interval_ns;
    if (a->window_ns > 0)
        o.window_ns = a->window_ns;
    jp_error err;
    jp_error_init(&err);
    tui_stop_install();
    jp_pod_list pods;
    jp_pod_list_init(&pods);
    jp_err rc = a->pod ? kube_pod_get(&ko, a->pod, &pods, &err)
                       : kube_pods_for_service(&ko, a->ro.svc, &pods, &err);
    if (rc != JP_OK) {
        jp_pod_list_cleanup(&pods);
        return kube_fail(&err);
    }
    if (a->batch) {
        int st = tui_batch_kubectl(a, &ko, &pods, &o);
        jp_pod_list_cleanup(&pods);
        return st;
    }
    int st = tui_interactive_kubectl(a, &ko, &pods, &o);
    jp_pod_list_cleanup(&pods);
    return st;
}

/* -n NS -s SVC: a service on jprof-server, or its pods through kubectl. */
static int service_main(const tui_args *a)
{
    if (!a->batch && !tui_have_terminal())
        return TUI_EXIT_USAGE;
    if (tui_args_kubectl(a))
        return kubectl_main(a);
    jp_error err;
    jp_error_init(&err);
    if (jp_http_global_init(&err) != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        return TUI_EXIT_ERROR;
    }
    tui_client *r = tui_client_new(&a->ro);
    int rc;
    if (tui_client_connect(r, &err) != JP_OK) {
        fprintf(stderr, "jprof-top: %s\n", err.msg);
        rc = tui_client_exit_status(r);
    } else if (a->batch) {
        rc = tui_batch_server_run(r, a, stdout, stderr);
    } else if (a->has_base) {
        rc = tui_interactive_server_diff(r, a);
    } else {
        return tui_interactive_server(r, a); /* the view's list frees r */
    }
    tui_client_free(r);
    return rc;
}

/* A recording's batch output (collapsed, JSON, ...) is a few MB written
 * once: stdio's 4 KiB buffer made it ~700 write calls for a 126 MB file's
 * cpu stacks, dear where a system call is. One buffer of 256 KiB instead
 * (a dozen calls; 1 MiB made no difference but a MB more of the heap's
 * peak, held through the whole read), from the heap (jp_heap_tune); a
 * terminal keeps its usual buffering. */
static void batch_out_buffer(void)
{
    static const size_t size = (size_t)256 << 10;
    if (isatty(STDOUT_FILENO))
        return;
    char *buf = malloc(size); /* stdout's until exit */
    if (buf && setvbuf(stdout, buf, _IOFBF, size) != 0)
        free(buf);
}

int main(int argc, char **argv)
{
    /* The character set only, for the screen's UTF-8: numbers in the JSON,
     * collapsed and top outputs stay "1.5" whatever LC_NUMERIC says, and the
     * other categories cost ~25 file opens at each start. */
    setlocale(LC_CTYPE, "");
    tui_args a;
    int rc = tui_args_parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.service)
        return service_main(&a);
    if (a.diff_path || a.jfr_path) {
        jp_heap_tune(JP_HEAP_HUGE); /* one read of a file: fresh memory, touched once */
        if (a.batch)
            batch_out_buffer();
    }
    if (a.diff_path)
        return a.batch ? tui_diff_run(&a, stdout, stderr) : tui_interactive_diff(&a);
    if (a.jfr_path)
        return a.batch ? tui_batch_run(&a, stdout, stderr) : tui_interactive_run(&a);
    if (a.batch && a.io_detail)
        return tui_batch_io_run(&a, stdout, stderr);
    if (a.batch && a.heap)
        return tui_batch_heap_run(&a, stdout, stderr);
    if (a.batch)
        return a.has_pid ? tui_batch_pid_run(&a, stdout, stderr)
                         : tui_batch_list_run(stdout, stderr);
    return tui_interactive_live(&a);
}
