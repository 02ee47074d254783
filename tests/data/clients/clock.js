// A test fixture: prints what Node's clocks read, after a timer on them.
"use strict";
setTimeout(() => {
  const mono = Number(process.hrtime.bigint()) / 1e9;
  process.stdout.write(JSON.stringify({ wall_s: Date.now() / 1000, mono_s: mono }) + "\n");
}, 50);
