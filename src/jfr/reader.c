/* reader.c - jfr_read_file / jfr_read_buffer: the chunks of an input,
 * decoded one after the other (each on several threads, see split.h) and
 * merged in file order. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/failinj.h"
#include "base/xalloc.h"
#include "jfr/chunk.h"
#include "jfr/jfr.h"
#include "jfr/merge.h"
#include "jfr/split.h"

/* Threads never outnumber this, whatever --jobs says. */
#define JFR_MAX_JOBS 256

void jfr_options_init(jfr_options *o)
{
    memset(o, 0, sizeof *o);
    o->tail = 0.1;
    o->jobs = 1;
}

void jfr_report_init(jfr_report *r)
{
    memset(r, 0, sizeof *r);
    jp_error_init(&r->error);
}

bool jfr_states_parse(jfr_options *o, const char *list, jp_error *err)
{
    o->nstates = 0;
    const char *p = list;
    for (;;) {
        size_t n = strcspn(p, ",");
        while (n && isspace((unsigned char)*p))
            p++, n--;
        while (n && isspace((unsigned char)p[n - 1]))
            n--;
        bool prefixed = n >= 6 && !strncasecmp(p, "STATE_", 6);
        size_t len = n + (prefixed ? 0 : 6);
        if (n == 0 || len >= sizeof o->states[0]) {
            jp_error_set(err, JP_ERR_USAGE, "bad thread state '%.*s' in '%s'",
                         (int)(n > 40 ? 40 : n), p, list);
            return false;
        }
        if (o->nstates >= JFR_MAX_STATES) {
            jp_error_set(err, JP_ERR_USAGE, "more than %d thread states in '%s'", JFR_MAX_STATES,
                         list);
            return false;
        }
        char *d = o->states[o->nstates++];
        snprintf(d, sizeof o->states[0], "%s%.*s", prefixed ? "" : "STATE_", (int)n, p);
        for (; *d; d++)
            *d = (char)toupper((unsigned char)*d);
        p += strcspn(p, ",");
        if (!*p)
            return true;
        p++;
    }
}

/* The recording's time range from the chunk headers alone, so relative
 * --from/--to can resolve before any event is read. Stops at the first
 * header that does not check out (the read proper reports it). */
static uint32_t jfr_prescan(jfr_ctx *c, int64_t *start, int64_t *end, jp_err *rc, jp_error *err)
{
    uint32_t n = 0;
    *start = *end = 0;
    *rc = JP_OK;
    for (uint64_t off = 0; off < c->src.len; n++) {
        jfr_header h;
        jp_error e;
        jp_error_init(&e);
        jp_err hrc = jfr_header_parse(c, off, n + 1, &h, &e);
        if (hrc == JP_ERR_IO) {
            /* The file could not be read: nothing further will be either. */
            *rc = hrc;
            *err = e;
        }
        if (hrc)
            break;
        if (!n || h.start_ns < *start)
            *start = h.start_ns;
        if (jfr_sat_add(h.start_ns, h.duration_ns) > *end)
            *end = jfr_sat_add(h.start_ns, h.duration_ns);
        off += h.size;
    }
    return n;
}

static jp_err jfr_ctx_options(jfr_ctx *c, const jfr_options *opt, jfr_report *rep)
{
    c->kinds = opt && opt->kinds ? opt->kinds : (1u << JP_KIND_COUNT) - 1;
    c->threads = opt && opt->threads;
    c->plans_only = opt && opt->plans_only;
    c->gc = !opt || !opt->skip_gc;
    int64_t start, end;
    jp_err rc;
    rep->chunks_total += jfr_prescan(c, &start, &end, &rc, &rep->error);
    c->from_ns = INT64_MIN;
    c->to_ns = INT64_MAX;
    if (opt && opt->has_from)
        c->from_ns = jp_timespec_resolve(&opt->from, start, end);
    if (opt && opt->has_to)
        c->to_ns = jp_timespec_resolve(&opt->to, start, end);
    c->filter = opt && (opt->has_from || opt->has_to);
    if (opt && opt->nstates) {
        c->nstates = opt->nstates > JFR_MAX_STATES ? JFR_MAX_STATES : opt->nstates;
        memcpy(c->states, opt->states, sizeof c->states);
    }
    c->leak = opt && opt->leak;
    c->io_out = opt && (c->kinds & (1u << JP_KIND_IO)) ? opt->io_detail : NULL;
    c->io_detail = c->io_out != NULL;
    return rc;
}

/* Where the chunk walk is: the next header to hand out. */
typedef struct walk {
    size_t off, prev_off;
    uint32_t no; /* number of the next chunk */
    bool done;   /* end of input, or a header that does not check out */
    jp_err rc;   /* that header's error */
    jp_error err;
} walk;

/* Takes the next chunk's header; false when there is none. */
static bool walk_next(const jfr_ctx *c, walk *w, uint32_t *no, size_t *off, size_t *prev_off,
                      jfr_header *h)
{
    if (w->done)
        return false;
    if (w->off >= c->src.len) {
        w->done = true;
        return false;
    }
    w->rc = jfr_header_parse(c, w->off, w->no, h, &w->err);
    if (w->rc) {
        w->done = true;
        return false;
    }
    *no = w->no++;
    *off = w->off;
    *prev_off = w->prev_off;
    w->prev_off = w->off;
    w->off += h->size;
    return true;
}

