/* store_sqlite.h - the embedded store: one SQLite database per UTC day.
 *
 * Layout: DATA_DIR/jprof-YYYY-MM-DD.db (WAL mode, synchronous=FULL). Profile
 * windows are zstd-compressed blobs of (stack id, thread id, samples, value)
 * keyed by namespace, service, pod, kind and window start; stacks and thread
 * names are stored once per day. Retention deletes whole files.
 * Per (namespace, service, kind, minute) rollups sum the windows of all pods
 * (sqlite_rollup.c) so service-level flame queries read 10-100x fewer rows.
 *
 * Writes go through one writer thread that commits queued batches together
 * (group commit); callers block until their batch is durable. Reads use their
 * own connections and never wait for the writer. */
#ifndef JP_SERVER_STORE_SQLITE_H
#define JP_SERVER_STORE_SQLITE_H

#include "server/store.h"

/* Opens (creating data_dir's files when missing) and runs retention once.
 * *out is a heap store; close it with store_close(). */
jp_err store_sqlite_open(const char *data_dir, const store_config *cfg, store **out, jp_error *err);

/* Builds the missing rollups of finished 10-minute buckets now (the writer
 * also does this by itself when idle); for tests and operations. */
jp_err store_sqlite_rollup(store *s, uint32_t *built, jp_error *err);

#endif
