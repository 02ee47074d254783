#!/usr/bin/env python3
"""A test fixture: prints what CPython's clocks read, after a sleep on them."""
import json
import time

time.sleep(0.05)  # CPython sleeps until a CLOCK_MONOTONIC deadline
print(json.dumps({"wall_s": time.time(), "mono_s": time.monotonic()}), flush=True)
