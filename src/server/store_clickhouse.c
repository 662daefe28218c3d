/* The ClickHouse store: open, schema, retention, the ops table. Writes live
 * in ch_write.c (how a batch is written atomically and deduplicated is told
 * there), reads in ch_query.c, HTTP in ch_http.c. */
#include "server/store_clickhouse.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/timeutil.h"
#include "base/xalloc.h"
#include "server/ch_int.h"
#include "wire/gc_json.h"

/* "19.6.2.11" -> 19, 6 */
static void ch_parse_version(ch_store *st, const char *v)
{
    snprintf(st->version, sizeof st->version, "%s", v);
    char *nl = strpbrk(st->version, "\r\n");
    if (nl)
        *nl = '\0';
    char *end;
    st->ver_major = (int)strtol(st->version, &end, 10);
    st->ver_minor = *end == '.' ? (int)strtol(end + 1, NULL, 10) : 0;
    /* TTL came in 19.6; LowCardinality stopped being experimental in 19.x,
     * stay conservative and use it from 20.1 on */
    st->has_ttl = st->ver_major > 19 || (st->ver_major == 19 && st->ver_minor >= 6);
    st->has_lowcard = st->ver_major >= 20;
}

/* ---- retention ---- */

typedef struct ch_parts {
    ch_store *st;
    int retention_days;
    int64_t now;
    int64_t days[64];
    size_t ndays;
    jp_strbuf drops; /* "table\tday\n" */
} ch_parts;

static bool ch_part_row(json_t *row, void *ctx)
{
    ch_parts *p = ctx;
    const char *table = ch_str(row, 0, NULL);
    int64_t day = ch_day(row, 1);
    if (!table || day == INT64_MIN || store_day_retained(day, p->now, p->retention_days))
        return true;
    jp_strbuf_printf(&p->drops, "%s\t", table);
    ch_day_str(&p->drops, day);
    jp_strbuf_putc(&p->drops, '\n');
    bool seen = false;
    for (size_t i = 0; i < p->ndays; i++)
        seen |= p->days[i] == day;
    if (!seen && p->ndays < sizeof p->days / sizeof *p->days)
        p->days[p->ndays++] = day;
    return true;
}

static jp_err ch_enforce_retention(store *s, int retention_days, uint32_t *removed, jp_error *err)
{
    ch_store *st = s->impl;
    ch_parts p = {.st = st, .retention_days = retention_days, .now = store_now_ns()};
    jp_strbuf_init(&p.drops, 0);
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_strbuf_puts(&q, "SELECT table, partition FROM ");
    ch_parts_table(st, &q);
    jp_strbuf_puts(&q, " WHERE active AND database = ");
    ch_sql_str(&q, st->local_db);
    jp_strbuf_puts(&q, " AND table IN (");
    for (size_t i = 0; i < ch_nday_tables; i++) {
        jp_strbuf_puts(&q, i ? ", " : "");
        ch_sql_str(&q, ch_day_tables[i]);
    }
    jp_strbuf_puts(&q, ") GROUP BY table, partition ORDER BY partition");
    ch_result res;
    ch_flush_rejects(st);
    jp_err rc = ch_select(st, q.data, NULL, ch_part_row, &p, &res, err);
    /* drop every expired (table, day); a partition dropped twice is harmless */
    char *line = p.drops.data;
    while (!rc && line && *line) {
        char *nl = strchr(line, '\n'), *tab = strchr(line, '\t');
        if (!nl || !tab || tab > nl)
            break;
        jp_strbuf_reset(&q);
        jp_strbuf_printf(&q, "ALTER TABLE %s.%.*s", st->local_db, (int)(tab - line), line);
        if (st->cluster)
            jp_strbuf_printf(&q, " ON CLUSTER %s", st->cluster);
        jp_strbuf_printf(&q, " DROP PARTITION '%.*s'", (int)(nl - tab - 1), tab + 1);
        rc = ch_exec(st, q.data, true, NULL, err);
        line = nl + 1;
    }
    if (removed)
        *removed = rc ? 0 : (uint32_t)p.ndays;
    pthread_mutex_lock(&st->mu);
    st->stats.retention_runs++;
    if (!rc)
        st->stats.retention_days_removed += p.ndays;
    st->stats.retention_last_run_ns = p.now;
    pthread_mutex_unlock(&st->mu);
    jp_strbuf_cleanup(&p.drops);
    jp_strbuf_cleanup(&q);
    return rc;
}

/* ---- ops ---- */

static void ch_stats(store *s, store_stats *out)
{
    ch_store *st = s->impl;
    pthread_mutex_lock(&st->mu);
    *out = st->stats;
    pthread_mutex_unlock(&st->mu);
}

