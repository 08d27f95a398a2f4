"""What the Python scenario programs share: the step reporter (one JSON line
per step on stdout) and the scenario's constants, the same in every
language's program (see test/compat/clients.ts for the steps)."""
import json
import sys
import time
import traceback

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
PER_CODEC = 10  # keyed records produced per codec
PARTITIONS = 2


def args():
    if len(sys.argv) != 3:
        print("usage: <program> BOOTSTRAP PREFIX", file=sys.stderr)
        sys.exit(2)
    return sys.argv[1], sys.argv[2]


def emit(step, status, detail):
    print(json.dumps({"step": step, "status": status, "detail": detail}), flush=True)


def step(name, body):
    """Runs one step: pass with what body returns, fail with what it raised."""
    try:
        emit(name, "pass", body() or "")
        return True
    except Exception as e:  # every failure is reported, none stops the program
        traceback.print_exc(file=sys.stderr)
        emit(name, "fail", f"{type(e).__name__}: {e}")
        return False


def unsupported(name, why):
    emit(name, "unsupported", why)


class Timeout(Exception):
    pass


def wait_until(condition, seconds, what, tick=None):
    """Calls tick() (a poll) and condition() until true, or raises naming what after `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        if tick:
            tick()
        if condition():
            return
        if time.monotonic() > deadline:
            raise Timeout(f"waited {seconds} s for {what() if callable(what) else what}")
        if not tick:
            time.sleep(0.1)


def check(condition, message):
    if not condition:
        raise AssertionError(message)
