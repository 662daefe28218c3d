#include "base/hash.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

/* Eight bytes as a little-endian number (GCC and clang make this one load). */
static inline uint64_t jp_hash_le64(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

uint64_t jp_hash_bytes(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i = 0;
    /* 8 bytes at a time, then the tail: FNV-1a-like but word-wide for speed.
     * The word is read little-endian on every machine (the compiler makes it
     * one load where that is the native order): stack and frame ids are
     * stored and compared across machines, so they must not depend on it. */
    for (; i + 8 <= len; i += 8) {
        uint64_t w = jp_hash_le64(p + i);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return jp_hash_u64(h ^ len);
}

void jp_u64map_init(jp_u64map *m)
{
    memset(m, 0, sizeof *m);
}

void jp_u64map_cleanup(jp_u64map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

void jp_u64map_clear(jp_u64map *m)
{
    if (m->used)
        memset(m->used, 0, m->cap);
    m->count = 0;
}

static size_t jp_u64map_slot(const jp_u64map *m, uint64_t key)
{
    size_t mask = m->cap - 1;
    size_t i = (size_t)jp_hash_u64(key) & mask;
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & mask;
    return i;
}

static void jp_u64map_resize(jp_u64map *m, size_t ncap)
{
    jp_u64map n;
    n.cap = ncap;
    n.count = 0;
    n.keys = jp_xreallocarray(NULL, ncap, sizeof *n.keys);
    n.vals = jp_xreallocarray(NULL, ncap, sizeof *n.vals);
    n.used = jp_xcalloc(ncap, 1);
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i])
            continue;
        size_t s = jp_u64map_slot(&n, m->keys[i]);
        n.used[s] = 1;
        n.keys[s] = m->keys[i];
        n.vals[s] = m->vals[i];
        n.count++;
    }
    jp_u64map_cleanup(m);
    *m = n;
}

bool jp_u64map_get(const jp_u64map *m, uint64_t key, uint64_t *val)
{
    if (!m->cap)
        return false;
    size_t s = jp_u64map_slot(m, key);
    if (!m->used[s])
        return false;
    if (val)
        *val = m->vals[s];
    return true;
}

uint64_t *jp_u64map_upsert(jp_u64map *m, uint64_t key, uint64_t init, bool *inserted)
{
    if ((m->count + 1) * 4 > m->cap * 3)
        jp_u64map_resize(m, m->cap ? m->cap * 2 : 64);
    size_t s = jp_u64map_slot(m, key);
    if (!m->used[s]) {
        m->used[s] = 1;
        m->keys[s] = key;
        m->vals[s] = init;
        m->count++;
        if (inserted)
            *inserted = true;
    } else if (inserted) {
        *inserted = false;
    }
    return &m->vals[s];
}

void jp_u64map_put(jp_u64map *m, uint64_t key, uint64_t val)
{
    *jp_u64map_upsert(m, key, val, NULL) = val;
}
