#!/bin/sh
# test_server_api.sh - the jprof-server API suite (server_api.py) against the
# embedded SQLite store. The same suite runs against another store by setting
# JPROF_SERVER_CMD (see server_api.py), e.g.
#   JPROF_SERVER_CMD="./jprof-server --clickhouse http://127.0.0.1:8123/"
# Exit: 0 pass, 1 fail, 77 skipped (python3 missing; a failure when CI=true).
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v python3 >/dev/null 2>&1; then
    echo "test_server_api.sh: SKIP: python3 not found" >&2
    [ "${CI:-}" = true ] && exit 1
    exit 77
fi
exec python3 "$here/server_api.py"
