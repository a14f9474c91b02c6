"""The hot-path issue's changes, each measured in the same run as everything else: the worker is
built as it was at each change's commit (a git worktree per commit under target/bench/changes,
built as `make build` builds, each with its own cargo target directory so later runs reuse it)
and runs in its own workerd as `cognigate@<commit>`. A few cells (`CELLS`, 0 ms upstream, one of
them a long streamed answer) then run every build, this checkout's `cognigate` and the floor,
`ROUNDS` times in rotated order; the report's "Each change's effect" table gives each change's
median and its ratio to the build before it, all from this run.

A commit that is not in this clone's history (a shallow clone) is skipped with a note."""

import os
import subprocess
from pathlib import Path

from measure import loadgen
from processes import ROOT, WORK, log, run
from selection import rotated

# Oldest first. The first is the state before the issue; each later one is one change.
CHANGES = (
    ("bec8239", "before the hot-path issue"),
    ("65f1515", "runtime's own Request, global fetch, one arrayBuffer() per announced body"),
    ("97e67ba", "streamed relay: upstream piped through a TransformStream calling the relay per chunk"),
    ("11201e6", "streamed relay: a Rust pump into the runtime's native IdentityTransformStream"),
    ("0fc5ec0", "each route's handler and each rarely taken path polled as a wasm function of its own (edge/own_poll.rs)"),
    ("95d56af", "the clock read as Date.now(), not new Date() (a4b78db, with the review after it)"),
    ("efd4d4f", "fetch, its timeout and an announced body's arrayBuffer() in one JavaScript promise"),
    ("fffce97", "a chat request's headers read in one crossing, and the headers it sets set in one"),
    ("d6b27f8", "Durable Object bodies parsed by serde_json, not through serde_wasm_bindgen"),
    ("fc778da", "streamed relay: past the first event, JavaScript reads and writes each chunk (edge/stream_pump.rs)"),
    ("d8fb214", "one ordered map and one sort for the crate (config::SortedMap, config::sort): a smaller module"),
)
# The last row: this checkout, after the changes above.
CURRENT = ("the routing object's routes and an upstream answer's three reads each a function of its own: "
           "less compiled by a first request (bench/cold_compile.py) (this build)")


def system(commit):
    return f"cognigate@{commit}"


def present(commit):
    return subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT,
                          capture_output=True).returncode == 0


def build_changes():
    """Builds each change's worker where its build is missing; returns ({system: script path
    relative to ROOT}, [skipped notes])."""
    scripts, skipped = {}, []
    flags = subprocess.run(["make", "--no-print-directory", "print-wasm-opt-flags"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    env = {**os.environ,
           "WASM_BINDGEN_BIN": str(Path.home() / ".cargo/bin/wasm-bindgen"),
           "ESBUILD_BIN": str(ROOT / "node_modules/@esbuild/linux-x64/bin/esbuild")}
    for commit, _ in CHANGES:
        if not present(commit):
            skipped.append(f"{system(commit)}: commit {commit} is not in this clone's history")
            continue
        base = WORK / "changes" / commit
        src, script = base / "src", base / "src" / "build" / "index.js"
        # Written after wasm-opt: a build stopped half way is built again, not measured.
        done = base / "built"
        if not done.exists():
            log(f"building {system(commit)} (a git worktree at {commit}; a few minutes the first time)")
            if not src.exists():
                run(["git", "worktree", "add", "--force", "--detach", str(src), commit])
            # One target directory for every change: the dependencies compile once, and each
            # change recompiles only the crate (the builds run one after another).
            run(["worker-build", "--release"], cwd=src, env={**env, "CARGO_TARGET_DIR": str(WORK / "changes" / "target")})
            wasm = src / "build" / "index_bg.wasm"
            run([str(ROOT / "node_modules/binaryen/bin/wasm-opt"), str(wasm), "-o", str(wasm), *flags])
            done.write_text(commit + "\n")
        scripts[system(commit)] = str(script.relative_to(ROOT))
    return scripts, skipped


# The cells each change is measured in, 0 ms upstream: (label, streamed, concurrency, tenant). The
# long answers' tenants stream this many events each, where the relay's cost per chunk shows.
LONG_ANSWERS = {"long0": 200, "long1000": 1000}
CELLS = (
    ("non-streamed c=1", False, 1, "bench0"),
    ("non-streamed c=16", False, 16, "bench0"),
    ("streamed c=1", True, 1, "bench0"),
    ("streamed c=16", True, 16, "bench0"),
    *((f"streamed c=16, {n}-event answer", True, 16, t) for t, n in LONG_ANSWERS.items()),
)
ROUNDS = 3


def measure_effects(args, systems, cells=CELLS, rounds=ROUNDS):
    """Each cell `rounds` times, every system once per round in rotated order (so drift in the
    machine's speed hits them alike). `systems`: name -> (url, {tenant: key} or None for the
    floor, which takes no key). Returns {(name, label): [result, ...]}."""
    out = {}
    names = list(systems)
    for label, stream, c, tenant in cells:
        for r in range(rounds):
            for name in rotated(names, r):
                url, keys = systems[name]
                if keys is None:
                    target, headers = url.get(tenant, url["short"]), {}
                else:
                    target, headers = url, {"authorization": f"Bearer {keys[tenant]}"}
                body = {"model": "m1" if keys is None else "bench",
                        "messages": [{"role": "user", "content": "hello"}], "stream": stream}
                res = loadgen(target + "/v1/chat/completions", headers, body, c, args.seconds, args.warmup)
                out.setdefault((name, label), []).append(res)
                log(f"effects {label:32s} round {r + 1} {name:18s}: {res['rps']:7.0f} req/s p50 {res['p50_ms']:.2f} ms "
                    f"errors {res['errors'] + res['non_2xx']}")
    return out


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def effect_section(effects):
    """Per cell: each build's median req/s over the rounds (and its range), its ratio to the build
    before it and its share of the floor's median, all measured in this run."""
    if not effects:
        return []
    rows = [(system(c), f"`{c}` {what}") for c, what in CHANGES] + [("cognigate", CURRENT)]
    rows = [(s, what) for s, what in rows if any(k[0] == s for k in effects)]
    lines = ["## Each change's effect", "",
             f"Each hot-path change's worker, built at its commit, beside the floor, 0 ms upstream: every cell {ROUNDS} rounds, "
             "each round running every system once in rotated order. Medians over the rounds (min–max in brackets); "
             "\"× previous\" compares a build with the one above it.", "",
             "| cell | build | req/s | × previous | % of floor | p50 ms | errors |", "|---|---|---|---|---|---|---|"]
    for label, *_ in CELLS:
        floor = effects.get(("floor", label))
        floor_rps = median([r["rps"] for r in floor]) if floor else None
        if floor:
            lines.append(row(label, "floor (bare fetch-forward worker)", floor, "", "100%"))
        prev = None
        for s, what in rows:
            rs = effects.get((s, label))
            if not rs:
                continue
            rps = median([r["rps"] for r in rs])
            ratio = f"{rps / prev:.2f}" if prev else "—"
            share = f"{rps / floor_rps:.0%}" if floor_rps else ""
            lines.append(row(label, what, rs, ratio, share))
            prev = rps
    return lines + [""]


def row(label, what, rs, ratio, share):
    """One table row: a build's rounds in one cell."""
    rps = [r["rps"] for r in rs]
    return (f"| {label} | {what} | {median(rps):.0f} ({min(rps):.0f}–{max(rps):.0f}) | {ratio} | {share} | "
            f"{median([r['p50_ms'] for r in rs]):.2f} | {sum(r['errors'] + r['non_2xx'] for r in rs)} |")
