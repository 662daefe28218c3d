/* histogram_take.c - one class histogram of a live JVM over the attach
 * socket (see histogram.h; the parser is histogram.c, which the fuzz target
 * links alone). */
#include "jvm/histogram.h"

#include "base/timeutil.h"

jp_err jvm_histogram_take(const jvm_proc *t, const jvm_attach_opts *o, bool all, jp_heap_histo *out,
                          jp_error *err)
{
    jvm_attach_opts ao;
    if (o)
        ao = *o;
    else
        jvm_attach_opts_init(&ao);
    if (ao.io_timeout_ns < JVM_HISTO_MIN_IO_TIMEOUT_NS)
        ao.io_timeout_ns = JVM_HISTO_MIN_IO_TIMEOUT_NS;
    if (ao.max_reply < JVM_HISTO_MAX_BYTES)
        ao.max_reply = JVM_HISTO_MAX_BYTES;
    /* reach the attach listener first (it may need starting, which takes
     * some 100 ms), so took_ns is the histogram's own time */
    int version;
    jp_err rc = jvm_attach_protocol_version(t, &ao, &version, err);
    if (rc != JP_OK)
        return rc;
    jvm_reply r = {0};
    int64_t t0 = jp_time_mono_ns();
    rc = jvm_jcmd(t, &ao, all ? "GC.class_histogram -all" : "GC.class_histogram", &r, err);
    int64_t took = jp_time_mono_ns() - t0;
    int64_t now = jp_time_now_ns();
    if (rc == JP_OK)
        rc = jvm_histogram_parse(r.text, r.len, out, err);
    jvm_reply_cleanup(&r);
    if (rc != JP_OK)
        return rc;
    out->time_ns = now;
    out->took_ns = took > 0 ? took : 1;
    out->all = all;
    return JP_OK;
}
