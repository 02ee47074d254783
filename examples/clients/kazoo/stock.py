#!/usr/bin/env python3
"""A lockstep external client: the stock workload of docs/external-clients.md, locked
with kazoo's Lock recipe (Debian's python3-kazoo, kazoo.recipe.lock.Lock) on lockstep's
ZooKeeper ensemble, the stock itself on the Redis node (Debian's python3-redis).

lockstep starts it once per client with LOCKSTEP_* in its environment: LOCKSTEP_ZOOKEEPER
is the ensemble's connect string (lockstep's proxies, private to this client) and
LOCKSTEP_ZOOKEEPER_SESSION_MS the session timeout to ask for. It writes JSON lines on
stdout, each flushed before what it announces.
"""
import json
import os
import time

import redis
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss, KazooException, LockTimeout, SessionExpiredError
from kazoo.handlers.threading import KazooTimeoutError
from redis.exceptions import ConnectionError, ResponseError, TimeoutError

ENV = os.environ
WAIT_S = int(ENV["LOCKSTEP_WAIT_MS"]) / 1000
HOLD_S = int(ENV["LOCKSTEP_HOLD_MS"]) / 1000
SESSION_S = int(ENV["LOCKSTEP_ZOOKEEPER_SESSION_MS"]) / 1000
ATTEMPTS = int(ENV["LOCKSTEP_ATTEMPTS"])
STOCK_KEY = ENV["LOCKSTEP_STOCK_KEY"]
REDIS_UNKNOWN = (ConnectionError, TimeoutError)
# What leaves an operation's outcome unknown: the answer was lost, or the session ended
# with it in flight.
ZK_UNKNOWN = (ConnectionLoss, SessionExpiredError, KazooTimeoutError)


def report(**line):
    print(json.dumps(line), flush=True)


def sell_one(store):
    report(type="invoke", f="read")
    try:
        raw = store.get(STOCK_KEY)
    except REDIS_UNKNOWN as e:
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
    except REDIS_UNKNOWN as e:
        report(type="info", f="write", error=str(e))


def main():
    host, port = ENV["LOCKSTEP_REDIS"].split(",")[0].rsplit(":", 1)
    store = redis.Redis(host=host, port=int(port))
    zk = KazooClient(hosts=ENV["LOCKSTEP_ZOOKEEPER"], timeout=SESSION_S)
    zk.start(timeout=WAIT_S)
    # The lock recipe's directory, as lockstep's own zookeeper lock names it.
    lock = zk.Lock("/lockstep/" + ENV["LOCKSTEP_LOCK_KEY"], ENV["LOCKSTEP_CLIENT"])
    for _ in range(ATTEMPTS):
        report(type="invoke", f="acquire")
        try:
            got = lock.acquire(timeout=WAIT_S)
        except LockTimeout as e:
            report(type="fail", f="acquire", error="not acquired within %.3f s: %s" % (WAIT_S, e))
            continue
        except ZK_UNKNOWN as e:
            report(type="info", f="acquire", error=repr(e))
            continue
        if not got:
            report(type="fail", f="acquire", error="not acquired")
            continue
        report(type="ok", f="acquire")
        report(type="cs-enter")
        sell_one(store)
        report(type="cs-exit")
        report(type="invoke", f="release")
        try:
            # False: kazoo knew it did not hold the lock any more. A znode the session's
            # end already took is still reported released (kazoo ignores NoNode).
            if lock.release():
                report(type="ok", f="release")
            else:
                report(type="fail", f="release", error="not held")
        except ZK_UNKNOWN as e:
            report(type="info", f="release", error=repr(e))
        except KazooException as e:
            report(type="fail", f="release", error=repr(e))
    zk.stop()
    zk.close()


if __name__ == "__main__":
    main()
