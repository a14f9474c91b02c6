#!/usr/bin/env python3
"""CogniGate's side-by-side benchmark (`make bench`).

Runs, in one go on this machine: a fast native mock upstream (0 ms and 50 ms latency), measured
directly as the baseline; a bare fetch-forward worker (the floor) and CogniGate, both on workerd
through the Miniflare API; LiteLLM's proxy and Portkey's gateway pointed at the same mock. Every
system is driven by the same load tool (`loadgen`) at concurrency 1, 16 and 64, non-streamed and
streamed, with the systems' order rotated cell by cell so machine noise hits all of them alike.
Also: a failover request, a breaker-open skip, the hot path's D1 and Durable Object counters, the
wasm size, and the pure routing micro-benchmark. Results go to bench/RESULTS.md.

  python3 bench/run.py [--seconds 5] [--warmup 1] [--concurrency 1,16,64] [--skip-peers]
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "bench"
LITELLM_VERSIONS = ["1.110.2", "1.100.0"]  # newest first; the first that installs is used
PORTKEY_VERSION = "1.15.2"
ADMIN = "bench-admin-key"
KEK = "ab" * 32

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


# ---- the systems --------------------------------------------------------------------------------


def start_mock(latency, status=None):
    port = free_port()
    cmd = [ROOT / "target/release/mock-provider", "--port", str(port), "--name", f"mock{latency}", "--latency-ms", str(latency)]
    if status:
        cmd += ["--status", str(status)]
    start(list(map(str, cmd)), f"mock-{latency}-{status or 200}")
    assert wait_http(f"http://127.0.0.1:{port}/v1/models", 10), "mock did not start"
    return port


def start_workerd(name, script, extra_args, env_vars):
    state = WORK / f"state-{name}"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    cmd = ["node", "tests/harness/serve.mjs", "--state", str(state), "--script", script, *extra_args]
    for k, v in env_vars.items():
        cmd += ["--var", f"{k}={v}"]
    p = start(cmd, name, env={"CG_HARNESS_LOG": "warn"}, stdout=subprocess.PIPE)
    line = p.stdout.readline().decode()
    return json.loads(line)["url"].rstrip("/")


def setup_gateway(url, mock0, mock50, mockfail):
    a = {"authorization": f"Bearer {ADMIN}"}
    keys = {}

    def admin(method, path, body=None):
        status, _, text = http(method, url + path, body, a)
        assert status < 300, f"{method} {path}: {status} {text[:300]}"
        return json.loads(text or b"{}")

    def provider(t, name, port, strategy="round_robin"):
        admin("PUT", f"/admin/v1/tenants/{t}/providers/{name}",
              {"kind": "openai", "base_url": f"http://127.0.0.1:{port}/v1", "keys": [f"sk-{name}-1", f"sk-{name}-2"], "key_strategy": strategy})

    def model(t, mid, prov):
        admin("PUT", f"/admin/v1/tenants/{t}/models/{mid}", {"provider": prov, "context_window": 128000, "input_price_per_mtok": 1})

    for t, port in (("bench0", mock0), ("bench50", mock50)):
        admin("POST", "/admin/v1/tenants", {"id": t, "name": t})
        provider(t, "mock", port)
        model(t, "m1", "mock")
        model(t, "m2", "mock")
        admin("PUT", f"/admin/v1/tenants/{t}/routing-rules", {"match": "bench", "chain": ["m1", "m2"]})
        keys[t] = admin("POST", f"/admin/v1/tenants/{t}/api-keys")["key"]
    # The same again with limits configured that never trip (issue 15): a tenant budget and a key
    # with an rpm and a budget. Since issue 21 a warm isolate admits them from its ledger slice,
    # renewed in the background, so a request makes no ledger round trip of its own.
    for t, port in (("limited0", mock0), ("limited50", mock50)):
        admin("POST", "/admin/v1/tenants", {"id": t, "name": t})
        admin("PUT", f"/admin/v1/tenants/{t}/settings", {"budget": {"usd": 1000000000, "period": "month"}})
        provider(t, "mock", port)
        model(t, "m1", "mock")
        model(t, "m2", "mock")
        admin("PUT", f"/admin/v1/tenants/{t}/routing-rules", {"match": "bench", "chain": ["m1", "m2"]})
        policy = {"rpm": 1000000, "budget": {"usd": 1000000000, "period": "day"}}
        keys[t] = admin("POST", f"/admin/v1/tenants/{t}/api-keys", policy)["key"]
    # Issue 22: the same catalog served through `auto:fast`, which ranks m1 and m2 by their
    # measured latency on every request (this isolate's stats, no round trip of its own; the
    # outcomes ride the grant renewals or a flush after the response).
    for t, port in (("ranked0", mock0), ("ranked50", mock50)):
        admin("POST", "/admin/v1/tenants", {"id": t, "name": t})
        provider(t, "mock", port)
        model(t, "m1", "mock")
        model(t, "m2", "mock")
        keys[t] = admin("POST", f"/admin/v1/tenants/{t}/api-keys")["key"]
    # Issue 27: the default with the response cache on for every request (`cache.ttl_s`). The load
    # tool sends one body again and again, so every request after the first is a hit: no upstream
    # call, the stored answer (streamed requests get a stream built from it).
    for t, port in (("cached0", mock0), ("cached50", mock50)):
        admin("POST", "/admin/v1/tenants", {"id": t, "name": t})
        admin("PUT", f"/admin/v1/tenants/{t}/settings", {"cache": {"ttl_s": 3600}})
        provider(t, "mock", port)
        model(t, "m1", "mock")
        model(t, "m2", "mock")
        admin("PUT", f"/admin/v1/tenants/{t}/routing-rules", {"match": "bench", "chain": ["m1", "m2"]})
        keys[t] = admin("POST", f"/admin/v1/tenants/{t}/api-keys")["key"]
    # Failover: the first candidate always answers 503. 10,000 failures within 1 ms never happen,
    # so its breaker stays closed and every request pays the failed attempt.
    admin("POST", "/admin/v1/tenants", {"id": "failover", "name": "failover"})
    admin("PUT", "/admin/v1/tenants/failover/settings", {"breaker": {"error_threshold": 10000, "window_ms": 1}})
    # Breaker-open: one failure opens it for a day, so every request skips the first candidate.
    admin("POST", "/admin/v1/tenants", {"id": "skip", "name": "skip"})
    admin("PUT", "/admin/v1/tenants/skip/settings", {"breaker": {"error_threshold": 1, "open_duration_ms": 86400000}})
    for t in ("failover", "skip"):
        provider(t, "bad", mockfail)
        provider(t, "good", mock0)
        model(t, "bad-m", "bad")
        model(t, "good-m", "good")
        admin("PUT", f"/admin/v1/tenants/{t}/routing-rules", {"match": "bench", "chain": ["bad-m", "good-m"]})
        keys[t] = admin("POST", f"/admin/v1/tenants/{t}/api-keys")["key"]
    return keys


def install_litellm():
    venv = WORK / "litellm-venv"
    bin_ = venv / "bin" / "litellm"
    marker = venv / "installed-version"
    if bin_.exists() and marker.exists():
        return bin_, marker.read_text().strip(), None
    if not venv.exists():
        run([sys.executable, "-m", "venv", str(venv)])
    errors = []
    for v in LITELLM_VERSIONS:
        r = subprocess.run([str(venv / "bin/pip"), "install", "-q", f"litellm[proxy]=={v}"], capture_output=True, text=True)
        if r.returncode == 0 and bin_.exists():
            marker.write_text(v)
            return bin_, v, None
        errors.append(f"{v}: {(r.stderr.strip().splitlines() or ['?'])[-1][:200]}")
    return None, None, "; ".join(errors)


def start_litellm(mock0, mock50):
    bin_, version, why = install_litellm()
    if not bin_:
        return None, f"LiteLLM could not be installed from PyPI ({why})"
    cfg = WORK / "litellm.yaml"
    cfg.write_text(
        "model_list:\n"
        f"  - model_name: bench0\n    litellm_params: {{model: openai/m1, api_base: 'http://127.0.0.1:{mock0}/v1', api_key: sk-x}}\n"
        f"  - model_name: bench50\n    litellm_params: {{model: openai/m1, api_base: 'http://127.0.0.1:{mock50}/v1', api_key: sk-x}}\n"
        "litellm_settings: {telemetry: false, drop_params: true}\n"
    )
    port = free_port()
    start([str(bin_), "--config", str(cfg), "--host", "127.0.0.1", "--port", str(port)], "litellm",
          env={"LITELLM_LOG": "ERROR", "LITELLM_TELEMETRY": "False", "NO_DOCS": "True"})
    if not wait_http(f"http://127.0.0.1:{port}/health/liveliness", 180):
        return None, "LiteLLM did not come up (see target/bench/litellm.log)"
    return {"url": f"http://127.0.0.1:{port}/v1/chat/completions", "version": version}, None


def start_portkey():
    home = WORK / "portkey"
    server = home / "node_modules/@portkey-ai/gateway/build/start-server.js"
    if not server.exists():
        r = subprocess.run(["npm", "install", "--prefix", str(home), "--no-audit", "--no-fund", f"@portkey-ai/gateway@{PORTKEY_VERSION}"],
                           capture_output=True, text=True)
        if r.returncode != 0 or not server.exists():
            return None, f"Portkey could not be installed from npm ({r.stderr.strip()[-200:]})"
    port = free_port()
    start(["node", str(server), f"--port={port}", "--headless"], "portkey", env={"NODE_ENV": "production"})
    if not wait_http(f"http://127.0.0.1:{port}/", 60):
        return None, "Portkey did not come up (see target/bench/portkey.log)"
    return {"url": f"http://127.0.0.1:{port}/v1/chat/completions", "version": PORTKEY_VERSION}, None


# ---- measuring ----------------------------------------------------------------------------------


def loadgen(url, headers, body, concurrency, seconds, warmup):
    cmd = [str(ROOT / "target/release/loadgen"), "--url", url, "--concurrency", str(concurrency),
           "--seconds", str(seconds), "--warmup", str(warmup), "--body", json.dumps(body)]
    for k, v in headers.items():
        cmd += ["--header", f"{k}: {v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def systems_for(latency, ports, urls, keys, peers):
    mock = ports[latency]
    s = {
        "direct": (f"http://127.0.0.1:{mock}/v1/chat/completions", {}, "m1"),
        "floor": (urls[f"floor{latency}"] + "/v1/chat/completions", {}, "m1"),
        "cognigate": (urls["gateway"] + "/v1/chat/completions", {"authorization": f"Bearer {keys[f'bench{latency}']}"}, "bench"),
        "cognigate-limits": (urls["gateway"] + "/v1/chat/completions",
                             {"authorization": f"Bearer {keys[f'limited{latency}']}"}, "bench"),
        "cognigate-ranked": (urls["gateway"] + "/v1/chat/completions",
                             {"authorization": f"Bearer {keys[f'ranked{latency}']}"}, "auto:fast"),
        "cognigate-cached": (urls["gateway"] + "/v1/chat/completions",
                             {"authorization": f"Bearer {keys[f'cached{latency}']}"}, "bench"),
        "cognigate-strict": (urls["gateway-strict"] + "/v1/chat/completions",
                             {"authorization": f"Bearer {keys['strict'][f'bench{latency}']}"}, "bench"),
    }
    if latency == 0:
        # Production-like routing latency: every routing-object call waits ROUTING_RTT_MS first;
        # and the default configuration built without wasm-opt.
        for name in ("cognigate-rtt20", "cognigate-strict-rtt20", "cognigate-noopt"):
            gw = name.removeprefix("cognigate").strip("-")
            s[name] = (urls[f"gateway-{gw}"] + "/v1/chat/completions",
                       {"authorization": f"Bearer {keys[gw][f'bench{latency}']}"}, "bench")
    if "litellm" in peers:
        s["litellm"] = (peers["litellm"]["url"], {"authorization": "Bearer sk-x"}, f"bench{latency}")
    if "portkey" in peers:
        s["portkey"] = (peers["portkey"]["url"], {"authorization": "Bearer sk-x", "x-portkey-provider": "openai",
                                                  "x-portkey-custom-host": f"http://127.0.0.1:{mock}/v1"}, "m1")
    return s


def measure_matrix(args, ports, urls, keys, peers):
    results = []
    cell = 0
    for latency in (0, 50):
        for stream in (False, True):
            for c in args.concurrency:
                systems = list(systems_for(latency, ports, urls, keys, peers).items())
                k = cell % len(systems)
                order = systems[k:] + systems[:k]
                cell += 1
                for name, (url, headers, model) in order:
                    body = {"model": model, "messages": [{"role": "user", "content": "hello"}], "stream": stream}
                    r = loadgen(url, headers, body, c, args.seconds, args.warmup)
                    r.update(system=name, latency=latency, stream=stream)
                    r.pop("headers", None)
                    results.append(r)
                    log(f"{name:10s} lat={latency:2d} stream={stream!s:5s} c={c:2d}: {r['rps']:8.0f} req/s p50 {r['p50_ms']:.2f} ms p99 {r['p99_ms']:.2f} ms "
                        f"ttfb {r['ttfb_p50_ms']:.2f} errors {r['errors']} non2xx {r['non_2xx']}")
    return results


def measure_special(args, urls, keys):
    out = []
    # Trip the skip tenant's breaker with one request.
    http("POST", urls["gateway"] + "/v1/chat/completions", {"model": "bench", "messages": []}, {"authorization": f"Bearer {keys['skip']}"})
    for label, tenant in (("failover (first candidate 503, second 200)", "failover"), ("breaker-open skip", "skip")):
        for c in (1, 16):
            body = {"model": "bench", "messages": [{"role": "user", "content": "hello"}]}
            r = loadgen(urls["gateway"] + "/v1/chat/completions", {"authorization": f"Bearer {keys[tenant]}"}, body, c, args.seconds, args.warmup)
            r.update(case=label)
            r.pop("headers", None)
            out.append(r)
            log(f"{label} c={c}: {r['rps']:.0f} req/s p50 {r['p50_ms']:.2f} ms non2xx {r['non_2xx']}")
    return out


def counters(urls, keys):
    """D1 queries and Durable Object calls per request, from the worker's own counters."""
    seen = {}
    for tenant in ("bench0", "limited0", "ranked0", "cached0", "failover", "skip"):
        rows = []
        model = "auto:fast" if tenant.startswith("ranked") else "bench"
        for _ in range(3):
            _, h, _ = http("POST", urls["gateway"] + "/v1/chat/completions", {"model": model, "messages": []},
                           {"authorization": f"Bearer {keys[tenant]}"})
            h = {k.lower(): v for k, v in h.items()}
            rows.append((int(h.get("x-cognigate-d1-queries", -1)), int(h.get("x-cognigate-do-calls", -1))))
        seen[tenant] = rows
    return seen


