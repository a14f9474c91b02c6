"""The cold-start cell: the first request of a fresh isolate, for CogniGate and the floor.

Every sample starts a new serve.mjs (a new Miniflare, so a new workerd and a new isolate), waits
for its ready line, times one request from send to the last byte of the answer, and stops it.
CogniGate's samples each start from a copy of one prepared state directory (tenants, providers,
keys in D1, as the matrix's gateway has them), so the tenant is warm in D1 and every sample sees
the same state; the floor has no state of its own.

Readiness is serve.mjs's `{"url": ...}` line, printed once Miniflare's `ready` resolved (workerd
listening) and the D1 migrations were checked through Miniflare's own D1 proxy: no request goes to
the worker before the timed one, which would warm the isolate. The time from process start to that
line is reported beside it as the startup cost (Node, Miniflare, workerd loading the script)."""

import http.client
import json
import shutil
import subprocess
import time
from contextlib import contextmanager
from urllib.parse import urlsplit

from processes import WORK, http as http_call, log, start, stop
from selection import rotated
from systems import GATEWAY_VARS, read_ready, serve_cmd, setup_gateway

GATEWAY_SCRIPT = "build/index.js"
FLOOR_SCRIPT = "bench/floor/build/index.js"


def pct(values, p):
    """Nearest rank, as loadgen computes its percentiles."""
    s = sorted(values)
    return s[round((len(s) - 1) * p)] if s else float("nan")


def prepare_gateway(ports, mockfail):
    """One gateway run with --keep-state: the bench's tenants set up through the admin API, then
    one request of the sampled tenant, so its routing and ledger objects exist on disk as they do
    for a tenant in service (a fresh isolate is what is cold, not the tenant). Returns the state
    directory (the process is stopped: its SQLite files are complete) and the tenants' keys."""
    state = WORK / "state-cold-prepared"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    p = start(serve_cmd(state, GATEWAY_SCRIPT, ["--keep-state"], GATEWAY_VARS), "cold-prepare",
              env={"CG_HARNESS_LOG": "warn"}, stdout=subprocess.PIPE)
    url = read_ready(p)
    keys = setup_gateway(url, ports[0], ports[50], mockfail)
    status, _, text = http_call("POST", url + "/v1/chat/completions", chat_body("bench"), {"authorization": f"Bearer {keys['bench0']}"})
    assert status == 200, f"cold: preparing request: {status} {text[:300]}"
    stop(p)
    return state, keys


def chat_body(model):
    # The matrix's non-streamed body.
    return {"model": model, "messages": [{"role": "user", "content": "hello"}], "stream": False}


def first_request(url, headers, body):
    """(status, ms from send to the answer's last byte). The TCP connection is made first and
    not timed: workerd accepts it without the isolate."""
    u = urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.connect()
    data = json.dumps(body).encode()
    t = time.perf_counter()
    conn.request("POST", u.path, body=data, headers={"content-type": "application/json", **headers})
    r = conn.getresponse()
    r.read()
    ms = (time.perf_counter() - t) * 1000
    conn.close()
    return r.status, ms


@contextmanager
def fresh_isolate(name, state, script, extra_args, env_vars, env=None):
    """A new serve.mjs (so a new workerd and isolate) on `state`, stopped on exit: yields (its URL,
    ms from process start to its ready line). Its log is target/bench/cold-NAME.log."""
    t0 = time.perf_counter()
    p = start(serve_cmd(state, script, extra_args, env_vars), f"cold-{name}",
              env={"CG_HARNESS_LOG": "warn", **(env or {})}, stdout=subprocess.PIPE)
    try:
        url = read_ready(p)
        yield url, (time.perf_counter() - t0) * 1000
    finally:
        stop(p)


def sample(name, state, script, extra_args, env_vars, headers, model):
    """One fresh process, one timed request. Returns (startup ms, first request ms, status)."""
    with fresh_isolate(name, state, script, extra_args, env_vars) as (url, startup):
        status, ms = first_request(url + "/v1/chat/completions", headers, chat_body(model))
    return startup, ms, status


def measure_cold(samples, ports, mockfail, builds=None):
    """`builds`: other CogniGate builds ({system: script}, the hot-path issue's changes), sampled
    on the same prepared state beside this one, so each change's effect on a cold isolate comes
    from the same run."""
    prepared, keys = prepare_gateway(ports, mockfail)
    runs = WORK / "cold"
    auth = {"authorization": f"Bearer {keys['bench0']}"}
    systems = {name: (script, [], GATEWAY_VARS, auth, "bench") for name, script in (builds or {}).items()}
    systems |= {
        "cognigate": (GATEWAY_SCRIPT, [], GATEWAY_VARS, auth, "bench"),
        "floor": (FLOOR_SCRIPT, ["--bare"], {"UPSTREAM_URL": f"http://127.0.0.1:{ports[0]}/v1/chat/completions"}, {}, "m1"),
    }
    out = {name: {"first": [], "startup": [], "errors": 0} for name in systems}
    for i in range(samples):
        for name in rotated(systems, i):
            script, extra, env_vars, headers, model = systems[name]
            state = runs / f"{name}-{i}"
            shutil.rmtree(state, ignore_errors=True)
            if name != "floor":
                shutil.copytree(prepared, state)
            else:
                state.mkdir(parents=True)
            startup, ms, status = sample(name, state, script, extra, env_vars, headers, model)
            shutil.rmtree(state, ignore_errors=True)
            if status != 200:
                out[name]["errors"] += 1
                log(f"cold {name} sample {i}: status {status}")
                continue
            out[name]["first"].append(ms)
            out[name]["startup"].append(startup)
            log(f"cold {name:9s} sample {i:2d}: startup {startup:7.1f} ms, first request {ms:7.2f} ms")
    return out