static jp_err read_chunks(const jfr_ctx *c, jfr_merger *m, walk *w, bool direct)
{
    uint32_t no;
    size_t off, prev_off;
    jfr_header h;
    while (walk_next(c, w, &no, &off, &prev_off, &h)) {
        jfr_chunk_out o;
        jfr_chunk_out_init(&o, c, no, off, &h, no == 1 && direct ? m->out : NULL);
        jfr_chunk_decode(c, &o, prev_off);
        jp_err rc = jfr_merger_add(m, &o);
        jfr_chunk_out_cleanup(&o);
        if (rc)
            return rc;
    }
    return JP_OK;
}

static int jfr_jobs(const jfr_options *opt)
{
    long n = opt ? opt->jobs : 1;
    if (n <= 0)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > JFR_MAX_JOBS)
        n = JFR_MAX_JOBS;
    return n < 1 ? 1 : (int)n;
}

static jp_err jfr_read_core(const jfr_src *src, const jfr_options *opt, jp_profile *out,
                            jfr_report *rep)
{
    jfr_ctx c;
    memset(&c, 0, sizeof c);
    c.src = *src;
    c.name = src->name;
    rep->bytes += src->len;
    c.jobs = jfr_jobs(opt);
    c.block = opt && opt->block ? opt->block : JFR_SPLIT_BLOCK;
    c.step = opt && opt->block ? opt->block : src->map ? JFR_MAP_WINDOW : JFR_READ_STEP;
    jp_err prc = jfr_ctx_options(&c, opt, rep);
    if (prc) {
        rep->partial = true;
        return prc;
    }
    if (src->len == 0) {
        jfr_where w = {.name = c.name, .chunk = 1, .err = &rep->error};
        rep->partial = true;
        return jfr_fail(&w, JP_ERR_TRUNCATED, NULL, "empty input");
    }
    /* The first chunk decodes straight into an empty output: a one-chunk
     * file needs no merge. The same with any number of jobs, so that the
     * output does not depend on it. */
    bool direct = out->nframes == 0 && out->nstacks == 0;
    jfr_merger m;
    jfr_merger_init(&m, &c, out, rep);
    walk w = {.no = 1, .prev_off = SIZE_MAX};
    jp_error_init(&w.err);
    jfr_bytes buf = {0};
    jfr_win win = {0};
    c.buf = &buf;
    c.win = &win;
    c.team = jfr_team_new(c.jobs);
    jp_err rc = read_chunks(&c, &m, &w, direct);
    jfr_team_free(c.team);
    jfr_bytes_cleanup(&buf);
    jfr_win_unmap(&win);
    if (!rc && w.rc) {
        rep->partial = true;
        rep->error = w.err;
        rc = w.rc;
    }
    jfr_merger_finish(&m, opt ? opt->tail : 0.1);
    jfr_merger_cleanup(&m);
    if (rc)
        rep->partial = true;
    return rc;
}

jp_err jfr_read_buffer(const uint8_t *data, size_t len, const char *name, const jfr_options *opt,
                       jp_profile *out, jfr_report *rep)
{
    jfr_src src = {.mem = data ? data : (const uint8_t *)"",
                   .fd = -1,
                   .len = len,
                   .name = name ? name : "input"};
    return jfr_read_core(&src, opt, out, rep);
}

/* A file is read piece by piece (src.h): with pread, or through mapped
 * windows as opt->read says; never read or mapped whole. */
jp_err jfr_read_file(const char *path, const jfr_options *opt, jp_profile *out, jfr_report *rep)
{
    int fd = jp_fail_inject("jfr read") ? (errno = EIO, -1) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return jp_error_set(&rep->error, errno == EACCES ? JP_ERR_PERMISSION : JP_ERR_IO,
                            "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int fe = fstat(fd, &st) < 0 ? errno : 0;
    if (fe || !S_ISREG(st.st_mode)) {
        int e = fe;
        close(fd);
        return jp_error_set(&rep->error, JP_ERR_IO, "%s: not a regular file%s%s", path,
                            e ? ": " : "", e ? strerror(e) : "");
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    jfr_src src = {.fd = fd, .len = (uint64_t)st.st_size, .name = path};
    /* auto: one thread only. With more, each window unmapped interrupts
     * the others (a TLB shootdown), and their reads of mapped pages miss
     * the TLB where the kernel's copy does not: measured with two threads,
     * mapping lost to pread (bench/jfr/peers, docs/PERFORMANCE.md). */
    int how = opt ? opt->read : JFR_READ_PREAD;
    src.map = how == JFR_READ_MAP ||
              (how == JFR_READ_AUTO && jfr_jobs(opt) == 1 && jfr_map_pays(fd, src.len));
    jp_err rc = jfr_read_core(&src, opt, out, rep);
    close(fd);
    return rc;
}
