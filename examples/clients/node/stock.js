// A lockstep external client: the stock workload of docs/external-clients.md, locked with
// node-redlock 5.0.0-beta.2 over ioredis, as a Node service would use them. lockstep
// starts it once per client with LOCKSTEP_* in its environment and reads the JSON lines
// it writes on stdout. With --using it holds the lock through redlock.using(), which
// extends it in the background while the routine works; those extensions are reported on
// a thread of their own ("thread": "auto-extend").
"use strict";

const Redis = require("ioredis");
const { default: Redlock, ExecutionError, ResourceLockedError } = require("redlock");

const env = process.env;
const leaseMs = Number(env.LOCKSTEP_LEASE_MS);
const waitMs = Number(env.LOCKSTEP_WAIT_MS);
const holdMs = Number(env.LOCKSTEP_HOLD_MS);
const attempts = Number(env.LOCKSTEP_ATTEMPTS);
// redlock's defaults: a retry every 200 ms (±100 ms); as many as fit in the wait budget.
const retryDelayMs = 200;
const using = process.argv.slice(2).includes("--using");

// process.stdout.write is synchronous on a pipe (Linux): the line is out before the
// command it announces is sent.
function report(line) {
  process.stdout.write(JSON.stringify(line) + "\n");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A failed acquire or release certainly took no effect only if every vote against it
// was the script declining (the lock taken; for a release, no longer ours); a lost
// connection leaves it unknown. Votes still outstanding after a lease's time count as
// unknown too.
async function quorumOutcome(error) {
  if (!(error instanceof ExecutionError)) return "info";
  const all = Promise.all(error.attempts);
  const stats = await Promise.race([all, sleep(leaseMs).then(() => null)]);
  if (stats === null) return "info";
  for (const s of stats) {
    for (const e of s.votesAgainst.values()) {
      if (!(e instanceof ResourceLockedError)) return "info";
    }
  }
  return "fail";
}

// using() extends its lock through the instance's extend() (Lock.extend calls it), the
// one hook the library gives: each extension it makes in the background is reported
// here, beside whatever the routine's own thread is doing. A thread has one operation
// open at a time, and using() can have two extensions under way (a timer it leaves
// behind when an extension was in flight as the routine returned fires during the next
// hold), so an extension takes the first thread free: "auto-extend", "auto-extend-2"...
const extending = new Set();
class ReportingRedlock extends Redlock {
  async extend(existing, duration, settings) {
    let n = 1;
    while (extending.has(n)) n++;
    extending.add(n);
    const thread = n === 1 ? "auto-extend" : `auto-extend-${n}`;
    report({ type: "invoke", f: "extend", thread });
    try {
      const extended = await super.extend(existing, duration, settings);
      report({ type: "ok", f: "extend", thread });
      return extended;
    } catch (e) {
      report({ type: await quorumOutcome(e), f: "extend", thread, error: e.message });
      throw e;
    } finally {
      extending.delete(n);
    }
  }
}

// A reply error means the command was refused; anything else (a lost connection) leaves
// it unknown.
const commandOutcome = (error) => (error instanceof Redis.ReplyError ? "fail" : "info");

async function sellOne(store, signal) {
  report({ type: "invoke", f: "read" });
  let stock;
  try {
    const raw = await store.get(env.LOCKSTEP_STOCK_KEY);
    stock = Number.parseInt(raw, 10);
    if (Number.isNaN(stock)) {
      report({ type: "fail", f: "read", error: `not a number: ${raw}` });
      return;
    }
  } catch (e) {
    report({ type: commandOutcome(e), f: "read", error: e.message });
    return;
  }
  report({ type: "ok", f: "read", value: stock });
  await sleep(holdMs);
  // using() aborts the signal once an extension failed and the lock ran out: as
  // node-redlock's README says, the routine stops there.
  if (stock <= 0 || (signal && signal.aborted)) return;
  report({ type: "invoke", f: "write", value: stock - 1 });
  try {
    await store.set(env.LOCKSTEP_STOCK_KEY, String(stock - 1));
    report({ type: "ok", f: "write", value: stock - 1 });
  } catch (e) {
    report({ type: commandOutcome(e), f: "write", error: e.message });
  }
}

// One sale inside redlock.using(): it acquires, runs the routine while extending the lock
// in the background, waits for an extension under way, then releases.
async function sellUsing(redlock, store) {
  report({ type: "invoke", f: "acquire" });
  let acquired = false;
  try {
    // Extensions start half a lease before it runs out, not the library's 500 ms: on a
    // loaded machine a timer can fire that late, and the extension would find the lock gone.
    const settings = { automaticExtensionThreshold: Math.floor(leaseMs / 2) };
    await redlock.using([env.LOCKSTEP_LOCK_KEY], leaseMs, settings, async (signal) => {
      acquired = true;
      report({ type: "ok", f: "acquire" });
      report({ type: "cs-enter" });
      await sellOne(store, signal);
      report({ type: "cs-exit" });
      report({ type: "invoke", f: "release" });
    });
  } catch (e) {
    report({ type: await quorumOutcome(e), f: acquired ? "release" : "acquire", error: e.message });
    return;
  }
  report({ type: "ok", f: "release" });
}

async function main() {
  const clients = env.LOCKSTEP_REDIS.split(",").map((address) => {
    const colon = address.lastIndexOf(":");
    return new Redis({ host: address.slice(0, colon), port: Number(address.slice(colon + 1)) });
  });
  const redlock = new ReportingRedlock(clients, { retryCount: Math.floor(waitMs / retryDelayMs), retryDelay: retryDelayMs });
  // Every vote against (a taken lock included) is emitted as an "error" event; Node
  // throws an error event nobody listens to.
  redlock.on("error", () => {});
  const store = clients[0];
  for (let i = 0; i < attempts; i++) {
    if (using) {
      await sellUsing(redlock, store);
      continue;
    }
    report({ type: "invoke", f: "acquire" });
    let lock;
    try {
      lock = await redlock.acquire([env.LOCKSTEP_LOCK_KEY], leaseMs);
    } catch (e) {
      report({ type: await quorumOutcome(e), f: "acquire", error: e.message });
      continue;
    }
    report({ type: "ok", f: "acquire" });
    report({ type: "cs-enter" });
    await sellOne(store);
    report({ type: "cs-exit" });
    report({ type: "invoke", f: "release" });
    try {
      await lock.release();
      report({ type: "ok", f: "release" });
    } catch (e) {
      // An expired lock cannot be released (node-redlock #168): nothing was deleted.
      report({ type: await quorumOutcome(e), f: "release", error: e.message });
    }
  }
  for (const c of clients) c.disconnect();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  },
);
