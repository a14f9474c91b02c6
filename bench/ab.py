#!/usr/bin/env python3
"""A quick A/B between worker builds during development: each build (a directory holding a
worker-build output, `index.js` and its wasm) runs in a workerd of its own beside the floor, and
the change cells (bench/changes.py's CELLS) run ROUNDS rounds, every system once per round in
rotated order. Prints each cell's median req/s per build and its share of the floor.

  python3 bench/ab.py NAME=DIR [NAME=DIR ...] [--rounds 3] [--seconds 5] [--cells streamed]

`make bench` stays the record; this answers "did that change help" in a few minutes, with the
same load, tenants and rotation."""

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from changes import CELLS, LONG_ANSWERS, measure_effects, median  # noqa: E402
from processes import ROOT, WORK, run, stop_all  # noqa: E402
from run import FLOOR_SCRIPT  # noqa: E402
from systems import GATEWAY_VARS, setup_gateway, start_mock, start_workerd  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+", help="NAME=DIR, DIR holding index.js")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--cells", default="", help="only the cells whose label contains this")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    builds = dict(b.split("=", 1) for b in args.builds)
    try:
        if not (ROOT / FLOOR_SCRIPT).exists():
            run("make --no-print-directory setup")
            env = {**os.environ, "CARGO_TARGET_DIR": str(ROOT / "target/floor"),
                   "WASM_BINDGEN_BIN": str(Path.home() / ".cargo/bin/wasm-bindgen"),
                   "ESBUILD_BIN": str(ROOT / "node_modules/@esbuild/linux-x64/bin/esbuild")}
            run("worker-build --release", cwd=ROOT / "bench/floor", env=env)
        run(["cargo", "build", "--release", "--quiet", "--bin", "loadgen", "--bin", "mock-provider"])
        mock0, mock50, mockfail = start_mock(0), start_mock(50), start_mock(0, status=503)
        mock_long = {t: start_mock(0, words=n) for t, n in LONG_ANSWERS.items()}
        systems = {}
        for name, d in builds.items():
            # DIR@discard: the harness drops the worker's console output instead of relaying it.
            d, _, how = d.partition("@")
            script = str((Path(d).resolve() / "index.js").relative_to(ROOT))
            env = {"CG_WORKER_LOG": "discard"} if how == "discard" else {}
            url = start_workerd(f"ab-{name}", script, [], GATEWAY_VARS, harness_env=env)
            systems[name] = (url, setup_gateway(url, mock0, mock50, mockfail, mock_long))
        floors = {}
        for tag, port in (("short", mock0), *mock_long.items()):
            floors[tag] = start_workerd(f"ab-floor-{tag}", FLOOR_SCRIPT, ["--bare"],
                                        {"UPSTREAM_URL": f"http://127.0.0.1:{port}/v1/chat/completions"})
        systems["floor"] = (floors, None)
        cells = [c for c in CELLS if args.cells in c[0]]
        out = measure_effects(args, systems, cells, args.rounds)
        print("| cell | build | req/s (rounds) | % of floor | p50 ms | errors |\n|---|---|---|---|---|---|")
        for label, *_ in cells:
            floor = median([r["rps"] for r in out[("floor", label)]])
            for name in systems:
                rs = out[(name, label)]
                rps = [r["rps"] for r in rs]
                print(f"| {label} | {name} | {median(rps):.0f} ({', '.join(f'{x:.0f}' for x in rps)}) | "
                      f"{median(rps) / floor:.0%} | {median([r['p50_ms'] for r in rs]):.2f} | "
                      f"{sum(r['errors'] + r['non_2xx'] for r in rs)} |")
    finally:
        stop_all()


if __name__ == "__main__":
    main()
