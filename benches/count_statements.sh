#!/usr/bin/env bash
# Counts the SQL statements PostgreSQL executes per lock request (acquire or
# release), from PostgreSQL's own statement log.
#
#   bash benches/count_statements.sh path/to/baton [cycles]
#
# Creates a scratch database with `log_statement = 'all'`, starts
# `baton serve --demo` on it with the background tasks slowed to once an hour,
# signs bob in, then runs `cycles` lock cycles (POST /locks, DELETE
# /locks/:id) between two marker statements and counts the log lines of that
# database in between. Needs a local PostgreSQL whose log is readable
# (Debian: /var/log/postgresql/postgresql-<version>-main.log) and
# log_line_prefix with %d (the Debian default).
set -euo pipefail
BATON=${1:?usage: $0 path/to/baton [cycles]}
CYCLES=${2:-100}
ADMIN_URL=${BATON_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
LOG=${BATON_PG_LOG:-$(ls /var/log/postgresql/postgresql-*-main.log | head -n 1)}
DB=baton_count_$RANDOM$RANDOM
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE=http://127.0.0.1:$PORT
psql "$ADMIN_URL" -qc "CREATE DATABASE $DB" -c "ALTER DATABASE $DB SET log_statement = 'all'"
URL="${ADMIN_URL%/*}/$DB"
cleanup() {
  [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  psql "$ADMIN_URL" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
}
trap cleanup EXIT
DATABASE_URL=$URL BATON_BIND=127.0.0.1:$PORT RUST_LOG=warn BATON_REAPER_INTERVAL=1h \
  BATON_HEARTBEAT_INTERVAL=1h "$BATON" serve --demo >/dev/null 2>&1 &
PID=$!
for _ in $(seq 1 100); do curl -fs -o /dev/null "$BASE/healthz" && break; sleep 0.1; done
TOKEN=$(curl -fs -X POST "$BASE/auth/login" -H 'content-type: application/json' \
  -d '{"email":"bob@example.com","password":"demo"}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
CARD=$(curl -fs "$BASE/cases/sample-case" -H "Authorization: Bearer $TOKEN" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["pages"][0]["cards"][0]["id"])')
# Warm the pool's connections, so connection set-up is not counted.
for _ in 1 2 3; do
  ID=$(curl -fs -X POST "$BASE/locks" -H "Authorization: Bearer $TOKEN" -H 'x-session-id: counting' \
    -H 'content-type: application/json' -d "{\"lock\":{\"lockableType\":\"Card\",\"lockableParam\":\"$CARD\"}}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  curl -fs -o /dev/null -X DELETE "$BASE/locks/$ID" -H "Authorization: Bearer $TOKEN" -H 'x-session-id: counting'
done
START=$(wc -l <"$LOG")
psql "$URL" -qAtc "SELECT 'count-statements-start'" >/dev/null
for _ in $(seq 1 "$CYCLES"); do
  ID=$(curl -fs -X POST "$BASE/locks" -H "Authorization: Bearer $TOKEN" -H 'x-session-id: counting' \
    -H 'content-type: application/json' -d "{\"lock\":{\"lockableType\":\"Card\",\"lockableParam\":\"$CARD\"}}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  curl -fs -o /dev/null -X DELETE "$BASE/locks/$ID" -H "Authorization: Bearer $TOKEN" -H 'x-session-id: counting'
done
psql "$URL" -qAtc "SELECT 'count-statements-end'" >/dev/null
sleep 0.5
tail -n +"$((START + 1))" "$LOG" | grep "@$DB " |
  awk '/count-statements-start/ {on = 1; next} /count-statements-end/ {on = 0} on' >"/tmp/$DB.statements"
TOTAL=$(grep -cE 'LOG:  (statement|execute)' "/tmp/$DB.statements" || true)
echo "statements per lock request: $(python3 -c "print(round($TOTAL / (2 * $CYCLES), 2))") ($TOTAL statements for $CYCLES acquires and $CYCLES releases)"
# The event bus's own statements: the wake-up NOTIFY after a commit and the
# listener's outbox read. Under load both are shared by many commits.
BUS=$(grep -cE 'LOG:  (statement|execute [^:]*): (NOTIFY baton_events|SELECT pg_snapshot_xmin|SELECT pg_current_xact_id)' "/tmp/$DB.statements" || true)
echo "  on the request's own connection: $(python3 -c "print(round(($TOTAL - $BUS) / (2 * $CYCLES), 2))"); the event bus (wake-up NOTIFY, outbox read): $(python3 -c "print(round($BUS / (2 * $CYCLES), 2))")"
echo "by kind:"
grep -oE 'LOG:  (statement|execute [^:]*): [A-Za-z]+( [A-Za-z_]+)?' "/tmp/$DB.statements" |
  sed -E 's/.*: //' | sort | uniq -c | sort -rn | head -n 20
rm -f "/tmp/$DB.statements"
[ -n "${BATON_KEEP_STATEMENTS:-}" ] && cp "/tmp/$DB.statements" "$BATON_KEEP_STATEMENTS"
rm -f "/tmp/$DB.statements"
