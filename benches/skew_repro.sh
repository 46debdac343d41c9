#!/usr/bin/env bash
# Skewed clocks, as an operator would try them: two `baton serve --demo`
# instances on one scratch PostgreSQL database, one under libfaketime at
# +60s (port 18081) and one at -60s (port 18082). Alice locks card 1 through
# the instance behind (lease 30s, never renewed); every 0.5s the script asks
# both instances for the lock and lets Bob try to lock the card through the
# instance ahead. With one clock, the lock lives its 30s on both and Bob gets
# it only then. tests/skew.rs asserts the same; this prints the figures.
#
#   bash benches/skew_repro.sh "$CARGO_TARGET_DIR/debug/baton"
#
# Needs psql, curl, jq, bc and libfaketime (Debian: faketime);
# BATON_BENCH_POSTGRES_URL names the server (default as below).
set -euo pipefail
BATON=$1
DB=skew_repro_$$
ADMIN=${BATON_BENCH_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
psql -q "$ADMIN" -c "CREATE DATABASE $DB"
export DATABASE_URL=${ADMIN%/*}/$DB
export BATON_JWT_SECRET=skew-repro-secret-skew-repro-secret
export BATON_LOCK_TTL=30s BATON_DISCONNECT_GRACE=10m BATON_IDLE_TIMEOUT=30m BATON_REAPER_INTERVAL=1s
LIB=/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1
TMP=$(mktemp -d)
cleanup() { kill $A $B 2>/dev/null || true; wait 2>/dev/null || true; psql -q "$ADMIN" -c "DROP DATABASE $DB WITH (FORCE)" || true; rm -rf "$TMP"; }
trap cleanup EXIT
BATON_BIND=127.0.0.1:18081 LD_PRELOAD=$LIB FAKETIME=+60s FAKETIME_DONT_FAKE_MONOTONIC=1 "$BATON" serve --demo >"$TMP/ahead.log" 2>&1 &
A=$!
for _ in $(seq 100); do curl -fs -o /dev/null http://127.0.0.1:18081/healthz && break; sleep 0.2; done
BATON_BIND=127.0.0.1:18082 LD_PRELOAD=$LIB FAKETIME=-60s FAKETIME_DONT_FAKE_MONOTONIC=1 "$BATON" serve >"$TMP/behind.log" 2>&1 &
B=$!
for _ in $(seq 100); do curl -fs -o /dev/null http://127.0.0.1:18082/healthz && break; sleep 0.2; done
ALICE=$("$BATON" token --email alice@example.com)
BOB=$("$BATON" token --email bob@example.com)
CARD=1 # the demo's first card
T0=$(date +%s.%N)
LOCK=$(curl -s -X POST -H "Authorization: Bearer $ALICE" -H "X-Session-ID: alice-tab" -H 'Content-Type: application/json' \
  -d "{\"lock\":{\"lockableType\":\"Card\",\"lockableParam\":\"$CARD\"}}" http://127.0.0.1:18082/locks)
ID=$(jq -r '.id // empty' <<<"$LOCK")
[ -n "$ID" ] || { echo "the lock was refused: $LOCK" >&2; exit 1; }
echo "granted by behind: lock $ID expiresAt $(jq -r '.expiresAt' <<<"$LOCK")"
seen_a=; seen_b=; bob=
for i in $(seq 1 90); do
  sleep 0.5
  now=$(date +%s.%N)
  ea=$(curl -s -o "$TMP/a.json" -w '%{http_code}' -H "Authorization: Bearer $ALICE" http://127.0.0.1:18081/locks/$ID)
  eb=$(curl -s -o "$TMP/b.json" -w '%{http_code}' -H "Authorization: Bearer $ALICE" http://127.0.0.1:18082/locks/$ID)
  if [ "$i" = 2 ]; then
    echo "expiresAt seen by ahead: $(jq -r '.expiresAt // .error.code' "$TMP/a.json"), by behind: $(jq -r '.expiresAt // .error.code' "$TMP/b.json")"
  fi
  if [ -z "$seen_a" ] && [ "$ea" != 200 ]; then seen_a=$(echo "$now - $T0" | bc); echo "ahead stops showing the lock after ${seen_a}s (HTTP $ea)"; fi
  if [ -z "$seen_b" ] && [ "$eb" != 200 ]; then seen_b=$(echo "$now - $T0" | bc); echo "behind stops showing the lock after ${seen_b}s (HTTP $eb)"; fi
  if [ -z "$bob" ]; then
    st=$(curl -s -o "$TMP/bob.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $BOB" -H "X-Session-ID: bob-tab" -H 'Content-Type: application/json' \
      -d "{\"lock\":{\"lockableType\":\"Card\",\"lockableParam\":\"$CARD\"}}" http://127.0.0.1:18081/locks)
    if [ "$st" = 201 ] || [ "$st" = 200 ]; then bob=$(echo "$now - $T0" | bc); echo "bob granted the card through ahead after ${bob}s"; fi
  fi
  [ -n "$seen_a" ] && [ -n "$seen_b" ] && break
done
echo "summary: lease 30s; ahead ended at ${seen_a:-never}s, behind at ${seen_b:-never}s, bob granted at ${bob:-never}s"
