#!/usr/bin/env bash
# A test fixture: a client that dies in the middle of an operation, as a program whose
# library is missing would.
echo '{"type": "invoke", "f": "acquire"}'
echo "starting up" >&2
echo "boom: cannot load the lock library" >&2
exit 3