static void ch_close(store *s)
{
    if (!s)
        return;
    ch_store *st = s->impl;
    ch_writer_stop(st);
    if (st->url && st->rollup)
        ch_rollup_flush(st, true);
    if (st->url)
        ch_flush_rejects(st);
    for (size_t i = 0; i < st->nrejects; i++) {
        free(st->rejects[i].collector);
        free(st->rejects[i].reason);
    }
    free(st->rejects);
    ch_http_cleanup(st);
    jp_u64map_cleanup(&st->known_stacks);
    free(st->inflight);
    pthread_cond_destroy(&st->inflight_cv);
    pthread_cond_destroy(&st->wq_work);
    pthread_cond_destroy(&st->wq_done);
    pthread_rwlock_destroy(&st->stacks_lock);
    pthread_mutex_destroy(&st->stacks_write_mu);
    pthread_mutex_destroy(&st->mu);
    pthread_mutex_destroy(&st->pool_mu);
    free(st->url);
    for (size_t i = 0; i < st->nurls; i++)
        free(st->urls[i]);
    free(st->user);
    if (st->password) {
        memset(st->password, 0, strlen(st->password));
        free(st->password);
    }
    free(st->database);
    free(st->local_db);
    free(st->cluster);
    ch_rollup_cleanup(st);
    ch_stage_cleanup(st);
    ch_frames_cleanup(st);
    free(st);
    free(s);
}

static const store_ops ch_ops = {
    .name = "clickhouse",
    .close = ch_close,
    .write_batch = ch_write_batch,
    .note_rejected = ch_note_rejected,
    .targets = ch_targets,
    .flame = ch_flame,
    .snapshots_latest = ch_snapshots_latest,
    .deadlocks = ch_deadlocks,
    .gc = ch_gc,
    .heaps = ch_heaps,
    .statuses = ch_statuses,
    .ingestion = ch_ingestion,
    .days = ch_days,
    .enforce_retention = ch_enforce_retention,
    .stats = ch_stats,
};

/* ---- open ---- */

static char *ch_url_part(CURLU *u, CURLUPart part, unsigned flags)
{
    char *v = NULL;
    if (curl_url_get(u, part, &v, flags) != CURLUE_OK)
        return NULL;
    char *r = jp_xstrdup(v);
    curl_free(v);
    return r;
}

/* database=NAME from the URL's query string (other parameters are refused:
 * settings belong to the server's own profile). */
static jp_err ch_url_query(const char *query, char **database, jp_error *err)
{
    const char *p = query;
    while (p && *p) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len > 9 && strncmp(p, "database=", 9) == 0) {
            char *raw = jp_xstrndup(p + 9, len - 9);
            int olen = 0;
            char *dec = curl_easy_unescape(NULL, raw, 0, &olen);
            free(raw);
            free(*database);
            *database = jp_xstrdup(dec ? dec : "");
            curl_free(dec);
        } else if (len) {
            return jp_error_set(err, JP_ERR_USAGE,
                                "--clickhouse: unknown URL parameter '%.*s' (only database=)",
                                (int)(len < 40 ? len : 40), p);
        }
        p = amp ? amp + 1 : NULL;
    }
    return JP_OK;
}

/* One URL of the list: its scheme, host, port and path; the credentials and
 * database of the first (first true) go to st. */