def wasm_size(path=ROOT / "build/index_bg.wasm"):
    raw = Path(path).read_bytes()
    return len(raw), len(gzip.compress(raw, 9))


def routing_bench():
    out = subprocess.run(["cargo", "bench", "--bench", "routing"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def machine():
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} cores ({cpu}), {int(mem) // 1024 // 1024} GiB RAM, {platform.system()} {platform.release()}"


# ---- report -------------------------------------------------------------------------------------


def report(args, results, special, ctr, wasm, routing, peers, skipped, started):
    by = {(r["system"], r["latency"], r["stream"], r["concurrency"]): r for r in results}
    systems = [s for s in ("direct", "floor", "cognigate", "cognigate-limits", "cognigate-ranked", "cognigate-cached", "cognigate-strict", "cognigate-rtt20", "cognigate-strict-rtt20",
                           "cognigate-noopt", "litellm", "portkey") if any(k[0] == s for k in by)]
    lines = [
        "# CogniGate benchmark results",
        "",
        f"- Date: {started:%Y-%m-%d %H:%M UTC}",
        f"- Machine: {machine()}",
        f"- Command: `make bench` (= `python3 bench/run.py --seconds {args.seconds} --warmup {args.warmup}`)",
        f"- Load tool: `target/release/loadgen` (closed loop, keep-alive, {args.seconds} s per cell after {args.warmup} s warm-up), "
        "systems rotated cell by cell",
        "- Runtime for floor and CogniGate: workerd through the Miniflare API (`tests/harness/serve.mjs`), "
        "local D1 and Durable Objects; CogniGate chain of two candidates, provider with two keys (round robin)",
        "- CogniGate configurations: `cognigate` is the default (admission grants, `ROUTING_LEASE_MS` 1500); "
        "`cognigate-strict` asks the routing object for every candidate (`ROUTING_LEASE_MS=0`); `-rtt20` adds "
        "`ROUTING_RTT_MS=20` (a bench-only delay before every routing-object call, as an object in another location costs); "
        "`cognigate-noopt` is the default built without wasm-opt; `cognigate-limits` is the default with limits "
        "configured that never trip (a tenant budget, a key with `rpm` and a budget: admitted from the isolate's ledger slice, no round trip per request); "
        "`cognigate-ranked` asks for `auto:fast` (issue 22: m1 and m2 ranked by measured latency on every request, from the isolate's live stats); "
        "`cognigate-cached` is the default with the response cache on (issue 27: the same body every time, so all but the first request are hits "
        "answered from `caches.default` without an upstream call)",
        "- Peers: " + ", ".join(f"{k} {v['version']}" for k, v in peers.items()) + (("; skipped: " + "; ".join(skipped)) if skipped else ""),
        "",
    ]
    for latency in (0, 50):
        for stream in (False, True):
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
    lines += ["## CogniGate's ratios (non-streamed, 0 ms upstream)", "",
              "| gateway | c | vs floor (req/s) | " + " | ".join(f"vs {p} (req/s)" for p in peers) + " |",
              "|---|---|---|" + "---|" * len(peers)]
    for gw in ("cognigate", "cognigate-limits", "cognigate-ranked", "cognigate-cached", "cognigate-strict"):
        for c in args.concurrency:
            cg = by.get((gw, 0, False, c))
            fl = by.get(("floor", 0, False, c))
            cells = [f"{cg['rps'] / fl['rps']:.2f}x" if cg and fl else "-"]
            for p in peers:
                pr = by.get((p, 0, False, c))
                cells.append(f"{cg['rps'] / pr['rps']:.2f}x" if cg and pr and pr["rps"] else "-")
            lines.append(f"| {gw} | {c} | " + " | ".join(cells) + " |")
    lines += ["", "## Failover and breaker-open", "", "| case | c | req/s | p50 ms | p99 ms | non-2xx |", "|---|---|---|---|---|---|"]
    for r in special:
        lines.append(f"| {r['case']} | {r['concurrency']} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['non_2xx']} |")
    lines += ["", "## Hot-path counters (the worker's own, per request: D1 queries, Durable Object calls)", "",
              "| tenant | 1st request | 2nd | 3rd |", "|---|---|---|---|"]
    for t, rows in ctr.items():
        lines.append(f"| {t} | " + " | ".join(f"{d} D1, {o} DO" for d, o in rows) + " |")
    noopt = wasm_size(WORK / "build-noopt/index_bg.wasm")
    lines += ["", f"## Size", "", f"- `build/index_bg.wasm`: {wasm[0]:,} bytes raw, {wasm[1]:,} bytes gzip -9",
              f"- without wasm-opt: {noopt[0]:,} bytes raw, {noopt[1]:,} bytes gzip -9", "",
              "## Pure routing decision (`cargo bench --bench routing`)", ""]
    lines += [f"- {json.dumps(r)}" for r in routing]
    lines += ["", "## Targets (issue 14; default configuration: admission grants)", ""]
    lines += targets(by, args, special, ctr, wasm, routing, peers, "cognigate")
    lines += ["", "## Targets (issue 21: limited keys without a round trip per request)", ""]
    lines += share_of_default(by, args, "cognigate-limits")
    lines += ["", "## Targets (issue 22: live stats and ranking without a round trip per request)", ""]
    lines += share_of_default(by, args, "cognigate-ranked")
    for t in ("bench0", "ranked0"):
        warm = ctr.get(t, [])[1:]
        ok = bool(warm) and all(o == 0 for _, o in warm)
        lines.append(f"- {'MET' if ok else 'MISSED'}: {t}: no Durable Object call on a warm request "
                     f"(2nd and 3rd: {', '.join(str(o) for _, o in warm)} DO calls)")
    lines += ["", "## Response cache hits (issue 27)", ""]
    lines += cache_hits(by, args)
    lines += ["", "## The strict mode beside it (`ROUTING_LEASE_MS=0`)", ""]
    lines += targets(by, args, special, ctr, wasm, routing, peers, "cognigate-strict")
    (ROOT / "bench/RESULTS.md").write_text("\n".join(lines) + "\n")
    log("wrote bench/RESULTS.md")


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


def share_of_default(by, args, gw, share=0.85):
    """One target line per concurrency: `gw`'s throughput at least `share` of the default's."""
    lines = []
    for c in args.concurrency:
        cg, other = by.get(("cognigate", 0, False, c)), by.get((gw, 0, False, c))
        if cg and other:
            ok = other["rps"] >= share * cg["rps"]
            lines.append(f"- {'MET' if ok else 'MISSED'}: {gw} ≥ {share:.0%} of cognigate at c={c}: "
                         f"{other['rps']:.0f} vs {cg['rps']:.0f} req/s ({other['rps'] / cg['rps']:.0%})")
    return lines


def targets(by, args, special, ctr, wasm, routing, peers, gw):
    out = []

    def check(ok, text):
        out.append(f"- {'MET' if ok else 'MISSED'}: {text}")

    cg16, fl16 = by.get((gw, 0, False, 16)), by.get(("floor", 0, False, 16))
    if cg16 and fl16:
        check(cg16["rps"] >= 0.7 * fl16["rps"], f"c=16 throughput ≥ 70% of the floor: {cg16['rps']:.0f} vs {fl16['rps']:.0f} ({cg16['rps'] / fl16['rps']:.0%})")
    for c in args.concurrency:
        cg, pk = by.get((gw, 0, False, c)), by.get(("portkey", 0, False, c))
        if cg and pk:
            check(cg["rps"] > pk["rps"], f"ahead of Portkey at c={c}: {cg['rps']:.0f} vs {pk['rps']:.0f} req/s")
    rtt, base0, direct = by.get((f"{gw}-rtt20", 0, False, 1)), by.get((gw, 0, False, 1)), by.get(("direct", 0, False, 1))
    if rtt and base0 and direct:
        a0, a20 = base0["p50_ms"] - direct["p50_ms"], rtt["p50_ms"] - direct["p50_ms"]
        check(a20 - a0 <= 2, f"with 20 ms routing latency, added p50 at c=1 within 2 ms of the 0 ms figure: {a20:.2f} vs {a0:.2f} ms")
    for c in args.concurrency:
        for lat in (0, 50):
            cg, base = by.get((gw, lat, False, c)), by.get(("direct", lat, False, c))
            if not (cg and base):
                continue
            added = cg["p50_ms"] - base["p50_ms"]
            for p in peers:
                pr = by.get((p, lat, False, c))
                if pr:
                    check(added < pr["p50_ms"] - base["p50_ms"], f"added p50 below {p} at c={c}, {lat} ms upstream: {added:.2f} vs {pr['p50_ms'] - base['p50_ms']:.2f} ms")
            check(cg["p99_ms"] < 3 * cg["p50_ms"], f"p99 under 3x own p50 at c={c}, {lat} ms upstream: {cg['p99_ms']:.2f} vs {cg['p50_ms']:.2f} ms")
    if gw != "cognigate":
        return out
    warm = ctr.get("bench0", [])[-1] if ctr.get("bench0") else None
    if warm:
        check(warm[0] == 0, f"warm hot path makes 0 D1 queries: {warm[0]}")
        check(warm[1] <= 1, f"at most 1 Durable Object round trip when the first candidate succeeds: {warm[1]}")
    decision = next((r for r in routing if r.get("case") == "alias"), None)
    if decision:
        check(decision["p50_us"] < 5, f"pure routing decision p50 under 5 µs (alias on 500 models): {decision['p50_us']:.3f} µs")
    check(wasm[1] < 450 * 1024, f"gzipped wasm under 450 KiB: {wasm[1]:,} bytes ({wasm[1] / 1024:.0f} KiB)")
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--concurrency", default="1,16,64")
    ap.add_argument("--skip-peers", action="store_true")
    args = ap.parse_args()
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    started = datetime.datetime.now(datetime.timezone.utc)
    WORK.mkdir(parents=True, exist_ok=True)
    try:
        offline = {  # as the Makefile sets them: nothing is downloaded from GitHub
            "WASM_BINDGEN_BIN": str(Path.home() / ".cargo/bin/wasm-bindgen"),
            "ESBUILD_BIN": str(ROOT / "node_modules/@esbuild/linux-x64/bin/esbuild"),
        }
        # The same worker without wasm-opt, kept aside to show what wasm-opt changes.
        run("make --no-print-directory setup")
        run("worker-build --release", env={**os.environ, **offline})
        noopt = WORK / "build-noopt"
        shutil.rmtree(noopt, ignore_errors=True)
        shutil.copytree(ROOT / "build", noopt)
        run("make --no-print-directory build")
        offline["CARGO_TARGET_DIR"] = str(ROOT / "target/floor")
        run("worker-build --release", cwd=ROOT / "bench/floor", env={**os.environ, **offline})
        run(["cargo", "build", "--release", "--quiet", "--bin", "loadgen", "--bin", "mock-provider"])
        ports = {0: start_mock(0), 50: start_mock(50)}
        mockfail = start_mock(0, status=503)
        # The mocks speak plain http on 127.0.0.1.
        gateway_vars = {"CG_ADMIN": ADMIN, "CG_KEK": KEK, "DEBUG_COUNTERS": "true", "ALLOW_HTTP_UPSTREAMS": "true"}
        urls = {
            "gateway": start_workerd("gateway", "build/index.js", [], gateway_vars),
            # The strict mode beside the default, and both again with 20 ms of routing latency.
            "gateway-strict": start_workerd("gateway-strict", "build/index.js", [], {**gateway_vars, "ROUTING_LEASE_MS": "0"}),
            "gateway-rtt20": start_workerd("gateway-rtt20", "build/index.js", [], {**gateway_vars, "ROUTING_RTT_MS": "20"}),
            "gateway-strict-rtt20": start_workerd("gateway-strict-rtt20", "build/index.js", [],
                                                  {**gateway_vars, "ROUTING_LEASE_MS": "0", "ROUTING_RTT_MS": "20"}),
            "gateway-noopt": start_workerd("gateway-noopt", str((noopt / "index.js").relative_to(ROOT)), [], gateway_vars),
        }
        for lat in (0, 50):
            urls[f"floor{lat}"] = start_workerd(f"floor{lat}", "bench/floor/build/index.js", ["--bare"],
                                                {"UPSTREAM_URL": f"http://127.0.0.1:{ports[lat]}/v1/chat/completions"})
        keys = setup_gateway(urls["gateway"], ports[0], ports[50], mockfail)
        for gw in ("strict", "rtt20", "strict-rtt20", "noopt"):
            keys[gw] = setup_gateway(urls[f"gateway-{gw}"], ports[0], ports[50], mockfail)
        peers, skipped = {}, []
        if not args.skip_peers:
            for name, starter in (("litellm", lambda: start_litellm(ports[0], ports[50])), ("portkey", start_portkey)):
                peer, why = starter()
                if peer:
                    peers[name] = peer
                else:
                    skipped.append(f"{name}: {why}")
                    log(f"skipping {name}: {why}")
        results = measure_matrix(args, ports, urls, keys, peers)
        special = measure_special(args, urls, keys)
        ctr = counters(urls, keys)
        report(args, results, special, ctr, wasm_size(), routing_bench(), peers, skipped, started)
    finally:
        stop_all()


if __name__ == "__main__":
    main()
