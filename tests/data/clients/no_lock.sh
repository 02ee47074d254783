#!/usr/bin/env bash
# A test fixture: a client that reports holding the lock without writing any key, as a
# program whose lock lives somewhere lockstep cannot see (in memory, another store) would.
echo '{"type": "invoke", "f": "acquire"}'
echo '{"type": "ok", "f": "acquire"}'
echo '{"type": "cs-enter"}'
echo '{"type": "cs-exit"}'
echo '{"type": "invoke", "f": "release"}'
echo '{"type": "ok", "f": "release"}'
