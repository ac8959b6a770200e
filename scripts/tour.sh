#!/usr/bin/env bash
# Runs the README's tour as a newcomer would paste it: every ```sh block between "## A tour" and the next "## "
# heading, in order, except a block right after a line `<!-- tour: skip -->`, as one script under
# `set -euo pipefail`. It runs in a fresh temporary folder (Examples/ linked in, TMPDIR and FERRY_HOME inside it),
# on a free port in place of 8080, and fails on the first failing command, naming it. Servers the tour left
# running are stopped on exit.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
source "$repo/scripts/ensure-packages.sh"
ferry_ensure_packages curl git python3 || echo "tour: continuing without some packages" >&2
[ -x "$repo/.build/debug/ferry" ] || (cd "$repo" && swift build --product ferry)

work=$(mktemp -d /tmp/ferry-tour.XXXXXX)
trap 'rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# The tour's commands, 8080 replaced by the free port so a server already on 8080 does not get in the way.
awk '
    /^## /                   { tour = ($0 == "## A tour"); next }
    !tour                    { next }
    /^<!-- tour: skip -->$/  { skip = 1; next }
    /^```sh$/ && !block      { block = 1; skipping = skip; skip = 0; next }
    /^```$/ && block         { block = 0; next }
    block                    { if (!skipping) print; next }
    NF                       { skip = 0 }
' "$repo/README.md" | sed "s/8080/$port/g" > "$work/commands.sh"
[ -s "$work/commands.sh" ] || { echo "tour: README.md has no sh blocks under '## A tour'" >&2; exit 1; }
{
    cat <<'PRELUDE'
set -Eeuo pipefail
trap 'echo "tour: failed (exit $?): $BASH_COMMAND" >&2' ERR
trap 'exit 143' INT TERM
trap 'kill $(jobs -p) 2>/dev/null || true; wait' EXIT
PRELUDE
    cat "$work/commands.sh"
} > "$work/tour.sh"

cd "$work"
ln -s "$repo/Examples" Examples
started=$SECONDS
if PATH="$repo/.build/debug:$PATH" FERRY_HOME="$work/home" TMPDIR="$work" timeout -k 10 600 bash tour.sh; then
    echo "tour: passed in $((SECONDS - started)) s (port $port)"
else
    status=$?
    [ "$status" -ne 124 ] || echo "tour: timed out after 600 s" >&2
    echo "tour: the README's tour failed (exit $status; port $port in place of 8080)" >&2
    exit "$status"
fi
