#!/usr/bin/env bash
# A test fixture: a client whose fourth line is not JSON (docs/external-clients.md).
echo '{"type": "invoke", "f": "acquire"}'
echo '{"type": "ok", "f": "acquire"}'
echo '{"type": "cs-enter"}'
echo 'acquired the lock, now selling'
echo '{"type": "cs-exit"}'
