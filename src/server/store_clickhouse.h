/* store_clickhouse.h - the store over ClickHouse's HTTP interface (libcurl).
 *
 * jprof-server keeps no state of its own here (batch ids included), so any
 * number of replicas can share one ClickHouse. Tables (all MergeTree family,
 * PARTITION BY day, names prefixed jprof_): samples (one row per window x
 * stack x thread), windows (one row per profile window), stacks (once per day
 * and stack id, ReplacingMergeTree), statuses, snapshots, deadlocks, ingest
 * (the ingestion log; its accepted rows are the batches' commit markers) and
 * schema (the schema version). Retention drops expired day partitions; on
 * servers that know TTL (19.6+) the tables carry one as a safety net.
 *
 * Atomic batches without transactions: every row a batch writes carries the
 * write attempt's id, and readers only see rows whose attempt is the winning
 * (smallest) committed attempt of its batch id. A batch becomes visible at
 * once when its commit marker is inserted; a write that fails half-way leaves
 * invisible rows that retention removes. Details and the remaining race are
 * in store_clickhouse.c.
 *
 * Ownership: the returned store owns copies of every string of the options. */
#ifndef JP_SERVER_STORE_CLICKHOUSE_H
#define JP_SERVER_STORE_CLICKHOUSE_H

#include "server/store.h"

typedef struct store_clickhouse_options {
    /* http[s]://[user[:password]@]host:port[/][?database=NAME]; required.
     * Several, comma-separated: a request that cannot connect to one tries
     * the next (the nodes of a cluster); credentials and database come from
     * the first. */
    const char *url;
    /* override what the URL says; NULL = take it from the URL, else
     * user "default", no password, database "jprof" */
    const char *user, *password, *database;
    /* a file whose first line is the password (kept out of the process
     * list); when neither it nor password is given, the environment
     * variable JPROF_CLICKHOUSE_PASSWORD, then the URL */
    const char *password_file;
    /* the cluster (in the servers' <remote_servers>) the tables are
     * replicated and sharded over; NULL = one server (ch_schema.c) */
    const char *cluster;
    int64_t connect_timeout_ns; /* 0 = 2 s */
    int64_t write_timeout_ns;   /* one INSERT; 0 = 60 s */
} store_clickhouse_options;

/* Connects, checks the server version, creates or migrates the schema and
 * runs retention once. Fails (JP_ERR_IO / JP_ERR_TIMEOUT) when ClickHouse
 * cannot be reached at start; later outages are reported per call and the
 * store recovers by itself when ClickHouse answers again. */
jp_err store_clickhouse_open(const store_clickhouse_options *opt, const store_config *cfg,
                             store **out, jp_error *err);

/* One line for the start-up log: version, URL (no credentials), database,
 * user and the features in use. Never the password. */
void store_clickhouse_describe(const store *s, char *buf, size_t len);

#endif
