#!/usr/bin/env python3
"""CogniGate's side-by-side benchmark (`make bench`).

Runs, in one go on this machine: a fast native mock upstream (0 ms and 50 ms latency), measured
directly as the baseline; a bare fetch-forward worker (the floor) and CogniGate, both on workerd
through the Miniflare API; LiteLLM's proxy and Portkey's gateway pointed at the same mock. Every
system is driven by the same load tool (`loadgen`) at concurrency 1, 16 and 64, non-streamed and
streamed, with the systems' order rotated cell by cell so machine noise hits all of them alike.
Also: a failover request, a breaker-open skip, the hot path's D1 and Durable Object counters, the
first request of a fresh isolate (cold start) for CogniGate and the floor, the wasm size, and the
pure routing micro-benchmark. Results go to bench/RESULTS.md.

  python3 bench/run.py [--seconds 5] [--warmup 1] [--concurrency 1,16,64] [--skip-peers]
                       [--only NAMES] [--cold-samples 20] [--no-build]

--only runs a subset (systems, cell filters or groups; bench/selection.py lists them), e.g.
`--only cognigate,floor`, `--only portkey,streamed,0ms` or `--only cold`. --no-build uses build/
as it is (someone's `make build`) and builds only what is missing (the floor, loadgen, the mock).

The parts: processes.py (child processes, HTTP), systems.py (starting what is measured),
measure.py (the matrix and the other cells), cold.py (cold start), report.py and targets.py
(bench/RESULTS.md).
"""

import argparse
import datetime
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from changes import LONG_ANSWERS, build_changes, measure_effects  # noqa: E402
from cold import FLOOR_SCRIPT, measure_cold  # noqa: E402
from measure import counters, measure_matrix, measure_special, routing_bench, wasm_size  # noqa: E402
from processes import ROOT, WORK, log, run, stop_all  # noqa: E402
from report import report  # noqa: E402
from selection import Selection  # noqa: E402
from systems import GATEWAY_VARS, setup_gateway, start_litellm, start_mock, start_portkey, start_workerd  # noqa: E402


