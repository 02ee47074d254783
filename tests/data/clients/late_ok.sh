#!/usr/bin/env bash
# A test fixture (docs/external-clients.md): it announces its acquire at once, but
# reports the acquire's ok OK_DELAY_S seconds after SET's reply came back, as a program
# whose output sits in a buffer would.
set -u
first=${LOCKSTEP_REDIS%%,*}
cli() { redis-cli -h "${first%:*}" -p "${first##*:}" "$@"; }
echo '{"type": "invoke", "f": "acquire"}'
[ "$(cli SET "$LOCKSTEP_LOCK_KEY" "$LOCKSTEP_CLIENT" NX PX "$LOCKSTEP_LEASE_MS")" = OK ] || exit 1
sleep "${OK_DELAY_S:-0}"
echo '{"type": "ok", "f": "acquire"}'
echo '{"type": "invoke", "f": "release"}'
cli DEL "$LOCKSTEP_LOCK_KEY" >/dev/null
echo '{"type": "ok", "f": "release"}'
