#!/usr/bin/env bash
# A test fixture: a client that dies in the middle of an operation, as a Node program whose
# lock library is missing would: the error, its stack, then the runtime's version line.
echo '{"type": "invoke", "f": "acquire"}'
cat >&2 <<'TRACE'
starting up
/app/stock.js:12
    throw new Error('cannot load the lock library');
    ^

Error: cannot load the lock library
    at Object.<anonymous> (/app/stock.js:12:11)
    at Module._compile (node:internal/modules/cjs/loader:1256:14)
    at node:internal/main/run_main_module:23:47

Node.js v18.19.0
TRACE
exit 3
