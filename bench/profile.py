#!/usr/bin/env python3
"""`make profile`: where the gateway's CPU goes per request, from V8's own CPU profiler.

Builds the worker as `make build` does but keeps the wasm name section (wasm-opt -g), runs it on
workerd through the Miniflare API with the inspector open, puts the bench's load on it (the
default tenant, a two-candidate chain on a 0 ms mock, `loadgen`), and records a CPU profile of the
isolate through the DevTools protocol (bench/cpuprofile.mjs) while the load runs. Non-streamed,
streamed and cached (the response cache on, every request after the first a hit) each get a
profile under target/profile/ (open them in Chrome DevTools' Performance panel), and this prints,
per profile:
  - the top 15 functions by self time, wasm functions included;
  - the cost per request split by what the request path is doing (bench/profile_split.py);
  - the boundary crossings per request by import, counted on an instrumented copy of the build
    (bench/crossings.py): a number that does not move with the machine's speed;
  - what the first request of a fresh isolate makes V8 compile (bench/cold_compile.py): the wasm
    bytes its path runs, another count that does not drift.

  python3 bench/profile.py [--seconds 10] [--concurrency 16] [--no-build] [--words N]

--words N makes the mock's answer N words long (a streamed one: N events), where a stream's cost
per chunk shows.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cold_compile  # noqa: E402
import crossings  # noqa: E402
from processes import http  # noqa: E402
from profile_split import summarize  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "target" / "profile"
ADMIN = "profile-admin-key"
KEK = "cd" * 32
procs = []


def log(msg):
    print(f"profile: {msg}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, name, stdout=None, env=None):
    logf = open(OUT / f"{name}.log", "w")
    p = subprocess.Popen(list(map(str, cmd)), cwd=ROOT, stdin=subprocess.PIPE, stdout=stdout or logf, stderr=logf,
                         env={**os.environ, **(env or {})}, start_new_session=True)
    procs.append(p)
    return p



def wasm_opt_flags():
    """The Makefile's WASM_OPT_FLAGS, so the profiled module is the shipped one plus its names."""
    out = subprocess.run(["make", "--no-print-directory", "-s", "print-wasm-opt-flags"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def build_with_names():
    env = {**os.environ, "WASM_BINDGEN_BIN": str(Path.home() / ".cargo/bin/wasm-bindgen"),
           "ESBUILD_BIN": str(ROOT / "node_modules/@esbuild/linux-x64/bin/esbuild")}
    # worker-build writes build/; the named copy goes aside and `make build` puts build/ back.
    subprocess.run(["worker-build", "--release"], cwd=ROOT, env=env, check=True)
    named = OUT / "build"
    shutil.rmtree(named, ignore_errors=True)
    shutil.copytree(ROOT / "build", named)
    subprocess.run([ROOT / "node_modules/binaryen/bin/wasm-opt", named / "index_bg.wasm", "-o", named / "index_bg.wasm",
                    "-g", *wasm_opt_flags()], check=True)
    subprocess.run(["make", "--no-print-directory", "build"], cwd=ROOT, check=True)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "loadgen", "--bin", "mock-provider"], cwd=ROOT, check=True)


def setup_tenant(url, mock, tenant="prof", settings=None):
    auth = {"authorization": f"Bearer {ADMIN}"}

    def admin(method, path, body=None):
        status, _, text = http(method, url + path, body, auth)
        assert status < 300, f"{method} {path}: {status} {text[:300]}"
        return json.loads(text or b"{}")

    # As bench/run.py's `bench0`: two models on one provider with two keys, a two-candidate chain.
    admin("POST", "/admin/v1/tenants", {"id": tenant, "name": tenant})
    if settings:
        admin("PUT", f"/admin/v1/tenants/{tenant}/settings", settings)
    admin("PUT", f"/admin/v1/tenants/{tenant}/providers/mock",
          {"kind": "openai", "base_url": f"http://127.0.0.1:{mock}/v1", "keys": ["sk-a-1", "sk-a-2"], "key_strategy": "round_robin"})
    for m in ("m1", "m2"):
        admin("PUT", f"/admin/v1/tenants/{tenant}/models/{m}", {"provider": "mock", "context_window": 128000, "input_price_per_mtok": 1})
    admin("PUT", f"/admin/v1/tenants/{tenant}/routing-rules", {"match": "bench", "chain": ["m1", "m2"]})
    return admin("POST", f"/admin/v1/tenants/{tenant}/api-keys")["key"]


# What is profiled: (name, streamed, the tenant's settings). "cached" has the response cache on and
# asks the same thing every time, so all but its first request are hits.
PHASES = (("non-streamed", False, None), ("streamed", True, None), ("cached", False, {"cache": {"ttl_s": 3600}}))


