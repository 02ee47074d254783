#!/usr/bin/env python3
"""A lockstep external client: the stock workload of docs/external-clients.md, locked
with redis-py's Lock (Debian's python3-redis), as a Python worker would use it.

lockstep starts it once per client with LOCKSTEP_* in its environment and reads the JSON
lines it writes on stdout. With --no-timeout the lock is taken without a timeout (the
Lock's default): a holder that dies never lets go of it.
"""
import json
import os
import sys
import time

import redis
from redis.exceptions import ConnectionError, LockNotOwnedError, ResponseError, TimeoutError

ENV = os.environ
LEASE_S = int(ENV["LOCKSTEP_LEASE_MS"]) / 1000
WAIT_S = int(ENV["LOCKSTEP_WAIT_MS"]) / 1000
HOLD_S = int(ENV["LOCKSTEP_HOLD_MS"]) / 1000
ATTEMPTS = int(ENV["LOCKSTEP_ATTEMPTS"])
STOCK_KEY = ENV["LOCKSTEP_STOCK_KEY"]
UNKNOWN = (ConnectionError, TimeoutError)


def report(**line):
    # Flushed at once: the line is out before the command it announces is sent.
    print(json.dumps(line), flush=True)


def sell_one(store):
    report(type="invoke", f="read")
    try:
        raw = store.get(STOCK_KEY)
    except UNKNOWN as e:
        report(type="info", f="read", error=str(e))
        return
    try:
        stock = int(raw)
    except (TypeError, ValueError):
        report(type="fail", f="read", error="not a number: %r" % (raw,))
        return
    report(type="ok", f="read", value=stock)
    time.sleep(HOLD_S)
    if stock <= 0:
        return
    report(type="invoke", f="write", value=stock - 1)
    try:
        store.set(STOCK_KEY, stock - 1)
        report(type="ok", f="write", value=stock - 1)
    except ResponseError as e:
        report(type="fail", f="write", error=str(e))
    except UNKNOWN as e:
        report(type="info", f="write", error=str(e))


def main():
    host, port = ENV["LOCKSTEP_REDIS"].split(",")[0].rsplit(":", 1)
    store = redis.Redis(host=host, port=int(port))
    timeout = None if "--no-timeout" in sys.argv[1:] else LEASE_S
    lock = store.lock(ENV["LOCKSTEP_LOCK_KEY"], timeout=timeout, blocking_timeout=WAIT_S)
    for _ in range(ATTEMPTS):
        report(type="invoke", f="acquire")
        try:
            got = lock.acquire()
        except UNKNOWN as e:
            report(type="info", f="acquire", error=str(e))
            continue
        if not got:
            report(type="fail", f="acquire", error="not acquired within %.3f s" % WAIT_S)
            continue
        report(type="ok", f="acquire")
        report(type="cs-enter")
        sell_one(store)
        report(type="cs-exit")
        report(type="invoke", f="release")
        try:
            lock.release()
            report(type="ok", f="release")
        except LockNotOwnedError as e:
            report(type="fail", f="release", error=str(e))
        except UNKNOWN as e:
            report(type="info", f="release", error=str(e))


if __name__ == "__main__":
    main()
