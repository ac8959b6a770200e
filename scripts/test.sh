#!/usr/bin/env bash
# Runs Ferry's tests: installs what is missing, starts a throwaway PostgreSQL cluster on a free
# loopback port (stopped and deleted on exit), exports its URL, and runs `swift test`.
# Arguments go to `swift test` (e.g. --filter Schema); without them the tests that depend on timing run last, one at a time.
# Without PostgreSQL the PostgreSQL tests skip with a printed reason; FERRY_REQUIRE_POSTGRES=1 makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure-packages.sh
# libgit2-dev builds FerryVault; git and python3 run the vault tests' peer and their git http-backend server; nginx is the
# load-balancer test's TLS proxy in front of two instances; chromium and its driver run the console's browser test.
ferry_ensure_packages libsqlite3-dev postgresql libgit2-dev git python3 nginx chromium chromium-driver \
    || echo "ferry: continuing without some packages" >&2

start_postgres() {
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$bin" ] || [ ! -x "$bin/initdb" ]; then
        echo "ferry: PostgreSQL server programs not found; PostgreSQL tests will skip" >&2
        return 1
    fi
    PG_DIR=$(mktemp -d /tmp/ferry-pg.XXXXXX)
    local run=()
    if [ "$(id -u)" -eq 0 ]; then
        # initdb refuses to run as root: the cluster belongs to the postgres system user.
        chown postgres "$PG_DIR"
        run=(runuser -u postgres --)
    fi
    PG_RUN=("${run[@]}")
    PG_BIN=$bin
    local port
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "${run[@]}" "$bin/initdb" -D "$PG_DIR/data" -U ferry --auth=trust -E UTF8 --no-sync >"$PG_DIR/initdb.log" 2>&1 \
        || { cat "$PG_DIR/initdb.log" >&2; return 1; }
    "${run[@]}" "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
        -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=600" \
        start >/dev/null || { cat "$PG_DIR/server.log" >&2; return 1; }
    export FERRY_TEST_POSTGRES_URL="postgres://ferry@127.0.0.1:$port/postgres?sslmode=disable"
    echo "ferry: test PostgreSQL cluster on 127.0.0.1:$port" >&2
}

stop_postgres() {
    if [ -n "${PG_DIR:-}" ]; then
        "${PG_RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate stop >/dev/null 2>&1 || true
        rm -rf "$PG_DIR"
    fi
}
trap stop_postgres EXIT

if [ -z "${FERRY_TEST_POSTGRES_URL:-}" ]; then
    if ! start_postgres; then
        if [ "${FERRY_REQUIRE_POSTGRES:-0}" = "1" ]; then
            echo "ferry: FERRY_REQUIRE_POSTGRES=1 but no PostgreSQL cluster could be started" >&2
            exit 1
        fi
    fi
fi

# supabase-py's auth, storage and PostgREST clients, for the wire-compatibility tests, aiosmtpd, the SMTP server the
# mail tests send to, and selenium, which drives Chromium through the console (skipped with a printed reason when
# unavailable, except the browser under FERRY_REQUIRE_BROWSER=1).
python3 -c 'import supabase_auth, storage3, postgrest, aiosmtpd, selenium' 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --timeout 20 --retries 1 'supabase_auth==2.34.1' 'storage3==2.34.1' \
        'postgrest==2.34.1' 'aiosmtpd==1.4.6' 'selenium==4.51.0' >/dev/null 2>&1 \
    || echo "ferry: could not install supabase_auth, storage3, postgrest, aiosmtpd and selenium from PyPI; their checks will skip" >&2

# Every run's output is kept; a failing run ends by repeating its failures, so the last lines of a long
# CI log name what failed and where.
TEST_LOG=$(mktemp /tmp/ferry-test-log.XXXXXX)
run_tests() {
    local status=0
    swift test --skip-build "$@" 2>&1 | tee -a "$TEST_LOG" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "ferry: swift test $* failed (exit $status); its failures:" >&2
        grep -E '^✘|error:|Fatal error|fatalError' "$TEST_LOG" | grep -v 'ferry\.error' | tail -n 60 >&2 || true
        echo "ferry: the whole log is $TEST_LOG" >&2
    fi
    return "$status"
}

swift build --build-tests
# Swift Testing starts every test of a process at once unless told otherwise. On two cores, some 650 tests (live
# servers, PostgreSQL databases, child processes) started together starve one another until requests time out; ten at a
# time keep both cores busy (the tests are CPU-bound: 1.9 cores used at 16 as at 10) and finish sooner than two
# groups one after the other (362 s against 450 s on 2026-11-28). FERRY_TEST_WIDTH changes it.
width="${FERRY_TEST_WIDTH:-10}"
[[ "$width" =~ ^[1-9][0-9]*$ ]] || { echo "ferry: FERRY_TEST_WIDTH must be a whole number from 1, not '$width'" >&2; exit 64; }
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="$width"
if [ "$#" -gt 0 ]; then
    run_tests "$@"
else
    # Every target in one process (one start-up), but for the tests that kill processes at a moment or read a
    # process's peak memory: they run alone, after the others.
    alone="CrashRecoveryTests|SermonAudioCrashTests|StalledDownloadTests|SigningCostTests"
    status=0
    run_tests --skip "$alone" || status=1
    [ "$status" -eq 0 ] || exit 1
    # The crash-recovery test kills `ferry serve` processes at random points of pushes (20 times per engine by
    # default, FERRY_CRASH_TRIALS), and the sermon app's audio kills a sync halfway and reads the server's peak memory:
    # both depend on timing, so each runs alone after the others. The stalled-download and signing-cost suites measure
    # their own server process's memory and CPU time, which another process does not change: they share a run.
    for suites in CrashRecoveryTests SermonAudioCrashTests "StalledDownloadTests|SigningCostTests"; do
        run_tests --filter "$suites" || status=1
    done
    [ "$status" -eq 0 ] || exit 1
    # The README's tour, its commands pasted in order against fresh servers of its own (scripts/tour.sh), so it
    # cannot break unseen. It runs beside the fuzz pass, whose length is fixed (it only does a little less meanwhile);
    # its output follows the fuzz pass's in the log.
    TOUR_LOG=$(mktemp /tmp/ferry-tour-log.XXXXXX)
    scripts/tour.sh >"$TOUR_LOG" 2>&1 &
    tour=$!
    # A short schemathesis pass over the served OpenAPI document (docs/security.md, "Fuzzing"): every operation,
    # stateful sequences included, against a live server on its embedded default.
    FERRY_BIN=.build/debug/ferry scripts/fuzz.sh --short 2>&1 | tee -a "$TEST_LOG" \
        || { echo "ferry: scripts/fuzz.sh --short failed; the whole log is $TEST_LOG" >&2; status=1; }
    wait "$tour" || { echo "ferry: scripts/tour.sh failed (its output: $TOUR_LOG)" >&2; status=1; }
    tee -a "$TEST_LOG" <"$TOUR_LOG"
    [ "$status" -eq 0 ] || exit 1
fi
