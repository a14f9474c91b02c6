"""The streams issue's changes, each measured in the same run as everything else: the worker is
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
    ("7579898", "before the streams issue (the hot-path issue's last build)"),
    ("4ed40c4", "a plain stream's middle in the runtime (edge/stream_pump.js), and each isolate's copies of recent cache entries"),
)
# The last row: this checkout, after the changes above.
CURRENT = ("the relay's per-chunk call and the SSE parser trimmed; the cloud platforms, which a tenant without "
           "them never reaches (this build)")


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
             f"Each streams-issue change's worker, built at its commit, beside the floor, 0 ms upstream: every cell {ROUNDS} rounds, "
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
