#!/bin/sh
# test_web.sh - the web page in headless Chromium (test_web.mjs): installs
# playwright-core with `npm ci` from the committed package-lock.json into the
# build dir (tests/integration/web-test.d; never a browser download: the
# test drives Debian's chromium), then runs the test. Screenshots of every
# view are left in tests/integration/web-test.d/shots/.
# Exit: 0 pass, 1 fail, 77 skipped (node, npm or chromium missing; a failure
# when CI=true).
here=$(cd "$(dirname "$0")" && pwd)
work=tests/integration/web-test.d
skip() {
    echo "test_web.sh: SKIP: $*" >&2
    [ "${CI:-}" = true ] && exit 1
    exit 77
}
command -v node >/dev/null 2>&1 || skip "node not found (apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 || skip "npm not found (apt-get install npm)"
[ -x "${JPROF_CHROMIUM:-/usr/bin/chromium}" ] || skip "chromium not found (scripts/install-deps installs it)"
command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 || skip "no JDK (java, javac)"
mkdir -p "$work"
# npm ci again only when the lock file changed
if ! cmp -s "$here/package-lock.json" "$work/package-lock.json" ||
    [ ! -f "$work/node_modules/playwright-core/package.json" ]; then
    cp "$here/package.json" "$here/package-lock.json" "$work/" || exit 1
    (cd "$work" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error) || {
        echo "test_web.sh: npm ci failed" >&2
        exit 1
    }
fi
rm -rf "$work/shots"
JPROF_WEB_NODE_MODULES="$(pwd)/$work/node_modules" exec node "$here/test_web.mjs"