def build(args, sel):
    """What the selected cells need, built as `make bench` always built it; with --no-build, only
    what is missing (build/ is then someone else's `make build`)."""
    offline = {  # as the Makefile sets them: nothing is downloaded from GitHub
        "WASM_BINDGEN_BIN": str(Path.home() / ".cargo/bin/wasm-bindgen"),
        "ESBUILD_BIN": str(ROOT / "node_modules/@esbuild/linux-x64/bin/esbuild"),
    }
    noopt = WORK / "build-noopt"
    if not args.no_build:
        run("make --no-print-directory setup")
        if sel.wants("cognigate-noopt"):
            # The same worker without wasm-opt, kept aside to show what wasm-opt changes.
            run("worker-build --release", env={**os.environ, **offline})
            shutil.rmtree(noopt, ignore_errors=True)
            shutil.copytree(ROOT / "build", noopt)
        run("make --no-print-directory build")
    elif not (ROOT / "build/index.js").exists():
        raise SystemExit("--no-build: build/ is missing (run `make build` first)")
    elif sel.wants("cognigate-noopt") and not (noopt / "index.js").exists():
        raise SystemExit(f"--no-build: {noopt} is missing (a full run makes it)")
    if sel.wants("floor") or sel.wants("cold") or sel.wants("changes"):
        if not args.no_build or not (ROOT / FLOOR_SCRIPT).exists():
            offline["CARGO_TARGET_DIR"] = str(ROOT / "target/floor")
            run("worker-build --release", cwd=ROOT / "bench/floor", env={**os.environ, **offline})
    run(["cargo", "build", "--release", "--quiet", "--bin", "loadgen", "--bin", "mock-provider"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--concurrency", default="1,16,64")
    ap.add_argument("--skip-peers", action="store_true")
    ap.add_argument("--only", help="comma-separated systems, cell filters or groups (bench/selection.py)")
    ap.add_argument("--cold-samples", type=int, default=20, help="fresh isolates per system in the cold-start cell")
    ap.add_argument("--no-build", action="store_true", help="use build/ as it is; build only what is missing")
    args = ap.parse_args()
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    sel = Selection(args.only)
    started = datetime.datetime.now(datetime.timezone.utc)
    WORK.mkdir(parents=True, exist_ok=True)
    try:
        build(args, sel)
        ports = {0: start_mock(0), 50: start_mock(50)}
        long_ports = {t: start_mock(0, words=n) for t, n in LONG_ANSWERS.items()} if sel.wants("changes") else {}
        mockfail = start_mock(0, status=503)
        gateways = sel.gateways()
        configs = {
            "gateway": ("build/index.js", {}),
            # The strict mode beside the default, and both again with 20 ms of routing latency.
            "gateway-strict": ("build/index.js", {"ROUTING_LEASE_MS": "0"}),
            "gateway-rtt20": ("build/index.js", {"ROUTING_RTT_MS": "20"}),
            "gateway-strict-rtt20": ("build/index.js", {"ROUTING_LEASE_MS": "0", "ROUTING_RTT_MS": "20"}),
            "gateway-noopt": (str((WORK / "build-noopt/index.js").relative_to(ROOT)), {}),
        }
        changes, skipped = build_changes() if sel.wants("changes") else ({}, [])
        for name, script in changes.items():
            configs[f"gateway-{name}"] = (script, {})
            gateways.add(f"gateway-{name}")
        if changes:
            gateways.add("gateway")
        urls = {name: start_workerd(name, script, [], {**GATEWAY_VARS, **extra})
                for name, (script, extra) in configs.items() if name in gateways}
        floors = {f"floor{lat}": ports[lat] for lat in sel.latencies} if sel.wants("floor") else {}
        if long_ports:
            floors |= {"floor0": ports[0]} | {f"floor-{t}": p for t, p in long_ports.items()}
        for name, port in floors.items():
            urls[name] = start_workerd(name, FLOOR_SCRIPT, ["--bare"],
                                       {"UPSTREAM_URL": f"http://127.0.0.1:{port}/v1/chat/completions"})
        keys = setup_gateway(urls["gateway"], ports[0], ports[50], mockfail, long_ports) if "gateway" in urls else {}
        for gw in ("strict", "rtt20", "strict-rtt20", "noopt"):
            if f"gateway-{gw}" in urls:
                keys[gw] = setup_gateway(urls[f"gateway-{gw}"], ports[0], ports[50], mockfail)
        change_keys = {name: setup_gateway(urls[f"gateway-{name}"], ports[0], ports[50], mockfail, long_ports) for name in changes}
        peers = {}
        if not args.skip_peers:
            for name, starter in (("litellm", lambda: start_litellm(ports[0], ports[50])), ("portkey", lambda: start_portkey(ports[0]))):
                if not sel.wants(name):
                    continue
                peer, why = starter()
                if peer:
                    peers[name] = peer
                else:
                    skipped.append(f"{name}: {why}")
                    log(f"skipping {name}: {why}")
        results = measure_matrix(args, sel, ports, urls, keys, peers) if sel.matrix() else []
        effects = {}
        if long_ports:
            floor_urls = {"short": urls["floor0"]} | {t: urls[f"floor-{t}"] for t in long_ports}
            effect_systems = {"floor": (floor_urls, None)}
            effect_systems |= {name: (urls[f"gateway-{name}"], change_keys[name]) for name in changes}
            effect_systems["cognigate"] = (urls["gateway"], keys)
            effects = measure_effects(args, effect_systems)
        special = measure_special(args, urls, keys) if sel.wants("special") else []
        ctr = counters(urls, keys) if sel.wants("counters") else {}
        cold = measure_cold(args.cold_samples, ports, mockfail, changes) if sel.wants("cold") else None
        routing = routing_bench() if sel.wants("routing") else []
        report(args, sel, results, special, ctr, wasm_size(), routing, peers, skipped, started, cold, effects)
    finally:
        stop_all()


if __name__ == "__main__":
    main()
