/* histogram.h - HotSpot's class histogram: taken over the attach socket
 * (`jcmd PID GC.class_histogram`) and parsed from its text.
 *
 * What the JVM prints (JDK 9 to 25; heapInspection.cpp):
 *
 *    num     #instances         #bytes  class name (module)
 *   -------------------------------------------------------
 *      1:         13069         795848  [B (java.base@17.0.15)
 *      2:           100           2400  com.shop.Cart
 *   Total         59454        2835280
 *
 * Rows are numbered from 1, widths grow with the numbers; the module is
 * "(name@version)", "(name@)" (JDK 11 to 17 for a module without a version)
 * or "(name)" (later JDKs), and absent for the unnamed module. Before the
 * header JDK 11 to 21 may print "WARNING: Ran out of C-heap; undercounted N
 * total instances in data below"; instead of a histogram "ERROR: Ran out of
 * C-heap; histogram not generated".
 *
 * The text is untrusted (it comes from the target process): every read is
 * bounded by len, no NUL terminator is needed, names are cut at
 * JP_HEAP_NAME_MAX and bytes that are not printable UTF-8 become '?'. It is
 * refused, with the line and what is wrong, when the header has a column
 * this parser does not know (a future JDK's), a row has an extra number,
 * rows are out of sequence, the Total line is missing (cut short) or does
 * not match the rows, or anything follows it. Never a partial histogram.
 *
 * Thread-safety: see attach.h (one thread at a time: it forks). */
#ifndef JP_JVM_HISTOGRAM_H
#define JP_JVM_HISTOGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "jvm/attach.h"
#include "jvm/proc.h"
#include "model/heap.h"

/* Text larger than this is refused (JP_ERR_LIMIT): 1 M classes of 64 bytes. */
#define JVM_HISTO_MAX_BYTES (64u << 20)
/* A histogram of a big heap takes seconds: the reply is waited for at least
 * this long, whatever opts.io_timeout_ns says. */
#define JVM_HISTO_MIN_IO_TIMEOUT_NS (120LL * 1000000000LL)

/* Parses len bytes of GC.class_histogram text into *out (cleaned first;
 * time_ns, took_ns and all are left for the caller). Errors: JP_ERR_FORMAT
 * (what and which line), JP_ERR_TRUNCATED (no Total line), JP_ERR_LIMIT,
 * JP_ERR_PROTOCOL (the JVM says it produced no histogram). On error *out is
 * empty. */
jp_err jvm_histogram_parse(const char *text, size_t len, jp_heap_histo *out, jp_error *err);

/* Takes one histogram of the JVM t: live objects only (a full GC first)
 * or, with all, every object on the heap. Sets out->time_ns (when the
 * reply was complete), took_ns (from request to reply: the pause and the
 * transfer) and all. o may be NULL for defaults. Errors: those of
 * jvm_jcmd() and jvm_histogram_parse(). */
jp_err jvm_histogram_take(const jvm_proc *t, const jvm_attach_opts *o, bool all, jp_heap_histo *out,
                          jp_error *err);

#endif
