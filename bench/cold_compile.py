"""What the first request of a fresh isolate makes V8 compile, for `make profile`.

V8 compiles a wasm function with its baseline compiler (Liftoff) the first time it is called, on
the thread that called it. So an isolate's first chat request pays for compiling every function
its path runs, whole, rare branches included, and that is the bulk of the cold cell's time. This
counts it: a fresh workerd on the cold cell's prepared state (tenant warm in D1), V8's
`--trace-wasm-compilation-times`, one chat request, and every function compiled from the request
until shortly after its answer (its `waitUntil` work included; the once-a-second flushes come
later). Compiled bytes are a count, so unlike the cold cell's milliseconds they do not drift with
the machine: a change that takes code off the first request's path shows here exactly.

Miniflare does not expose workerd's `v8Flags`, so a copy of it under target/ sets them from
CG_V8_FLAGS (serve.mjs loads that copy when CG_MINIFLARE names it). The installed package is not
touched. Function names come from the profiled build's name section (`make profile` keeps it);
its code is the shipped module's.
"""

import json
import re
import shutil
import time
from collections import Counter
from pathlib import Path

from cold import chat_body, first_request, fresh_isolate, pct, prepare_gateway
from processes import ROOT, WORK, stop_all
from systems import GATEWAY_VARS, start_mock

MINIFLARE = ROOT / "node_modules/miniflare"
PATCHED = ROOT / "target/miniflare-v8flags"
ANCHOR = "function serializeConfig(config) {\n"
FLAGS_LINE = '  if (process.env.CG_V8_FLAGS) config.v8Flags = process.env.CG_V8_FLAGS.split(" ");\n'
TRACE = re.compile(r"Compiled function \S+#(\d+) using (\w+), took (\d+) \S+ and \d+ bytes; bodysize (\d+)")
# After the answer: long enough for the request's waitUntil tasks, well before the usage flush.
SETTLE_S = 0.3


def patched_miniflare():
    """The entry module of a Miniflare copy that passes CG_V8_FLAGS to workerd's config."""
    version = json.loads((MINIFLARE / "package.json").read_text())["version"]
    entry = PATCHED / "dist/src/index.js"
    stamp = PATCHED / ".cg-version"
    if not (stamp.exists() and stamp.read_text() == version):
        shutil.rmtree(PATCHED, ignore_errors=True)
        shutil.copytree(MINIFLARE, PATCHED)
        js = entry.read_text()
        if ANCHOR not in js:
            raise SystemExit(f"cold_compile: Miniflare {version} has no `{ANCHOR.strip()}` to add V8 flags to")
        entry.write_text(js.replace(ANCHOR, ANCHOR + FLAGS_LINE, 1))
        stamp.write_text(version)
    return entry


def _leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def function_names(wasm):
    """{function index: name} from a module's name section (indices count imports, as V8's do)."""
    b = wasm.read_bytes()
    i, names = 8, {}
    while i < len(b):
        sid = b[i]
        size, i = _leb(b, i + 1)
        end = i + size
        if sid == 0:
            n, j = _leb(b, i)
            if b[j:j + n] == b"name":
                j += n
                while j < end:
                    sub = b[j]
                    sub_size, j = _leb(b, j + 1)
                    if sub == 1:
                        count, k = _leb(b, j)
                        for _ in range(count):
                            idx, k = _leb(b, k)
                            n, k = _leb(b, k)
                            names[idx] = b[k:k + n].decode("utf-8", "replace")
                            k += n
                    j += sub_size
        i = end
    return names


def group(name):
    """The crate, or for this crate its module (`cognigate::edge::gateway`)."""
    parts = name.lstrip("<&").removeprefix("mut ").split("::")
    return "::".join(parts[:3]) if parts[0] == "cognigate" else parts[0].split("[")[0].split(" ")[0]


def sample(script, prepared, key, i):
    """One fresh isolate's first chat request: (ms, [(index, tier, µs, body bytes)])."""
    state = WORK / f"cold-compile-{i}"
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(prepared, state)
    env = {"CG_MINIFLARE": str(patched_miniflare()), "CG_V8_FLAGS": "--trace-wasm-compilation-times"}
    logfile = WORK / "cold-compile.log"
    try:
        with fresh_isolate("compile", state, script, [], GATEWAY_VARS, env) as (url, _):
            before = logfile.stat().st_size
            status, ms = first_request(url + "/v1/chat/completions", {"authorization": f"Bearer {key}"}, chat_body("bench"))
            assert status == 200, f"cold_compile: first request answered {status}"
            time.sleep(SETTLE_S)
            with open(logfile, "rb") as f:
                f.seek(before)
                text = f.read().decode("utf-8", "replace")
    finally:
        shutil.rmtree(state, ignore_errors=True)
    return ms, [(int(a), t, int(us), int(body)) for a, t, us, body in TRACE.findall(text)]


def report(build, samples=3, top=15):
    """Markdown: what the first request compiled (median of `samples` fresh isolates)."""
    WORK.mkdir(parents=True, exist_ok=True)
    try:
        ports = {0: start_mock(0), 50: start_mock(50)}
        prepared, keys = prepare_gateway(ports, start_mock(0, status=503))
        script = str((build / "index.js").relative_to(ROOT))
        runs = [sample(script, prepared, keys["bench0"], i) for i in range(samples)]
    finally:
        stop_all()
    names = function_names(build / "index_bg.wasm")
    counts = [len(r) for _, r in runs]
    sizes = [sum(b for *_, b in r) for _, r in runs]
    times = [sum(us for _, _, us, _ in r) / 1000 for _, r in runs]
    tiers = Counter(t for _, r in runs for _, t, _, _ in r)
    mid = sorted(runs, key=lambda r: sum(b for *_, b in r[1]))[len(runs) // 2][1]
    out = [f"## The first request of a fresh isolate: what V8 compiles ({samples} isolates)", "",
           f"- first request: {pct([ms for ms, _ in runs], 0.5):.1f} ms at p50 (each isolate traced, so slower than the cold cell)",
           f"- functions compiled: {pct(counts, 0.5)} (min {min(counts)}, max {max(counts)}), by tier: "
           + ", ".join(f"{t} {n // samples}" for t, n in tiers.most_common()),
           f"- wasm code compiled: {pct(sizes, 0.5):,} bytes (min {min(sizes):,}, max {max(sizes):,})",
           f"- compile time: {pct(times, 0.5):.1f} ms at p50 (V8's own count, on the request's thread)", "",
           "Largest functions compiled (the median isolate):", "", "| # | function | bytes | ms |", "|---|---|---|---|"]
    for n, (idx, _, us, body) in enumerate(sorted(mid, key=lambda r: -r[3])[:top], 1):
        out.append(f"| {n} | `{names.get(idx, f'#{idx}')[:110]}` | {body:,} | {us / 1000:.2f} |")
    by_bytes, by_ms = Counter(), Counter()
    for idx, _, us, body in mid:
        g = group(names.get(idx, "?"))
        by_bytes[g] += body
        by_ms[g] += us
    out += ["", "By crate (this crate by module):", "", "| part | bytes | ms |", "|---|---|---|"]
    out += [f"| `{g}` | {b:,} | {by_ms[g] / 1000:.2f} |" for g, b in by_bytes.most_common(top)]
    return "\n".join(out)


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="target/profile/build", help="a worker-build output with its name section")
    ap.add_argument("--samples", type=int, default=3)
    args = ap.parse_args()
    print(report(ROOT / args.build, args.samples))
