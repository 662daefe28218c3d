/* reader.c - jfr_read_file / jfr_read_buffer: the chunk loop over an input. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jfr/chunk.h"
#include "jfr/jfr.h"

void jfr_options_init(jfr_options *o)
{
    memset(o, 0, sizeof *o);
}

void jfr_report_init(jfr_report *r)
{
    memset(r, 0, sizeof *r);
    jp_error_init(&r->error);
}

/* The recording's time range from the chunk headers alone, so relative
 * --from/--to can resolve before any event is read. Stops at the first
 * header that does not check out (the read proper reports it). */
static uint32_t jfr_prescan(jfr_ctx *c, int64_t *start, int64_t *end)
{
    uint32_t n = 0;
    size_t released = 0;
    *start = *end = 0;
    for (size_t off = 0; off < c->len; n++) {
        jfr_header h;
        if (jfr_header_parse(c, off, n + 1, &h, NULL))
            break;
        if (!n || h.start_ns < *start)
            *start = h.start_ns;
        if (jfr_sat_add(h.start_ns, h.duration_ns) > *end)
            *end = jfr_sat_add(h.start_ns, h.duration_ns);
        off += h.size;
        /* Each header read faults in a window of pages around it: files of
         * many small chunks would otherwise map most of themselves here. */
        if (off - released >= (8u << 20)) {
            jfr_release(c, released, off);
            released = off;
        }
    }
    jfr_release(c, 0, c->len);
    return n;
}

static void jfr_ctx_options(jfr_ctx *c, const jfr_options *opt)
{
    c->kinds = opt && opt->kinds ? opt->kinds : (1u << JP_KIND_COUNT) - 1;
    c->threads = opt && opt->threads;
    int64_t start, end;
    c->rep->chunks_total += jfr_prescan(c, &start, &end);
    c->from_ns = INT64_MIN;
    c->to_ns = INT64_MAX;
    if (opt && opt->has_from)
        c->from_ns = jp_timespec_resolve(&opt->from, start, end);
    if (opt && opt->has_to)
        c->to_ns = jp_timespec_resolve(&opt->to, start, end);
    c->filter = opt && (opt->has_from || opt->has_to);
}

static jp_err jfr_read_core(const uint8_t *data, size_t len, const char *name,
                            const jfr_options *opt, jp_profile *out, jfr_report *rep, bool release)
{
    jfr_ctx c;
    memset(&c, 0, sizeof c);
    c.base = data;
    c.len = len;
    c.name = name ? name : "input";
    c.prof = out;
    c.rep = rep;
    c.release = release;
    c.page = (size_t)sysconf(_SC_PAGESIZE);
    c.warn = (jfr_warner){.rep = rep, .name = c.name};
    rep->bytes += len;
    jfr_ctx_options(&c, opt);
    if (len == 0) {
        jfr_where w = {.base = data, .name = c.name, .chunk = 1, .err = &rep->error};
        rep->partial = true;
        return jfr_fail(&w, JP_ERR_TRUNCATED, data, "empty input");
    }
    uint32_t no = 1;
    for (size_t off = 0; off < len; no++) {
        jfr_header h;
        jp_err rc = jfr_header_parse(&c, off, no, &h, &rep->error);
        if (!rc) {
            if (no == 1) {
                rep->major = h.major;
                rep->minor = h.minor;
            }
            rc = jfr_chunk_read(&c, off, no, &h);
        }
        if (rc) {
            rep->partial = true;
            jfr_ctx_cleanup(&c);
            return rc;
        }
        rep->chunks_read++;
        off += h.size;
    }
    jfr_ctx_cleanup(&c);
    return JP_OK;
}

jp_err jfr_read_buffer(const uint8_t *data, size_t len, const char *name, const jfr_options *opt,
                       jp_profile *out, jfr_report *rep)
{
    return jfr_read_core(data, len, name, opt, out, rep, false);
}

jp_err jfr_read_file(const char *path, const jfr_options *opt, jp_profile *out, jfr_report *rep)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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
    size_t len = (size_t)st.st_size;
    if (len == 0) {
        close(fd);
        return jfr_read_core((const uint8_t *)"", 0, path, opt, out, rep, false);
    }
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED)
        return jp_error_set(&rep->error, JP_ERR_IO, "%s: cannot map: %s", path, strerror(e));
    madvise(map, len, MADV_SEQUENTIAL);
    jp_err rc = jfr_read_core(map, len, path, opt, out, rep, true);
    munmap(map, len);
    return rc;
}
