/* hash.h - stable 64-bit hashing and an open-addressing u64 -> u64 map.
 *
 * The hashes are unseeded on purpose: a stack's id must be the same in every
 * process and on every day (ARCHITECTURE.md, "Stack"). Not for hash tables
 * fed by an adversary where flooding matters more than stability. */
#ifndef JP_BASE_HASH_H
#define JP_BASE_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Hash of a byte string (FNV-1a 64 followed by a finalizing mix). */
uint64_t jp_hash_bytes(const void *data, size_t len);

/* Mixes a running hash with one more 64-bit value; order-sensitive. */
static inline uint64_t jp_hash_combine(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

/* Finalizer for integer keys (splitmix64 style). */
static inline uint64_t jp_hash_u64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* Open-addressing map from uint64 keys to uint64 values. Any key value is
 * allowed. Caller storage: jp_u64map_init / jp_u64map_cleanup. Not thread-safe. */
typedef struct jp_u64map {
    uint64_t *keys;
    uint64_t *vals;
    uint8_t *used;
    size_t cap; /* power of two or 0 */
    size_t count;
} jp_u64map;

void jp_u64map_init(jp_u64map *m);
void jp_u64map_cleanup(jp_u64map *m);
void jp_u64map_clear(jp_u64map *m);
/* Returns true and sets *val when key is present. */
bool jp_u64map_get(const jp_u64map *m, uint64_t key, uint64_t *val);
/* Inserts or overwrites. */
void jp_u64map_put(jp_u64map *m, uint64_t key, uint64_t val);
/* Returns a pointer to the value slot for key, inserting `init` if absent;
 * *inserted tells which. The pointer is valid until the next insertion. */
uint64_t *jp_u64map_upsert(jp_u64map *m, uint64_t key, uint64_t init, bool *inserted);

#endif
