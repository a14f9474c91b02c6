"""The bench's child processes and its small HTTP client: starting and stopping what it measures,
waiting for a port to answer, one-off requests (admin set-up, counters). Shared by the modules of
bench/run.py."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "bench"

procs = []


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    log("$ " + (cmd if isinstance(cmd, str) else " ".join(map(str, cmd))))
    return subprocess.run(cmd, check=True, cwd=kw.pop("cwd", ROOT), shell=isinstance(cmd, str), **kw)


def start(cmd, name, env=None, stdout=None):
    logf = open(WORK / f"{name}.log", "w")
    p = subprocess.Popen(
        cmd,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdin=subprocess.PIPE,
        stdout=stdout or logf,
        stderr=logf,
        start_new_session=True,
    )
    procs.append(p)
    return p


def stop(p, seconds=10):
    """Stops one process started by `start` and waits for it: closing stdin first, which is how
    serve.mjs knows to dispose Miniflare (workerd with it); SIGTERM to the group if it lingers."""
    try:
        if p.stdin:
            p.stdin.close()
        p.wait(seconds)
    except (subprocess.TimeoutExpired, BrokenPipeError):
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        p.wait(seconds)
    if p in procs:
        procs.remove(p)


def stop_all():
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url, seconds=120):
    """True once anything answers HTTP at `url`."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return True
        except urllib.error.HTTPError:
            return True
        except Exception:
            time.sleep(0.3)
    return False


def http(method, url, body=None, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, method=method, data=data, headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()
