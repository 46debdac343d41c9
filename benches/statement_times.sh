#!/usr/bin/env bash
# PostgreSQL's own time per statement of baton's lock cycle and guarded save,
# beside the HTTP floor's statements, from PostgreSQL's statement log
# (log_min_duration_statement = 0 on a scratch database: parse, bind and
# execute are each logged with their duration). One client, so the figures
# are the statements' cost without contention.
#
#   bash benches/statement_times.sh path/to/baton [cycles]
#
# Starts `baton serve --demo` on the scratch database with the background
# tasks slowed to once an hour, signs bob in, runs `cycles` lock cycles and
# `cycles` card saves, then the floor's statements (benches/support/floor.rs)
# as many times through pgbench, and prints per statement: calls per
# operation and µs per call. Needs a local PostgreSQL whose log is readable
# (Debian: /var/log/postgresql/postgresql-<version>-main.log, log_line_prefix
# with %d, the Debian default) and pgbench.
set -euo pipefail
BATON=${1:?usage: $0 path/to/baton [cycles]}
CYCLES=${2:-200}
ADMIN_URL=${BATON_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
LOG=${BATON_PG_LOG:-$(ls /var/log/postgresql/postgresql-*-main.log | head -n 1)}
DB=baton_times_$RANDOM$RANDOM
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE=http://127.0.0.1:$PORT
OUT=$(mktemp)
psql "$ADMIN_URL" -qc "CREATE DATABASE $DB" -c "ALTER DATABASE $DB SET log_min_duration_statement = 0"
URL="${ADMIN_URL%/*}/$DB"
cleanup() {
  [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null || true
  psql "$ADMIN_URL" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
  rm -f "$OUT" "$OUT.sql"
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
H=(-H "Authorization: Bearer $TOKEN" -H 'x-session-id: timing' -H 'content-type: application/json')
cycle() {
  local id
  id=$(curl -fs -X POST "$BASE/locks" "${H[@]}" -d "{\"lock\":{\"lockableType\":\"Card\",\"lockableParam\":\"$CARD\"}}" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
  curl -fs -o /dev/null -X DELETE "$BASE/locks/$id" "${H[@]}"
}
save() {
  curl -fs -o /dev/null -X PATCH "$BASE/cards/$CARD" "${H[@]}" -d "{\"card\":{\"content\":\"saved $1\"}}"
}
# Between two markers in the log: what one kind of operation ran.
measure() {
  local what=$1 start
  shift
  start=$(wc -l <"$LOG")
  psql "$URL" -qAtc "SELECT 'times-start'" >/dev/null
  "$@"
  psql "$URL" -qAtc "SELECT 'times-end'" >/dev/null
  sleep 0.5
  tail -n +"$((start + 1))" "$LOG" | grep "@$DB " |
    awk '/times-start/ {on = 1; next} /times-end/ {on = 0} on' >"$OUT"
  echo "== $what, $CYCLES operations: calls per operation, µs per call (parse + bind + execute)"
  python3 - "$OUT" "$CYCLES" <<'EOF'
import re, sys, collections
calls, micros = collections.Counter(), collections.Counter()
names = {}
pending = collections.defaultdict(float)
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"duration: ([0-9.]+) ms  (statement|parse|bind|execute)( [^:]*)?: (.*)", line)
    if not m:
        continue
    ms, phase, name, text = float(m.group(1)), m.group(2), (m.group(3) or "").strip(), m.group(4)
    key = " ".join(text.split())[:90]
    if phase in ("parse", "bind"):
        pending[(name, key)] += ms
        continue
    calls[key] += 1
    micros[key] += (ms + pending.pop((name, key), 0.0)) * 1000
ops = int(sys.argv[2])
total = 0.0
for key, n in calls.most_common():
    total += micros[key] / ops
    print(f"  {n / ops:5.2f} x {micros[key] / n:7.1f} µs  {key}")
print(f"  PostgreSQL time per operation: {total:.0f} µs")
EOF
}
lock_cycles() { for _ in $(seq 1 "$CYCLES"); do cycle; done; }
saves() { for i in $(seq 1 "$CYCLES"); do save "$i"; done; }
# Warm the pool's connections, so connection set-up is not counted.
for i in 1 2 3; do cycle; save "warm $i"; done
measure "baton lock cycle (POST /locks + DELETE /locks/:id)" lock_cycles
measure "baton guarded save (PATCH /cards/:id)" saves
# The floor's statements (benches/support/floor.rs), prepared, through pgbench.
USER_ID=$(psql "$URL" -qAtc "SELECT id FROM users WHERE email = 'bob@example.com'")
cat >"$OUT.sql" <<EOF
INSERT INTO locks (lockable_type, lockable_id, case_id, user_id, session_id, created_at, expires_at, last_activity_at) SELECT CAST('Card' AS TEXT), CAST($CARD AS BIGINT), r.case_id, CAST($USER_ID AS BIGINT), CAST('timing' AS TEXT), now(), now() + interval '30000 milliseconds', now() FROM records r WHERE r.record_type = 'Card' AND r.id = $CARD ON CONFLICT (lockable_type, lockable_id) DO UPDATE SET expires_at = excluded.expires_at, last_activity_at = excluded.last_activity_at WHERE locks.user_id = excluded.user_id AND locks.session_id = excluded.session_id RETURNING id \gset
DELETE FROM locks WHERE id = :id AND user_id = $USER_ID;
EOF
floor() { pgbench -n -M prepared -c 1 -t "$CYCLES" -f "$OUT.sql" "$URL" >/dev/null; }
measure "the floor's lock cycle (its two statements, prepared)" floor
