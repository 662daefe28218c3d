#!/bin/sh
# test_server_clickhouse.sh - jprof-server on the ClickHouse store, against a
# real clickhouse-server (Debian's package) started here on free loopback
# ports in a temporary directory (clickhouse-server.sh), one server for all
# cases, stopped at the end whatever happens:
#   1. the store-level comparison with the embedded store, budgets and dedupe
#      (tests/unit/test_store_clickhouse, when it was built)
#   2. the shared API suite (server_api.py), every case on its own database
#   3. ClickHouse stopped mid-run -> 503 with a reason, recovery after restart
#      (test_server_clickhouse_cases.py)
# Exit: 0 pass, 1 fail, 77 skip (clickhouse-server or python3 missing; with
# CI=true a missing tool is a failure).
set -u
here=$(cd "$(dirname "$0")" && pwd)
server=${JPROF_SERVER:-./jprof-server}

skip() {
    echo "test_server_clickhouse.sh: SKIP: $*" >&2
    if [ "${CI:-}" = true ]; then
        echo "test_server_clickhouse.sh: CI=true: a missing tool is a failure" >&2
        exit 1
    fi
    exit 77
}
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
[ -x "$server" ] || { echo "test_server_clickhouse.sh: $server not built" >&2; exit 99; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/jprof-ch-test.XXXXXX")
cleanup() {
    "$here/clickhouse-server.sh" stop "$tmp/ch" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

url=$("$here/clickhouse-server.sh" start "$tmp/ch")
rc=$?
if [ $rc = 77 ]; then
    skip "clickhouse-server is not installed (apt-get install clickhouse-server)"
elif [ $rc != 0 ]; then
    echo "test_server_clickhouse.sh: FAIL: clickhouse-server did not start" >&2
    exit 1
fi
echo "clickhouse-server at $url ($(curl -sS "${url}?query=SELECT%20version()"))"
export JPROF_TEST_CLICKHOUSE_URL=$url
export JPROF_TEST_CLICKHOUSE_DIR=$tmp/ch
export JPROF_TEST_CLICKHOUSE_CTL=$here/clickhouse-server.sh

# every {data} directory of the suite gets its own database, so cases do not
# see each other's data (exec: signals reach jprof-server itself)
wrap=$tmp/jprof-server-ch
cat >"$wrap" <<WRAP
#!/bin/sh
data=\$1
shift
mkdir -p "\$data"
db=jt_\$(printf %s "\$data" | cksum | cut -d' ' -f1)
exec "$(cd "$(dirname "$server")" && pwd)/$(basename "$server")" --clickhouse "$url" \\
    --clickhouse-database "\$db" "\$@"
WRAP
chmod +x "$wrap"

failed=0
if [ -x tests/unit/test_store_clickhouse ]; then
    echo "== store level: tests/unit/test_store_clickhouse"
    tests/unit/test_store_clickhouse || failed=1
else
    echo "== store level: tests/unit/test_store_clickhouse not built (make check builds it)"
fi

echo "== API suite (server_api.py) on ClickHouse"
JPROF_SERVER_CMD="$wrap {data}" python3 "$here/server_api.py"
rc=$?
[ $rc = 0 ] || [ $rc = 77 ] || failed=1

echo "== ClickHouse outage and recovery"
JPROF_SERVER_CMD="$wrap {data}" python3 "$here/test_server_clickhouse_cases.py" || failed=1

[ $failed = 0 ] && echo "test_server_clickhouse.sh: PASS"
exit $failed
