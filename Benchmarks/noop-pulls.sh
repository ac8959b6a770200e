#!/usr/bin/env bash
# No-op pulls under load: one signed-in session asks `POST /sync/v1/pull` with cursors that are already current, as
# every device does when it syncs and nothing changed, from wrk at 10, 100 and 1,000 connections.
#
#   Benchmarks/noop-pulls.sh [--database postgres://…] [--seconds 10] [--connections "10 100 1000"]
#
# FERRY_BIN names the server binary (default: .build/release/ferry; build it with `swift build -c release --product
# ferry`). Prints one line per level: requests/s, latency p50/p99, errors, and the server's CPU seconds per 10,000
# requests (from /proc, so the load generator's own CPU is not counted). Installs wrk from Debian when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure-packages.sh
command -v wrk >/dev/null || ferry_ensure_packages wrk

database="" seconds=10 levels="10 100 1000"
while [ "$#" -gt 0 ]; do
    case "$1" in
        --database) database=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --connections) levels=$2; shift 2 ;;
        *) echo "usage: $0 [--database URL] [--seconds N] [--connections \"10 100 1000\"]" >&2; exit 64 ;;
    esac
done
bin=${FERRY_BIN:-.build/release/ferry}
[ -x "$bin" ] || { echo "no server binary at $bin: swift build -c release --product ferry" >&2; exit 1; }

work=$(mktemp -d /tmp/ferry-noop.XXXXXX)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
args=(serve --schema Examples/tabletnotes.yaml --data-dir "$work/data" --port "$port" --log-level error)
[ -n "$database" ] && args+=(--database "$database")
# wrk's 1,000 connections need as many descriptors in the server.
ulimit -n 65536 2>/dev/null || true
"$bin" "${args[@]}" >"$work/server.log" 2>&1 &
server=$!
curl -sf --retry 30 --retry-connrefused --retry-delay 1 -o /dev/null "$base/health"
anon=$("$bin" serve --data-dir "$work/data" --print-keys | sed -n "s/^anon key: //p")

email="noop-$RANDOM$RANDOM@example.com"
token=$(curl -sf "$base/auth/v1/signup" -H "apikey: $anon" -H 'Content-Type: application/json' \
    -d "{\"email\":\"$email\",\"password\":\"correct horse battery\"}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
# The first pull (from nothing) reads the personal space's cursor; the benchmark asks with it, so nothing is new.
cursors=$(curl -sf "$base/sync/v1/pull" -H "apikey: $anon" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"cursors":{}}' | python3 -c 'import json,sys; print(json.dumps({"cursors": json.load(sys.stdin)["cursors"]}))')

cat >"$work/pull.lua" <<EOF
wrk.method = "POST"
wrk.body = '$cursors'
wrk.headers["apikey"] = "$anon"
wrk.headers["Authorization"] = "Bearer $token"
wrk.headers["Content-Type"] = "application/json"
errors = 0
response = function(status, headers, body)
    if status ~= 200 then errors = errors + 1 end
end
done = function(summary, latency, requests)
    io.write(string.format("RESULT %.0f %.2f %.2f %d %d\n", summary.requests / (summary.duration / 1e6),
        latency:percentile(50) / 1000, latency:percentile(99) / 1000,
        summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout + summary.errors.status,
        summary.requests))
end
EOF

cpu() { awk '{print $14 + $15}' "/proc/$server/stat"; }
ticks=$(getconf CLK_TCK)
echo "no-op pulls, $seconds s per level, server $("$bin" --version 2>/dev/null || echo "$bin"), ${database:+PostgreSQL}${database:-SQLite}"
printf '%12s %10s %9s %9s %7s %16s\n' connections "req/s" "p50 ms" "p99 ms" errors "CPU s/10k req"
for connections in $levels; do
    threads=$(( connections < 2 ? 1 : 2 ))
    before=$(cpu)
    line=$(wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout 10s -s "$work/pull.lua" "$base/sync/v1/pull" | grep '^RESULT')
    after=$(cpu)
    read -r _ rate p50 p99 errors requests <<<"$line"
    per10k=$(python3 -c "print(f'{($after - $before) / $ticks / max($requests, 1) * 10000:.2f}')")
    printf '%12s %10s %9s %9s %7s %16s\n' "$connections" "$rate" "$p50" "$p99" "$errors" "$per10k"
done
