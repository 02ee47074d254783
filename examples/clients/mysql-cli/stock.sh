#!/usr/bin/env bash
# A lockstep external client in shell: the stock workload of docs/external-clients.md,
# locked with MySQL's named lock (GET_LOCK) through the mariadb command-line client, the
# stock read and written in Redis with redis-cli.
#
# One mariadb process runs beside the script for the whole run (a coprocess): the named
# lock belongs to its session, so GET_LOCK, the work and RELEASE_LOCK must share it. It
# never reconnects on its own: a session the server ended stays ended, and RELEASE_LOCK
# then fails, as a client library that does not reconnect silently reports it.
set -u

IFS=: read -r MYSQL_HOST MYSQL_PORT <<<"$LOCKSTEP_MYSQL"
IFS=, read -r NODE1 _ <<<"$LOCKSTEP_REDIS"
IFS=: read -r REDIS_HOST REDIS_PORT <<<"$NODE1"
WAIT_S=$(awk -v ms="$LOCKSTEP_WAIT_MS" 'BEGIN { printf "%.3f", ms / 1000 }')
HOLD_S=$(awk -v ms="$LOCKSTEP_HOLD_MS" 'BEGIN { printf "%.3f", ms / 1000 }')
ANSWER_S=$(((LOCKSTEP_WAIT_MS + 999) / 1000 + 5))  # GET_LOCK waits on the server up to WAIT_S
LOCK_NAME=${LOCKSTEP_LOCK_KEY//\'/\'\'}

# Each line goes out at once (bash's printf writes straight to the pipe).
report() { printf '%s\n' "$1"; }

coproc SQL { exec mariadb --batch --skip-column-names --unbuffered --force --skip-reconnect \
  -h "$MYSQL_HOST" -P "$MYSQL_PORT" -u root lockstep 2>&1; }

# One statement; its one line of answer (a value, or the client's ERROR line) in $answer.
sql() {
  answer=""
  printf '%s\n' "$1" >&"${SQL[1]}" || return 1
  IFS= read -r -t "$ANSWER_S" answer <&"${SQL[0]}"
}

redis() { timeout 5 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" --no-raw "$@" 2>&1; }

sell_one() {
  report '{"type": "invoke", "f": "read"}'
  local raw
  if ! raw=$(redis GET "$LOCKSTEP_STOCK_KEY"); then
    report '{"type": "info", "f": "read", "error": "redis-cli failed"}'
    return
  fi
  raw=${raw//\"/}
  if ! [[ $raw =~ ^-?[0-9]+$ ]]; then
    report '{"type": "fail", "f": "read", "error": "not a number"}'
    return
  fi
  report "{\"type\": \"ok\", \"f\": \"read\", \"value\": $raw}"
  sleep "$HOLD_S"
  ((raw > 0)) || return
  report "{\"type\": \"invoke\", \"f\": \"write\", \"value\": $((raw - 1))}"
  if [[ $(redis SET "$LOCKSTEP_STOCK_KEY" $((raw - 1))) == OK ]]; then
    report "{\"type\": \"ok\", \"f\": \"write\", \"value\": $((raw - 1))}"
  else
    report '{"type": "info", "f": "write", "error": "no OK from SET"}'
  fi
}

for ((attempt = 0; attempt < LOCKSTEP_ATTEMPTS; attempt++)); do
  report '{"type": "invoke", "f": "acquire"}'
  if ! sql "SELECT GET_LOCK('$LOCK_NAME', $WAIT_S);"; then
    report '{"type": "info", "f": "acquire", "error": "no answer from mariadb"}'
    exit 0
  fi
  case $answer in
    1) report '{"type": "ok", "f": "acquire"}' ;;
    0) report '{"type": "fail", "f": "acquire", "error": "GET_LOCK timed out"}'; continue ;;
    # The session may have taken the lock before it was lost, and lost it with it.
    *) report '{"type": "info", "f": "acquire", "error": "GET_LOCK failed"}'; exit 0 ;;
  esac
  report '{"type": "cs-enter"}'
  sell_one
  report '{"type": "cs-exit"}'
  report '{"type": "invoke", "f": "release"}'
  if ! sql "SELECT RELEASE_LOCK('$LOCK_NAME');"; then
    report '{"type": "info", "f": "release", "error": "no answer from mariadb"}'
    exit 0
  fi
  case $answer in
    1) report '{"type": "ok", "f": "release"}' ;;
    0 | NULL) report '{"type": "fail", "f": "release", "error": "not the holder"}' ;;
    # A session the server ended took its lock with it: this release did nothing.
    *) report '{"type": "fail", "f": "release", "error": "the session had ended"}'; exit 0 ;;
  esac
done
exit 0
