#!/usr/bin/env bash
# A test fixture: a client that starts something of its own and never finishes. Writes
# its own pid and its child's to the file named by $1 for the test to check.
sleep 1000 &
echo "$$ $!" >"$1"
echo '{"type": "invoke", "f": "acquire"}'
wait
