/* iodetail.c - I/O waits per endpoint and file (see iodetail.h). */
#include "model/iodetail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

static const char *const target_names[] = {"socket", "file"};

const char *jp_io_target_name(jp_io_target t)
{
    return (unsigned)t < JP_IO_TARGET_COUNT ? target_names[t] : "?";
}

void jp_io_detail_init(jp_io_detail *d)
{
    memset(d, 0, sizeof *d);
    jp_u64map_init(&d->index);
}

void jp_io_detail_cleanup(jp_io_detail *d)
{
    for (size_t i = 0; i < d->count; i++)
        free(d->entries[i].name);
    free(d->entries);
    jp_u64map_cleanup(&d->index);
    memset(d, 0, sizeof *d);
    jp_u64map_init(&d->index);
}

static uint64_t name_hash(jp_io_target t, const char *name, size_t len)
{
    return jp_hash_combine(jp_hash_bytes(name, len), (uint64_t)t);
}

/* The entry of (t, name), NULL when absent and the table is full. */
static jp_io_entry *lookup(jp_io_detail *d, jp_io_target t, const char *name, size_t len)
{
    uint64_t key = name_hash(t, name, len), at;
    /* a 64-bit collision moves on to the next key in a fixed sequence */
    while (jp_u64map_get(&d->index, key, &at)) {
        jp_io_entry *e = &d->entries[at];
        if (e->target == t && e->len == len && !memcmp(e->name, name, len))
            return e;
        key = jp_hash_u64(key + 1);
    }
    if (d->count >= JP_IO_MAX_ENTRIES)
        return NULL;
    d->entries = jp_xgrow(d->entries, &d->cap, d->count + 1, sizeof *d->entries);
    jp_io_entry *e = &d->entries[d->count];
    e->name = jp_xmalloc(len + 1);
    memcpy(e->name, name, len);
    e->name[len] = '\0';
    e->len = len;
    e->target = t;
    e->events = e->ns = 0;
    jp_u64map_put(&d->index, key, d->count++);
    return e;
}

void jp_io_detail_add(jp_io_detail *d, jp_io_target t, const char *name, size_t len,
                      uint64_t events, uint64_t ns)
{
    if ((unsigned)t >= JP_IO_TARGET_COUNT)
        return;
    char cut[JP_IO_NAME_MAX];
    if (len > JP_IO_NAME_MAX) {
        /* cut is a counted string (name, len), like every name here: no NUL */
        // NOLINTNEXTLINE(bugprone-not-null-terminated-result): counted, never read as a C string
        memcpy(cut, name, JP_IO_NAME_MAX - 3);
        // NOLINTNEXTLINE(bugprone-not-null-terminated-result): the same counted name
        memcpy(cut + JP_IO_NAME_MAX - 3, "...", 3);
        name = cut;
        len = JP_IO_NAME_MAX;
    }
    d->events[t] += events;
    d->ns[t] += ns;
    jp_io_entry *e = lookup(d, t, name, len);
    if (!e) {
        d->other_events[t] += events;
        d->other_ns[t] += ns;
        return;
    }
    e->events += events;
    e->ns += ns;
}

void jp_io_detail_add_socket(jp_io_detail *d, const char *host, size_t hlen, const char *addr,
                             size_t alen, int64_t port, uint64_t events, uint64_t ns)
{
    if (!hlen) {
        host = addr;
        hlen = alen;
    }
    if (hlen > JP_IO_NAME_MAX)
        hlen = JP_IO_NAME_MAX;
    bool v6 = memchr(host, ':', hlen) != NULL;
    char buf[JP_IO_NAME_MAX + 32];
    int n = snprintf(buf, sizeof buf, "%s%.*s%s:%lld", v6 ? "[" : "", (int)hlen, host,
                     v6 ? "]" : "", (long long)port);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    jp_io_detail_add(d, JP_IO_SOCKET, buf, len, events, ns);
}

void jp_io_detail_merge(jp_io_detail *dst, const jp_io_detail *src)
{
    for (size_t i = 0; i < src->count; i++) {
        const jp_io_entry *e = &src->entries[i];
        jp_io_detail_add(dst, e->target, e->name, e->len, e->events, e->ns);
    }
    for (int t = 0; t < JP_IO_TARGET_COUNT; t++) {
        dst->events[t] += src->other_events[t];
        dst->ns[t] += src->other_ns[t];
        dst->other_events[t] += src->other_events[t];
        dst->other_ns[t] += src->other_ns[t];
    }
}

static int entry_cmp(const void *a, const void *b)
{
    const jp_io_entry *x = *(const jp_io_entry *const *)a, *y = *(const jp_io_entry *const *)b;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    if (x->events != y->events)
        return x->events > y->events ? -1 : 1;
    int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
    return c ? c : (x->len < y->len ? -1 : x->len > y->len);
}

size_t jp_io_detail_top(const jp_io_detail *d, jp_io_target t, size_t limit,
                        const jp_io_entry ***out)
{
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    const jp_io_entry **v = jp_xcalloc(d->count ? d->count : 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; i < d->count; i++)
        if (d->entries[i].target == t)
            v[n++] = &d->entries[i];
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    qsort(v, n, sizeof *v, entry_cmp);
    if (limit && n > limit)
        n = limit;
    *out = v;
    return n;
}