static jp_err ch_parse_one(ch_store *st, const char *text, bool first, char **out, jp_error *err)
{
    CURLU *u = curl_url();
    jp_err rc = JP_OK;
    char *query = NULL, *scheme = NULL;
    if (!u || curl_url_set(u, CURLUPART_URL, text, 0) != CURLUE_OK) {
        rc = jp_error_set(err, JP_ERR_USAGE, "--clickhouse: not a URL: %.200s", text);
        goto out;
    }
    scheme = ch_url_part(u, CURLUPART_SCHEME, 0);
    if (!scheme || (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
        rc = jp_error_set(err, JP_ERR_USAGE, "--clickhouse: the URL must be http:// or https://");
        goto out;
    }
    if (first) {
        st->user = ch_url_part(u, CURLUPART_USER, CURLU_URLDECODE);
        st->password = ch_url_part(u, CURLUPART_PASSWORD, CURLU_URLDECODE);
        query = ch_url_part(u, CURLUPART_QUERY, 0);
        if ((rc = ch_url_query(query, &st->database, err)))
            goto out;
    }
    curl_url_set(u, CURLUPART_USER, NULL, 0);
    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
    curl_url_set(u, CURLUPART_QUERY, NULL, 0);
    curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
    *out = ch_url_part(u, CURLUPART_URL, 0);
    if (!*out)
        rc = jp_error_set(err, JP_ERR_USAGE, "--clickhouse: cannot use URL %.200s", text);
out:
    free(query);
    free(scheme);
    curl_url_cleanup(u);
    return rc;
}

/* "URL[,URL...]": the servers to ask, the first first; a request that
 * cannot connect to one tries the next (ch_http.c). */
static jp_err ch_parse_url(ch_store *st, const store_clickhouse_options *o, jp_error *err)
{
    if (!o->url || !*o->url)
        return jp_error_set(err, JP_ERR_USAGE, "--clickhouse: no URL");
    jp_err rc = JP_OK;
    const char *p = o->url;
    while (!rc && *p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char *one = jp_xstrndup(p, len), *url = NULL;
        if (st->nurls == CH_URLS_MAX)
            rc = jp_error_set(err, JP_ERR_USAGE, "--clickhouse: at most %d URLs", CH_URLS_MAX);
        else if (!(rc = ch_parse_one(st, one, st->nurls == 0, &url, err)))
            st->urls[st->nurls++] = url;
        free(one);
        p = comma ? comma + 1 : p + len;
    }
    if (!rc)
        st->url = jp_xstrdup(st->urls[0]);
    return rc;
}

static bool ch_ident_ok(const char *s)
{
    if (!s || !*s || strlen(s) > 64 || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

static void ch_override(char **dst, const char *v)
{
    if (!v)
        return;
    if (*dst)
        memset(*dst, 0, strlen(*dst));
    free(*dst);
    *dst = jp_xstrdup(v);
}

/* First line of a file, without its newline. */
static jp_err ch_read_password(const char *path, char **out, jp_error *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return jp_error_set(err, JP_ERR_IO, "--clickhouse-password-file %s: %s", path,
                            strerror(errno));
    char buf[1024];
    if (!fgets(buf, sizeof buf, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\r\n")] = '\0';
    ch_override(out, buf);
    memset(buf, 0, sizeof buf);
    return JP_OK;
}

static jp_err ch_config(ch_store *st, const store_clickhouse_options *o, const store_config *cfg,
                        jp_error *err)
{
    if (cfg->retention_days < 1 || cfg->retention_days > STORE_RETENTION_MAX_DAYS)
        return jp_error_set(err, JP_ERR_USAGE, "retention must be 1..%d days",
                            STORE_RETENTION_MAX_DAYS);
    st->retention_days = cfg->retention_days;
    jp_err rc = ch_parse_url(st, o, err);
    if (rc)
        return rc;
    ch_override(&st->user, o->user);
    if (o->password_file) {
        if ((rc = ch_read_password(o->password_file, &st->password, err)))
            return rc;
    } else if (!o->password && getenv("JPROF_CLICKHOUSE_PASSWORD")) {
        ch_override(&st->password, getenv("JPROF_CLICKHOUSE_PASSWORD"));
    }
    ch_override(&st->password, o->password);
    ch_override(&st->database, o->database);
    if (!st->user || !*st->user)
        ch_override(&st->user, "default");
    if (!st->password)
        st->password = jp_xstrdup("");
    if (!st->database || !*st->database)
        ch_override(&st->database, "jprof");
    if (!ch_ident_ok(st->database))
        return jp_error_set(err, JP_ERR_USAGE,
                            "clickhouse database name '%.64s': use letters, digits and _",
                            st->database);
    if (o->cluster) {
        if (!ch_ident_ok(o->cluster))
            return jp_error_set(err, JP_ERR_USAGE,
                                "--clickhouse-cluster '%.64s': use letters, digits and _",
                                o->cluster);
        /* the replicated tables in DATABASE_local on every node, the
         * Distributed ones (what the store uses) in DATABASE (ch_schema.c) */
        st->cluster = jp_xstrdup(o->cluster);
        size_t n = strlen(st->database) + 8;
        st->local_db = jp_xmalloc(n);
        snprintf(st->local_db, n, "%s_local", st->database);
        /* an INSERT returns once every shard it touched has its rows; it
         * and the look for commit markers go to the first live replica of
         * each shard in the cluster's order, so every jprof-server reads the
         * markers where the others wrote them (replication is asynchronous) */
        st->insert_settings =
            "insert_distributed_sync=1&load_balancing=in_order&prefer_localhost_replica=0";
        st->marker_settings = "load_balancing=in_order&prefer_localhost_replica=0";
    } else {
        st->local_db = jp_xstrdup(st->database);
    }
    st->connect_timeout_ms =
        o->connect_timeout_ns > 0 ? (long)(o->connect_timeout_ns / 1000000) : 2000;
    st->write_timeout_ms = o->write_timeout_ns > 0 ? (long)(o->write_timeout_ns / 1000000) : 60000;
    if (st->connect_timeout_ms < 1)
        st->connect_timeout_ms = 1;
    if (st->write_timeout_ms < 1)
        st->write_timeout_ms = 1;
    return JP_OK;
}

static bool ch_cluster_row(json_t *row, void *ctx)
{
    ch_store *st = ctx;
    st->shards = ch_u64(row, 0);
    st->replicas = ch_u64(row, 1);
    return true;
}

/* The cluster must be in the server's <remote_servers>. */
static jp_err ch_cluster_check(ch_store *st, jp_error *err)
{
    jp_strbuf q;
    jp_strbuf_init(&q, 0);
    jp_strbuf_puts(&q, "SELECT uniqExact(shard_num), max(replica_num) FROM system.clusters WHERE "
                       "cluster = ");
    ch_sql_str(&q, st->cluster);
    ch_result res;
    ch_select_opts so = {.use_db = false};
    jp_err rc = ch_select_with(st, q.data, &so, ch_cluster_row, st, &res, err);
    jp_strbuf_cleanup(&q);
    if (!rc && !st->shards)
        rc = jp_error_set(err, JP_ERR_USAGE,
                          "--clickhouse-cluster %s: the ClickHouse server at %s has no such "
                          "cluster in its remote_servers (SELECT cluster FROM system.clusters)",
                          st->cluster, st->url);
    return rc;
}

static pthread_once_t ch_curl_once = PTHREAD_ONCE_INIT;
static void ch_curl_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

jp_err store_clickhouse_open(const store_clickhouse_options *o, const store_config *cfg,
                             store **out, jp_error *err)
{
    *out = NULL;
    pthread_once(&ch_curl_once, ch_curl_init);
    ch_store *st = jp_xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->mu, NULL);
    pthread_mutex_init(&st->pool_mu, NULL);
    pthread_cond_init(&st->inflight_cv, NULL);
    pthread_cond_init(&st->wq_work, NULL);
    pthread_cond_init(&st->wq_done, NULL);
    pthread_rwlock_init(&st->stacks_lock, NULL);
    pthread_mutex_init(&st->stacks_write_mu, NULL);
    jp_u64map_init(&st->known_stacks);
    ch_rollup_init(st);
    ch_frames_init(st);
    ch_stage_init(st);
    store *s = jp_xcalloc(1, sizeof *s);
    s->ops = &ch_ops;
    s->impl = st;
    jp_strbuf v;
    jp_strbuf_init(&v, 4096);
    jp_err rc = ch_config(st, o, cfg, err);
    if (!rc)
        rc = ch_exec(st, "SELECT version()", false, &v, err);
    if (!rc) {
        ch_parse_version(st, jp_strbuf_str(&v));
        if (st->ver_major < 18 || (st->ver_major == 18 && st->ver_minor < 16))
            rc = jp_error_set(err, JP_ERR_UNSUPPORTED,
                              "clickhouse %s is too old: 18.16 or newer is needed", st->version);
    }
    if (!rc && st->cluster)
        rc = ch_cluster_check(st, err);
    if (!rc)
        rc = ch_schema(st, err);
    uint32_t removed;
    if (!rc)
        rc = ch_enforce_retention(s, st->retention_days, &removed, err);
    jp_strbuf_cleanup(&v);
    if (rc) {
        jp_error_prefix(err, "clickhouse store: ");
        ch_close(s);
        return rc;
    }
    st->stats.available = true;
    ch_writer_start(st);
    if (!st->writer_started) {
        jp_error_set(err, JP_ERR_NOMEM, "clickhouse store: cannot start its writer thread");
        ch_close(s);
        return JP_ERR_NOMEM;
    }
    *out = s;
    return JP_OK;
}

void store_clickhouse_describe(const store *s, char *buf, size_t len)
{
    const ch_store *st = s->impl;
    char cl[160] = "";
    if (st->cluster)
        snprintf(cl, sizeof cl, ", cluster %s (%llu shards, up to %llu replicas each)", st->cluster,
                 (unsigned long long)st->shards, (unsigned long long)st->replicas);
    snprintf(buf, len, "clickhouse %s at %s%s, database %s, user %s%s%s%s", st->version, st->url,
             st->nurls > 1 ? " (and others)" : "", st->database, st->user, cl,
             st->has_ttl ? ", TTL" : "", st->has_lowcard ? ", LowCardinality" : "");
}
