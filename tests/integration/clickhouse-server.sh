#!/bin/sh
# clickhouse-server.sh - a throwaway ClickHouse server for tests.
#
#   clickhouse-server.sh start DIR   writes a config into DIR (created), starts
#                                    clickhouse-server on free loopback ports with
#                                    its data, logs and tmp under DIR, waits until
#                                    it answers (bounded), prints its HTTP URL
#   clickhouse-server.sh stop DIR    stops it (TERM, then KILL) by the pid in DIR
#   clickhouse-server.sh restart DIR same ports, same data (after a stop)
#
# Environment (for clickhouse-cluster.sh): CLICKHOUSE_PORTS="HTTP TCP INTERSERVER"
# instead of free ports; CLICKHOUSE_EXTRA_CONFIG, a file whose XML goes into
# the config (remote_servers, zookeeper, macros).
# Exit codes: 0 ok, 77 clickhouse-server is not installed (and CI is not set),
# 1 it did not come up (the tail of its log goes to stderr).
# Users: "default" without a password, and "jprof" with password "jprof-test"
# (so tests can check credentials travel). Timezone UTC, whatever the host says.
set -eu

die() { echo "clickhouse-server.sh: $*" >&2; exit 1; }

find_binary() {
    for b in "${CLICKHOUSE_SERVER:-}" clickhouse-server /usr/sbin/clickhouse-server \
        /usr/bin/clickhouse-server; do
        [ -n "$b" ] || continue
        if command -v "$b" >/dev/null 2>&1; then command -v "$b"; return 0; fi
    done
    return 1
}

free_port() {
    python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

write_config() {
    dir=$1 http=$2 tcp=$3 inter=$4
    mkdir -p "$dir/data" "$dir/tmp" "$dir/user_files" "$dir/log" "$dir/format_schemas"
    cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <logger>
        <level>warning</level>
        <log>$dir/log/server.log</log>
        <errorlog>$dir/log/server.err.log</errorlog>
        <size>10M</size>
        <count>1</count>
    </logger>
    <http_port>$http</http_port>
    <tcp_port>$tcp</tcp_port>
    <interserver_http_port>$inter</interserver_http_port>
    <listen_host>127.0.0.1</listen_host>
    <max_connections>256</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>64</max_concurrent_queries>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
    <mark_cache_size>67108864</mark_cache_size>
    <path>$dir/data/</path>
    <tmp_path>$dir/tmp/</tmp_path>
    <user_files_path>$dir/user_files/</user_files_path>
    <format_schema_path>$dir/format_schemas/</format_schema_path>
    <users_config>$dir/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
$(cat "${CLICKHOUSE_EXTRA_CONFIG:-/dev/null}")
</yandex>
XML
    cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>1000000000</max_memory_usage>
            <load_balancing>random</load_balancing>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
        <jprof>
            <password>jprof-test</password>
            <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
            <profile>default</profile>
            <quota>default</quota>
        </jprof>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries><errors>0</errors><result_rows>0</result_rows>
                <read_rows>0</read_rows><execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
XML
    echo "http://127.0.0.1:$http/" >"$dir/url"
}

# Starts the server of an existing config and waits until it answers.
launch() {
    dir=$1
    bin=$(find_binary) || die "clickhouse-server vanished"
    url=$(cat "$dir/url")
    # setsid: the server must not get the test's terminal signals; its own
    # process group lets stop() reach it and nothing else
    setsid "$bin" --config-file="$dir/config.xml" >>"$dir/log/stdout.log" 2>&1 </dev/null &
    echo $! >"$dir/pid"
    i=0
    while [ $i -lt 300 ]; do # 300 x 0.1 s = 30 s at most
        if curl -fsS --max-time 1 "${url}?query=SELECT%201" >/dev/null 2>&1; then
            echo "$url"
            return 0
        fi
        if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
            break
        fi
        sleep 0.1
        i=$((i + 1))
    done
    echo "clickhouse-server.sh: server in $dir did not answer on $url; log tail:" >&2
    tail -n 20 "$dir/log/server.err.log" "$dir/log/stdout.log" >&2 2>/dev/null || true
    stop "$dir"
    return 1
}

stop() {
    dir=$1
    [ -f "$dir/pid" ] || return 0
    pid=$(cat "$dir/pid")
    rm -f "$dir/pid"
    kill -TERM "$pid" 2>/dev/null || return 0
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do # 10 s, then KILL
        sleep 0.1
        i=$((i + 1))
    done
    kill -KILL "$pid" 2>/dev/null || true
    # reap a zombie child of ours, if we are its parent (ignored otherwise)
    wait "$pid" 2>/dev/null || true
}

cmd=${1:-}
dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || die "usage: $0 start|stop|restart DIR"
case $cmd in
start)
    if ! find_binary >/dev/null; then
        if [ "${CI:-}" = true ]; then
            die "clickhouse-server is not installed (CI=true: this is a failure; apt-get install clickhouse-server)"
        fi
        echo "clickhouse-server.sh: clickhouse-server is not installed (apt-get install clickhouse-server)" >&2
        exit 77
    fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    # shellcheck disable=SC2086
    [ -n "${CLICKHOUSE_PORTS:-}" ] && set -- $CLICKHOUSE_PORTS || set -- "$(free_port)" "$(free_port)" "$(free_port)"
    write_config "$dir" "$1" "$2" "$3"
    launch "$dir"
    ;;
restart)
    dir=$(cd "$dir" && pwd)
    [ -f "$dir/url" ] || die "$dir has no server config (run start first)"
    launch "$dir"
    ;;
stop)
    stop "$dir"
    ;;
*) die "unknown command $cmd" ;;
esac
