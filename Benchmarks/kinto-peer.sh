#!/usr/bin/env bash
# Ferry against a peer, Kinto (PyPI), on one PostgreSQL cluster, driven by a plain Python HTTP client
# (Benchmarks/kinto_peer_client.py): both get the same records, then the client times a cold pull of all of them
# (records/s, the median of 5) and a no-op pull (median of 20 requests), and prints a table and, last, one JSON line.
#
#   Benchmarks/kinto-peer.sh                    # 20,000 records, a throwaway PostgreSQL cluster
#   Benchmarks/kinto-peer.sh --records 5000 --cold-pulls 3 --noop-pulls 50
#   FERRY_BENCH_POSTGRES_URL=postgres://ferry@127.0.0.1:55432/postgres?sslmode=disable Benchmarks/kinto-peer.sh
#
# Ferry is ${FERRY_BIN:-.build/release/ferry} (build it first); Kinto is installed into a venv under /tmp
# (${KINTO_VENV:-/tmp/ferry-kinto-venv}) when missing. See docs/benchmarks.md, "Peer: Kinto".
set -euo pipefail
cd "$(dirname "$0")/.."

RECORDS=20000
NOOPS=20
COLDS=5
while [ $# -gt 0 ]; do
    case "$1" in
        --records) RECORDS=$2; shift 2 ;;
        --noop-pulls) NOOPS=$2; shift 2 ;;
        --cold-pulls) COLDS=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "kinto-peer: unknown option $1 (see --help)" >&2; exit 64 ;;
    esac
done

FERRY=${FERRY_BIN:-.build/release/ferry}
[ -x "$FERRY" ] || { echo "kinto-peer: $FERRY is not built (swift build -c release --product ferry, or set FERRY_BIN)" >&2; exit 1; }

# --- Kinto from PyPI, pinned ------------------------------------------------------------------------------

KINTO_PIN='kinto[postgresql]==26.5.0'
KINTO_VENV=${KINTO_VENV:-/tmp/ferry-kinto-venv}
if ! "$KINTO_VENV/bin/python" -c 'import kinto, psycopg2, requests' 2>/dev/null; then
    echo "kinto-peer: installing $KINTO_PIN into $KINTO_VENV" >&2
    python3 -m venv "$KINTO_VENV"
    "$KINTO_VENV/bin/pip" install --quiet --disable-pip-version-check --timeout 30 --retries 2 "$KINTO_PIN" >&2
fi
PYTHON=$KINTO_VENV/bin/python

