#!/usr/bin/env python3
"""A test fixture (docs/external-clients.md): the stock workload under SET NX PX with a
watchdog thread that extends the lock every fifth of its lease while the main thread
holds it, and reports each extend on a thread of its own ("thread": "watchdog").

With --buffered it never flushes stdout, which it buffers 64 KiB at a time (whatever
PYTHONUNBUFFERED says), so every line reaches lockstep when the program exits, long
after the commands they announce.
"""
import atexit
import json
import os
import sys
import threading
import time

import redis

ENV = os.environ
LEASE_MS = int(ENV["LOCKSTEP_LEASE_MS"])
BUFFERED = "--buffered" in sys.argv[1:]
EXTEND = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end"
UNLOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"
out = threading.Lock()
if BUFFERED:
    sys.stdout = open(sys.stdout.fileno(), "w", buffering=1 << 16, closefd=False)
    atexit.register(sys.stdout.flush)


def report(**line):
    with out:  # one line at a time, whichever thread writes it
        print(json.dumps(line), flush=not BUFFERED)


def watchdog(store, key, token, stop):
    while not stop.wait(LEASE_MS / 5000):
        report(type="invoke", f="extend", thread="watchdog")
        if store.eval(EXTEND, 1, key, token, LEASE_MS) == 1:
            report(type="ok", f="extend", thread="watchdog")
        else:
            report(type="fail", f="extend", thread="watchdog", error="no longer ours")
            return


def main():
    host, port = ENV["LOCKSTEP_REDIS"].split(",")[0].rsplit(":", 1)
    store = redis.Redis(host=host, port=int(port))
    key, stock_key = ENV["LOCKSTEP_LOCK_KEY"], ENV["LOCKSTEP_STOCK_KEY"]
    token = "%s-%s" % (ENV["LOCKSTEP_CLIENT"], ENV["LOCKSTEP_INCARNATION"])
    deadline = time.monotonic() + int(ENV["LOCKSTEP_WAIT_MS"]) / 1000
    report(type="invoke", f="acquire")
    while not store.set(key, token, nx=True, px=LEASE_MS):
        if time.monotonic() >= deadline:
            report(type="fail", f="acquire")
            return
        time.sleep(0.01)
    report(type="ok", f="acquire")
    stop = threading.Event()
    dog = threading.Thread(target=watchdog, args=(store, key, token, stop))
    dog.start()
    report(type="cs-enter")
    report(type="invoke", f="read")
    stock = int(store.get(stock_key))
    report(type="ok", f="read", value=stock)
    time.sleep(int(ENV["LOCKSTEP_HOLD_MS"]) / 1000)
    report(type="invoke", f="write", value=stock - 1)
    store.set(stock_key, stock - 1)
    report(type="ok", f="write")
    report(type="cs-exit")
    stop.set()
    dog.join()  # no extend after the release
    report(type="invoke", f="release")
    released = store.eval(UNLOCK, 1, key, token) == 1
    report(type="ok" if released else "fail", f="release")


if __name__ == "__main__":
    main()
