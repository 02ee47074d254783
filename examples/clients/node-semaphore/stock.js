// A lockstep external client: the stock workload of docs/external-clients.md, locked with
// redis-semaphore 5.6.2's Mutex over ioredis, used as its README shows. Unlike
// node-redlock, this Mutex locks a key of its own making, `mutex:<name>` (lockstep learns
// it from the proxy), and keeps the key alive in the background: every 0.8 lease it runs a
// script that extends the key's TTL if the key still holds its identifier, and calls
// onLockLost when it no longer does.
//
//   node stock.js                      the README's first example: onLockLost logs, the
//                                      critical section writes whatever happened
//   node stock.js --check-is-acquired  the README's loop: read `mutex.isAcquired` before
//                                      writing, and skip the write once the lock is lost
"use strict";

const Redis = require("ioredis");
const { Mutex } = require("redis-semaphore");

const env = process.env;
const leaseMs = Number(env.LOCKSTEP_LEASE_MS);
const waitMs = Number(env.LOCKSTEP_WAIT_MS);
const holdMs = Number(env.LOCKSTEP_HOLD_MS);
const attempts = Number(env.LOCKSTEP_ATTEMPTS);

const usage = "usage: node stock.js [--check-is-acquired]";
const args = process.argv.slice(2);
if (args.length > 1 || (args.length === 1 && args[0] !== "--check-is-acquired")) {
  console.error(`error: unknown argument ${JSON.stringify(args.join(" "))}; ${usage}`);
  process.exit(2);
}
const checkIsAcquired = args.length === 1;

// process.stdout.write is synchronous on a pipe (Linux): the line is out before the
// command it announces is sent.
function report(line) {
  process.stdout.write(JSON.stringify(line) + "\n");
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A reply error means the command was refused; anything else (a lost connection) leaves
// it unknown.
const commandOutcome = (error) => (error instanceof Redis.ReplyError ? "fail" : "info");

async function sellOne(store, mutex) {
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
  if (stock <= 0) return;
  // isAcquired turns false only when a background refresh has found the key gone or
  // taken: it narrows the window for a stale write, it does not close it.
  if (checkIsAcquired && !mutex.isAcquired) return;
  report({ type: "invoke", f: "write", value: stock - 1 });
  try {
    await store.set(env.LOCKSTEP_STOCK_KEY, String(stock - 1));
    report({ type: "ok", f: "write", value: stock - 1 });
  } catch (e) {
    report({ type: commandOutcome(e), f: "write", error: e.message });
  }
}

async function main() {
  const address = env.LOCKSTEP_REDIS.split(",")[0];
  const colon = address.lastIndexOf(":");
  const store = new Redis({ host: address.slice(0, colon), port: Number(address.slice(colon + 1)) });
  for (let i = 0; i < attempts; i++) {
    const mutex = new Mutex(store, env.LOCKSTEP_LOCK_KEY, {
      lockTimeout: leaseMs,
      acquireTimeout: waitMs,
      // The refresh timer is the library's own: its EVALSHA calls are not operations of
      // the workload, so they are not reported as lines. A protocol line that names a
      // thread of the client would let this callback (and a refresh hook, which the
      // library does not offer) report them beside the workload's operations.
      onLockLost: (e) => console.error(`onLockLost: ${e.message}`),
    });
    report({ type: "invoke", f: "acquire" });
    let acquired;
    try {
      acquired = await mutex.tryAcquire();
    } catch (e) {
      report({ type: commandOutcome(e), f: "acquire", error: e.message });
      continue;
    }
    if (!acquired) {
      report({ type: "fail", f: "acquire", error: `mutex:${env.LOCKSTEP_LOCK_KEY} still taken after ${waitMs} ms` });
      continue;
    }
    report({ type: "ok", f: "acquire" });
    report({ type: "cs-enter" });
    await sellOne(store, mutex);
    report({ type: "cs-exit" });
    report({ type: "invoke", f: "release" });
    // Once a refresh has found the lock lost, release() sends nothing.
    const lost = !mutex.isAcquired;
    try {
      await mutex.release();
    } catch (e) {
      report({ type: commandOutcome(e), f: "release", error: e.message });
      continue;
    }
    if (lost) {
      report({ type: "fail", f: "release", error: "the lock was lost (onLockLost): nothing to release" });
    } else {
      // The release script deletes the key only if it still holds this mutex's
      // identifier, and release() resolves the same either way.
      report({ type: "info", f: "release", error: "redis-semaphore's release() does not say whether it deleted the key" });
    }
  }
  store.disconnect();
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e && e.stack ? e.stack : e);
    process.exit(1);
  },
);