WORK=$(mktemp -d /tmp/ferry-kinto-peer.XXXXXX)
PIDS=()
PG_DIR=""
cleanup() {
    local status=$?
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    if [ -n "${ADMIN_URL:-}" ] && [ -z "$PG_DIR" ]; then
        for db in "$FERRY_DB" "$KINTO_DB"; do
            psql "$ADMIN_URL" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true
        done
    fi
    if [ -n "$PG_DIR" ]; then
        "${PG_RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
        rm -rf "$PG_DIR"
    fi
    if [ "$status" -ne 0 ]; then echo "kinto-peer: failed; logs kept in $WORK" >&2; else rm -rf "$WORK"; fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- One PostgreSQL cluster: a throwaway one (as scripts/test.sh starts), or FERRY_BENCH_POSTGRES_URL ------

if [ -n "${FERRY_BENCH_POSTGRES_URL:-}" ]; then
    ADMIN_URL=$FERRY_BENCH_POSTGRES_URL
else
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    [ -n "$bin" ] && [ -x "$bin/initdb" ] || { echo "kinto-peer: no PostgreSQL server programs (apt-get install postgresql)" >&2; exit 1; }
    PG_DIR=$(mktemp -d /tmp/ferry-pg.XXXXXX)
    PG_RUN=()
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$PG_DIR"  # initdb refuses to run as root
        PG_RUN=(runuser -u postgres --)
    fi
    PG_BIN=$bin
    port=$(free_port)
    "${PG_RUN[@]}" "$bin/initdb" -D "$PG_DIR/data" -U ferry --auth=trust -E UTF8 --no-sync >"$WORK/initdb.log" 2>&1 \
        || { cat "$WORK/initdb.log" >&2; exit 1; }
    "${PG_RUN[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
        -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300" \
        start >/dev/null || { cat "$PG_DIR/server.log" >&2; exit 1; }
    ADMIN_URL="postgres://ferry@127.0.0.1:$port/postgres?sslmode=disable"
    echo "kinto-peer: PostgreSQL cluster on 127.0.0.1:$port (fsync off)" >&2
fi
suffix=$(python3 -c 'import uuid; print(uuid.uuid4().hex[:8])')
FERRY_DB=ferry_peer_$suffix
KINTO_DB=kinto_peer_$suffix
for db in "$FERRY_DB" "$KINTO_DB"; do psql "$ADMIN_URL" -qc "CREATE DATABASE $db" >/dev/null; done
# The same cluster, another database: replace the path of the admin URL.
db_url() { python3 -c 'import sys, urllib.parse as u; p = u.urlsplit(sys.argv[1]); print(u.urlunsplit(p._replace(path="/" + sys.argv[2])))' "$ADMIN_URL" "$1"; }

# --- Ferry -------------------------------------------------------------------------------------------------

cat >"$WORK/notes.yaml" <<'YAML'
version: 1
collections:
  notes:
    fields:
      title: { type: text, required: true }
      body: text
      rank: integer
      score: real
      done: bool
YAML
FERRY_ANON_KEY=$("$FERRY" serve --data-dir "$WORK/ferry-data" --print-keys | sed -n 's/^anon key: //p')
FERRY_DATABASE=$(db_url "$FERRY_DB")
KINTO_DATABASE=$(db_url "$KINTO_DB" | sed 's/^postgres:/postgresql:/; s/[?].*//')
touch "$WORK/ferry.out"
"$FERRY" serve --host 127.0.0.1 --port 0 --data-dir "$WORK/ferry-data" --database "$FERRY_DATABASE" \
    --schema "$WORK/notes.yaml" --log-level warning >"$WORK/ferry.out" 2>"$WORK/ferry.log" &
PIDS+=($!)
FERRY_URL=""
deadline=$((SECONDS + 60))
until [ -n "$FERRY_URL" ] && curl -fsS -o /dev/null "$FERRY_URL/health"; do
    [ "$SECONDS" -lt "$deadline" ] || { cat "$WORK/ferry.out" "$WORK/ferry.log" >&2; echo "kinto-peer: ferry serve did not start" >&2; exit 1; }
    FERRY_URL=$(sed -n 's/^Ferry listening on \(http:[^ ]*\).*/\1/p' "$WORK/ferry.out")
    sleep 0.2
done
# The real client signs up and registers its device (with the proof that it holds the device key).
FERRY_EMAIL="peer-$suffix@example.com"
FERRY_PASSWORD="Peer-$suffix-correct-horse"
printf '%s\n' "$FERRY_PASSWORD" | FERRY_HOME="$WORK/client" "$FERRY" signup "$FERRY_EMAIL" --password-stdin \
    --server "$FERRY_URL" --api-key "$FERRY_ANON_KEY" --profile peer >"$WORK/signup.log" 2>&1 \
    || { cat "$WORK/signup.log" >&2; echo "kinto-peer: ferry signup failed" >&2; exit 1; }
echo "kinto-peer: ferry serve on $FERRY_URL ($FERRY, database $FERRY_DB)" >&2

# --- Kinto -------------------------------------------------------------------------------------------------

KINTO_PORT=$(free_port)
cat >"$WORK/kinto.ini" <<INI
[server:main]
use = egg:waitress#main
host = 127.0.0.1
port = $KINTO_PORT

[app:main]
use = egg:kinto
kinto.storage_backend = kinto.core.storage.postgresql
kinto.storage_url = $KINTO_DATABASE
kinto.permission_backend = kinto.core.permission.postgresql
kinto.permission_url = $KINTO_DATABASE
kinto.cache_backend = kinto.core.cache.memory
kinto.userid_hmac_secret = $suffix$suffix$suffix$suffix
multiauth.policies = basicauth
kinto.bucket_create_principals = system.Authenticated
# Only to seed in fewer requests; the pulls measured do not batch.
kinto.batch_max_requests = 1000

[loggers]
keys = root
[handlers]
keys = console
[formatters]
keys = plain
[logger_root]
level = WARNING
handlers = console
[handler_console]
class = StreamHandler
args = (sys.stderr,)
level = NOTSET
formatter = plain
[formatter_plain]
format = %(levelname)s %(name)s %(message)s
INI
"$KINTO_VENV/bin/kinto" migrate --ini "$WORK/kinto.ini" >"$WORK/kinto-migrate.log" 2>&1 \
    || { cat "$WORK/kinto-migrate.log" >&2; exit 1; }
"$KINTO_VENV/bin/kinto" start --ini "$WORK/kinto.ini" >"$WORK/kinto.log" 2>&1 &
PIDS+=($!)
KINTO_URL="http://127.0.0.1:$KINTO_PORT/v1"
deadline=$((SECONDS + 60))
until curl -fsS -o /dev/null "$KINTO_URL/" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || { cat "$WORK/kinto.log" >&2; echo "kinto-peer: kinto did not start" >&2; exit 1; }
    sleep 0.2
done
echo "kinto-peer: Kinto $("$PYTHON" -c 'import kinto; print(kinto.__version__)') on $KINTO_URL (database $KINTO_DB)" >&2

# --- The client ----------------------------------------------------------------------------------------------

FERRY_URL=$FERRY_URL FERRY_ANON_KEY=$FERRY_ANON_KEY FERRY_PROFILE="$WORK/client/profiles/peer" KINTO_URL=$KINTO_URL \
    RECORDS=$RECORDS NOOPS=$NOOPS COLDS=$COLDS "$PYTHON" Benchmarks/kinto_peer_client.py
