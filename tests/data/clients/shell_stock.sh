#!/usr/bin/env bash
# An external client written from docs/external-clients.md alone, as a test fixture: the
# stock workload with redis-cli — SET NX PX to lock, a compare-and-delete script to
# unlock. It knows nothing of lockstep but that page.
set -u
first=${LOCKSTEP_REDIS%%,*}
host=${first%:*}
port=${first##*:}
token="$LOCKSTEP_CLIENT-$LOCKSTEP_INCARNATION-$$"
# As some libraries do, the lock may live under a key of its own (LOCK_PREFIX), and be
# released with a plain DEL that does not check the owner (LOCK_RELEASE=del).
key="${LOCK_PREFIX:-}$LOCKSTEP_LOCK_KEY"
unlock="if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"

cli() { redis-cli -h "$host" -p "$port" "$@" 2>&1; }
now_ms() { date +%s%3N; }
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }

for ((i = 0; i < LOCKSTEP_ATTEMPTS; i++)); do
  echo '{"type": "invoke", "f": "acquire"}'
  deadline=$(($(now_ms) + LOCKSTEP_WAIT_MS))
  got=
  while :; do
    out=$(cli SET "$key" "$token" NX PX "$LOCKSTEP_LEASE_MS")
    if [ "$out" = OK ]; then got=1; break; fi
    if [ -n "$out" ]; then break; fi  # not a nil: an error, the outcome is unknown
    if [ "$(now_ms)" -ge "$deadline" ]; then break; fi
    sleep 0.01
  done
  if [ -z "$got" ]; then
    if [ -n "$out" ]; then echo '{"type": "info", "f": "acquire"}'; else echo '{"type": "fail", "f": "acquire"}'; fi
    continue
  fi
  echo '{"type": "ok", "f": "acquire"}'
  echo '{"type": "cs-enter"}'
  echo '{"type": "invoke", "f": "read"}'
  stock=$(cli GET "$LOCKSTEP_STOCK_KEY")
  if [[ "$stock" =~ ^-?[0-9]+$ ]]; then
    echo "{\"type\": \"ok\", \"f\": \"read\", \"value\": $stock}"
    sleep_ms "$LOCKSTEP_HOLD_MS"
    if [ "$stock" -gt 0 ]; then
      echo "{\"type\": \"invoke\", \"f\": \"write\", \"value\": $((stock - 1))}"
      if [ "$(cli SET "$LOCKSTEP_STOCK_KEY" $((stock - 1)))" = OK ]; then
        echo '{"type": "ok", "f": "write"}'
      else
        echo '{"type": "info", "f": "write"}'
      fi
    fi
  else
    echo '{"type": "info", "f": "read"}'
  fi
  echo '{"type": "cs-exit"}'
  echo '{"type": "invoke", "f": "release"}'
  if [ "${LOCK_RELEASE:-}" = del ]; then
    cli DEL "$key" >/dev/null && echo '{"type": "ok", "f": "release"}' || echo '{"type": "info", "f": "release"}'
    continue
  fi
  case "$(cli EVAL "$unlock" 1 "$key" "$token")" in
    1) echo '{"type": "ok", "f": "release"}' ;;
    0) echo '{"type": "fail", "f": "release", "error": "no longer ours"}' ;;
    *) echo '{"type": "info", "f": "release"}' ;;
  esac
done
