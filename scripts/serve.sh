#!/usr/bin/env bash
# Runs `ferry serve` (embedded SQLite in ./ferry-data by default); arguments go to `ferry serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure-packages.sh
ferry_ensure_packages libsqlite3-dev libgit2-dev
swift build --product ferry
exec .build/debug/ferry serve "$@"