def setup_tenants(url, mock):
    return {name: setup_tenant(url, mock, f"prof-{i}", settings) for i, (name, _, settings) in enumerate(PHASES)}


def loadgen(url, key, stream, concurrency, seconds, warmup=0.5):
    body = {"model": "bench", "messages": [{"role": "user", "content": "hello"}], "stream": stream}
    cmd = [Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release/loadgen", "--url", url + "/v1/chat/completions", "--concurrency", concurrency,
           "--seconds", seconds, "--warmup", warmup, "--body", json.dumps(body), "--header", f"authorization: Bearer {key}"]
    return json.loads(subprocess.run(list(map(str, cmd)), capture_output=True, text=True, check=True).stdout)


def profile_one(url, inspector, key, name, stream, args):
    loadgen(url, key, stream, args.concurrency, 2)  # warm the isolate and its caches first
    out = OUT / f"cognigate-{name}.cpuprofile"
    rec = subprocess.Popen(["node", str(ROOT / "bench/cpuprofile.mjs"), "--port", str(inspector), "--seconds", str(args.seconds + 0.5),
                            "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE)
    assert rec.stdout.readline().startswith(b"recording"), "the profiler did not start"
    # The recording spans the load (0.25 s either side): requests/s over the load's own window.
    time.sleep(0.25)
    r = loadgen(url, key, stream, args.concurrency, args.seconds, warmup=0)
    assert rec.wait(60) == 0, "the profiler failed"
    requests = r["rps"] * args.seconds
    log(f"{name}: {r['rps']:.0f} req/s at c={args.concurrency} while profiling; wrote {out.relative_to(ROOT)}")
    return name, json.loads(out.read_text()), requests, r


def count_crossings(profiled_cmd, mport):
    """The boundary crossings per request (bench/crossings.py), on an instrumented copy of the
    profiled build in a workerd of its own, with no inspector attached."""
    counted = OUT / "build-crossings"
    crossings.instrument(OUT / "build", counted)
    state = OUT / "state-crossings"
    shutil.rmtree(state, ignore_errors=True)
    cmd = [str(c) for c in profiled_cmd]
    cmd[cmd.index("--state") + 1] = str(state)
    cmd[cmd.index("--script") + 1] = str((counted / "index.js").relative_to(ROOT))
    i = cmd.index("--inspector-port")
    del cmd[i:i + 2]
    gw = start(cmd, "gateway-crossings", stdout=subprocess.PIPE, env={"CG_HARNESS_LOG": "warn"})
    url = json.loads(gw.stdout.readline())["url"].rstrip("/")
    keys = setup_tenants(url, mport)
    tables = []
    for name, stream, _ in PHASES:
        tables.append(crossings.table(name, crossings.per_request(http, url, keys[name], stream)))
    log("counted the boundary crossings per request")
    return tables


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--no-build", action="store_true", help="profile target/profile/build as it is")
    ap.add_argument("--words", type=int, help="the mock's answers this many words long (a streamed one: an event per word)")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    if not args.no_build:
        build_with_names()
    try:
        mport = free_port()
        start([Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "release/mock-provider", "--port", mport, "--name", "mock0", "--latency-ms", 0,
               *(["--words", args.words] if args.words else [])], "mock")
        inspector = free_port()
        state = OUT / "state"
        shutil.rmtree(state, ignore_errors=True)
        cmd = ["node", "tests/harness/serve.mjs", "--state", state, "--script", (OUT / "build/index.js").relative_to(ROOT),
               "--inspector-port", inspector, "--var", f"CG_ADMIN={ADMIN}", "--var", f"CG_KEK={KEK}", "--var", "ALLOW_HTTP_UPSTREAMS=true"]
        # As the bench runs it: warn-level harness log; the worker's own lines relayed to a file.
        gw = start(cmd, "gateway", stdout=subprocess.PIPE, env={"CG_HARNESS_LOG": "warn"})
        url = json.loads(gw.stdout.readline())["url"].rstrip("/")
        keys = setup_tenants(url, mport)
        report = []
        for name, stream, _ in PHASES:
            name, prof, requests, r = profile_one(url, inspector, keys[name], name, stream, args)
            report.append(summarize(name, prof, requests, r, args.concurrency))
        report += count_crossings(cmd, mport)
        report.append(cold_compile.report(OUT / "build"))
        text = "\n".join(report)
        (OUT / "summary.md").write_text(text + "\n")
        print(text)
        log(f"wrote {(OUT / 'summary.md').relative_to(ROOT)}")
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


if __name__ == "__main__":
    main()
