#!/usr/bin/env bash
# Runs `ferry serve` (embedded SQLite in ./ferry-data by default); arguments go to `ferry serve`.
# Relative paths (--schema, --data-dir) are the caller's: the server runs in the folder this script was called from.
# The build's output goes to stderr, and the build is skipped when the binary is newer than every source.
set -euo pipefail
caller=$(pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
source scripts/ensure-packages.sh
ferry_ensure_packages libsqlite3-dev libgit2-dev
binary=.build/debug/ferry
# FERRY_SERVE_SKIP_BUILD=1 runs the binary as it is (the tests use it: a build inside `swift test` would wait on its lock).
if [ "${FERRY_SERVE_SKIP_BUILD:-0}" != 1 ] && { [ ! -x "$binary" ] || [ -n "$(find Package.swift Sources Plugins -newer "$binary" -print -quit)" ]; }; then
    echo "ferry: building (swift build --product ferry)…" >&2
    swift build --product ferry >&2
fi
cd "$caller"
exec "$repo/$binary" serve "$@"
