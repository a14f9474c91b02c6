"""bench/RESULTS.md: the run's header, the matrix's tables, the ratios, the failover and counter
cells, size, cold start, the routing micro-benchmark and the targets (bench/targets.py)."""

import json
import sys

from changes import CHANGES, CURRENT, effect_section, system
from cold import pct
from measure import machine, wasm_size
from processes import ROOT, WORK, log
from selection import SYSTEMS
from targets import hot_path, share_of_default, targets


def command(args, sel):
    """How this run was started: `make bench`'s own line for the full run."""
    if sel.everything and args.concurrency == [1, 16, 64] and not args.skip_peers and not args.no_build and args.cold_samples == 20:
        return f"`make bench` (= `python3 bench/run.py --seconds {args.seconds:g} --warmup {args.warmup:g}`)"
    return "`python3 bench/run.py " + " ".join(sys.argv[1:]) + "`"


def cold_section(cold):
    if not cold:
        return []
    lines = ["## Cold start", "",
             "The first request of a fresh isolate: a new serve.mjs per sample (a new Miniflare, so a new workerd and isolate), "
             "CogniGate on a copy of a prepared state (tenant warm in D1), a non-streamed chat completion timed from send to the "
             "answer's last byte on an open connection, 0 ms upstream. Startup: process start to serve.mjs's ready line "
             "(no request to the worker before the timed one).", "",
             "| system | samples | first request p50 ms | p90 ms | min ms | max ms | startup p50 ms | startup p90 ms | startup min ms | startup max ms | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in cold.items():
        f, s = r["first"], r["startup"]
        lines.append(f"| {name} | {len(f)} | {pct(f, 0.5):.2f} | {pct(f, 0.9):.2f} | {min(f, default=float('nan')):.2f} | "
                     f"{max(f, default=float('nan')):.2f} | {pct(s, 0.5):.0f} | {pct(s, 0.9):.0f} | {min(s, default=float('nan')):.0f} | "
                     f"{max(s, default=float('nan')):.0f} | {r['errors']} |")
    cg, fl = cold.get("cognigate"), cold.get("floor")
    lines += cold_effects(cold)
    if cg and fl and cg["first"] and fl["first"]:
        lines += ["", f"- cognigate/floor, first request: p50 {pct(cg['first'], 0.5) / pct(fl['first'], 0.5):.2f}x, "
                      f"p90 {pct(cg['first'], 0.9) / pct(fl['first'], 0.9):.2f}x; startup p50 "
                      f"{pct(cg['startup'], 0.5) / pct(fl['startup'], 0.5):.2f}x"]
    return lines + [""]


def cold_effects(cold):
    """Each hot-path change's build in the cold cell (bench/changes.py), oldest first: its p50
    and the ratio to the build before it, all from this run's rotated samples."""
    labels = {system(c): f"`{c}` {what}" for c, what in CHANGES} | {"cognigate": CURRENT}
    builds = [n for n in labels if cold.get(n, {}).get("first")]
    if len(builds) < 2:
        return []
    lines, prev = ["", "Each hot-path change's cold first request (p50, × the build before):"], None
    for n in builds:
        p50 = pct(cold[n]["first"], 0.5)
        lines.append(f"- {labels[n]}: {p50:.2f} ms" + (f" ({p50 / prev:.2f}×)" if prev else ""))
        prev = p50
    return lines


def report(args, sel, results, special, ctr, wasm, routing, peers, skipped, started, cold, effects=None):
    by = {(r["system"], r["latency"], r["stream"], r["concurrency"]): r for r in results}
    systems = [s for s in SYSTEMS if any(k[0] == s for k in by)]
    lines = [
        "# CogniGate benchmark results",
        "",
        f"- Date: {started:%Y-%m-%d %H:%M UTC}",
        f"- Machine: {machine()}",
        f"- Command: {command(args, sel)}",
        f"- Load tool: `target/release/loadgen` (closed loop, keep-alive, {args.seconds} s per cell after {args.warmup} s warm-up), "
        "systems rotated cell by cell",
        "- Runtime for floor and CogniGate: workerd through the Miniflare API (`tests/harness/serve.mjs`), "
        "local D1 and Durable Objects; CogniGate chain of two candidates, provider with two keys (round robin)",
        "- CogniGate configurations: `cognigate` is the default (admission grants, `ROUTING_LEASE_MS` 1500); "
        "`cognigate-strict` asks the routing object for every candidate (`ROUTING_LEASE_MS=0`); `-rtt20` adds "
        "`ROUTING_RTT_MS=20` (a bench-only delay before every routing-object call, as an object in another location costs); "
        "`cognigate-noopt` is the default built without wasm-opt; `cognigate-limits` is the default with limits "
        "configured that never trip (a tenant budget, a key with `rpm` and a budget: admitted from the isolate's ledger slice, no round trip per request); "
        "`cognigate-ranked` asks for `auto:fast` (m1 and m2 ranked by measured latency on every request, from the isolate's live stats); "
        "`cognigate-cached` is the default with the response cache on (the same body every time, so all but the first request are hits "
        "answered from `caches.default` without an upstream call); "
        "`cognigate-otel` is the default with trace export on (`otel`, every trace sampled, JSON to a receiver answering 200: "
        "spans made as each request ends and POSTed in per-isolate batches after the answer)",
        "- Peers: " + ", ".join(f"{k} {v['version']}" for k, v in peers.items()) + (("; skipped: " + "; ".join(skipped)) if skipped else ""),
        *(["- Portkey: @hono/node-server pinned to 1.14.1 (npm override; from 1.14.2 on every streamed request failed with 500, "
           "\"TypeError: immutable\", bench/systems.py). Its stream reader waits 25 ms before relaying the first event "
           "(`readStream` in its src/handlers/streamHandler.ts), so each of its streamed requests carries those 25 ms by design"]
          if "portkey" in peers else []),
        "",
    ]
    for latency in sel.latencies if sel.matrix() else ():
        for stream in sel.streams:
            lines += [f"## Upstream latency {latency} ms, {'streamed' if stream else 'non-streamed'}", "",
                      "| system | c | req/s | p50 ms | p99 ms | added p50 ms | added p99 ms | TTFB p50 ms | TTFB p99 ms | errors |",
                      "|---|---|---|---|---|---|---|---|---|---|"]
            for c in args.concurrency:
                base = by.get(("direct", latency, stream, c))
                for s in systems:
                    r = by.get((s, latency, stream, c))
                    if not r:
                        continue
                    add50 = r["p50_ms"] - base["p50_ms"] if base else float("nan")
                    add99 = r["p99_ms"] - base["p99_ms"] if base else float("nan")
                    lines.append(f"| {s} | {c} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {add50:.2f} | {add99:.2f} | "
                                 f"{r['ttfb_p50_ms']:.2f} | {r['ttfb_p99_ms']:.2f} | {r['errors'] + r['non_2xx']} |")
            lines.append("")
    lines += ratios(by, args, peers) if sel.matrix() else []
    lines += effect_section(effects)
    if sel.wants("special"):
        lines += ["## Failover and breaker-open", "", "| case | c | req/s | p50 ms | p99 ms | non-2xx |", "|---|---|---|---|---|---|"]
        for r in special:
            lines.append(f"| {r['case']} | {r['concurrency']} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['non_2xx']} |")
        lines += [""]
    if sel.wants("counters"):
        lines += ["## Hot-path counters (the worker's own, per request: D1 queries, Durable Object calls)", "",
                  "| tenant | 1st request | 2nd | 3rd |", "|---|---|---|---|"]
        for t, rows in ctr.items():
            lines.append(f"| {t} | " + " | ".join(f"{d} D1, {o} DO" for d, o in rows) + " |")
        lines += [""]
    # The build without wasm-opt is made only when its cells run; an older one would mislead.
    noopt = wasm_size(WORK / "build-noopt/index_bg.wasm") if sel.wants("cognigate-noopt") else None
    lines += ["## Size", ""]
    lines += [f"- `build/index_bg.wasm`: {wasm[0]:,} bytes raw, {wasm[1]:,} bytes gzip -9"] if wasm else ["- `build/index_bg.wasm`: not built"]
    lines += [f"- without wasm-opt: {noopt[0]:,} bytes raw, {noopt[1]:,} bytes gzip -9"] if noopt else []
    lines += [""]
    lines += cold_section(cold)
    if sel.wants("routing"):
        lines += ["## Pure routing decision (`cargo bench --bench routing`)", ""]
        lines += [f"- {json.dumps(r)}" for r in routing]
        lines += [""]
    lines += ["## Targets (default configuration: admission grants)", ""]
    lines += targets(by, args, special, ctr, wasm, routing, peers, "cognigate")
    lines += ["", "## Targets (limited keys without a round trip per request)", ""]
    lines += share_of_default(by, args, "cognigate-limits")
    lines += ["", "## Targets (live stats and ranking without a round trip per request)", ""]
    lines += share_of_default(by, args, "cognigate-ranked")
    for t in ("bench0", "ranked0"):
        if t not in ctr:  # the counters were not measured in this run (--only)
            continue
        warm = ctr.get(t, [])[1:]
        ok = bool(warm) and all(o == 0 for _, o in warm)
        lines.append(f"- {'MET' if ok else 'MISSED'}: {t}: no Durable Object call on a warm request "
                     f"(2nd and 3rd: {', '.join(str(o) for _, o in warm)} DO calls)")
    if sel.wants("cognigate-cached"):
        lines += ["", "## Response cache hits", ""]
        lines += cache_hits(by, args)
    lines += ["", "## The strict mode beside it (`ROUTING_LEASE_MS=0`)", ""]
    lines += targets(by, args, special, ctr, wasm, routing, peers, "cognigate-strict")
    lines += ["", "## Targets (the hot path)", ""]
    lines += hot_path(by, cold, wasm)
    (ROOT / "bench/RESULTS.md").write_text("\n".join(lines) + "\n")
    log("wrote bench/RESULTS.md")


def ratios(by, args, peers):
    lines = ["## CogniGate's ratios (non-streamed, 0 ms upstream)", "",
             "| gateway | c | vs floor (req/s) | " + " | ".join(f"vs {p} (req/s)" for p in peers) + " |",
             "|---|---|---|" + "---|" * len(peers)]
    for gw in ("cognigate", "cognigate-limits", "cognigate-ranked", "cognigate-cached", "cognigate-otel", "cognigate-strict"):
        for c in args.concurrency:
            cg = by.get((gw, 0, False, c))
            if not cg:  # a configuration this run did not measure (--only)
                continue
            fl = by.get(("floor", 0, False, c))
            cells = [f"{cg['rps'] / fl['rps']:.2f}x" if cg and fl else "-"]
            for p in peers:
                pr = by.get((p, 0, False, c))
                cells.append(f"{cg['rps'] / pr['rps']:.2f}x" if cg and pr and pr["rps"] else "-")
            lines.append(f"| {gw} | {c} | " + " | ".join(cells) + " |")
    return lines + [""]


def cache_hits(by, args, gw="cognigate-cached"):
    """Hits against `direct` (the mock itself) and against the default's misses: throughput, and
    the latency a hit adds over calling the upstream directly (negative: faster than the upstream)."""
    out = ["| upstream latency | stream | c | hit req/s | direct req/s | default req/s | hit p50 ms | added p50 ms vs direct | added p99 ms vs direct |",
           "|---|---|---|---|---|---|---|---|---|"]
    for latency in (0, 50):
        for stream in (False, True):
            for c in args.concurrency:
                hit, d, cg = (by.get((s, latency, stream, c)) for s in (gw, "direct", "cognigate"))
                if not hit or not d:
                    continue
                out.append(f"| {latency} ms | {stream} | {c} | {hit['rps']:.0f} | {d['rps']:.0f} | {cg['rps'] if cg else float('nan'):.0f} | "
                           f"{hit['p50_ms']:.2f} | {hit['p50_ms'] - d['p50_ms']:.2f} | {hit['p99_ms'] - d['p99_ms']:.2f} |")
    return out
