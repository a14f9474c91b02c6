"""Measuring: the load matrix (every selected system at each concurrency, non-streamed and
streamed, 0 ms and 50 ms upstream, driven by `loadgen`), the failover and breaker-open cells, the
worker's own hot-path counters, the wasm size and the pure routing micro-benchmark."""

import gzip
import json
import os
import platform
import subprocess
from pathlib import Path

from processes import ROOT, http, log
from selection import rotated


def loadgen(url, headers, body, concurrency, seconds, warmup):
    cmd = [str(ROOT / "target/release/loadgen"), "--url", url, "--concurrency", str(concurrency),
           "--seconds", str(seconds), "--warmup", str(warmup), "--body", json.dumps(body)]
    for k, v in headers.items():
        cmd += ["--header", f"{k}: {v}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def systems_for(latency, ports, urls, keys, peers, sel):
    """The selected systems for one upstream latency: name -> (url, headers, model), in the
    matrix's order (rotated cell by cell)."""
    mock = ports[latency]

    def gateway(url_name, key):
        return (urls[url_name] + "/v1/chat/completions", {"authorization": f"Bearer {key}"})

    s = {
        "direct": lambda: (f"http://127.0.0.1:{mock}/v1/chat/completions", {}, "m1"),
        "floor": lambda: (urls[f"floor{latency}"] + "/v1/chat/completions", {}, "m1"),
        "cognigate": lambda: (*gateway("gateway", keys[f"bench{latency}"]), "bench"),
        "cognigate-limits": lambda: (*gateway("gateway", keys[f"limited{latency}"]), "bench"),
        "cognigate-ranked": lambda: (*gateway("gateway", keys[f"ranked{latency}"]), "auto:fast"),
        "cognigate-cached": lambda: (*gateway("gateway", keys[f"cached{latency}"]), "bench"),
        "cognigate-otel": lambda: (*gateway("gateway", keys[f"otel{latency}"]), "bench"),
        "cognigate-strict": lambda: (*gateway("gateway-strict", keys["strict"][f"bench{latency}"]), "bench"),
    }
    if latency == 0:
        # Production-like routing latency: every routing-object call waits ROUTING_RTT_MS first;
        # and the default configuration built without wasm-opt.
        for name in ("cognigate-rtt20", "cognigate-strict-rtt20", "cognigate-noopt"):
            gw = name.removeprefix("cognigate").strip("-")
            s[name] = lambda gw=gw: (*gateway(f"gateway-{gw}", keys[gw][f"bench{latency}"]), "bench")
    if "litellm" in peers:
        s["litellm"] = lambda: (peers["litellm"]["url"], {"authorization": "Bearer sk-x"}, f"bench{latency}")
    if "portkey" in peers:
        s["portkey"] = lambda: (peers["portkey"]["url"], portkey_headers(mock), "m1")
    return {name: make() for name, make in s.items() if name in sel.systems}


def portkey_headers(mock):
    return {"authorization": "Bearer sk-x", "x-portkey-provider": "openai", "x-portkey-custom-host": f"http://127.0.0.1:{mock}/v1"}


def measure_matrix(args, sel, ports, urls, keys, peers):
    results = []
    cell = 0
    for latency in sel.latencies:
        for stream in sel.streams:
            for c in args.concurrency:
                systems = systems_for(latency, ports, urls, keys, peers, sel).items()
                order = rotated(systems, cell)
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
    for tenant in ("bench0", "limited0", "ranked0", "cached0", "otel0", "failover", "skip"):
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
    """(raw bytes, gzip -9 bytes), or None when that build is not there (a run whose --only did
    not need it)."""
    if not Path(path).exists():
        return None
    raw = Path(path).read_bytes()
    return len(raw), len(gzip.compress(raw, 9))


def routing_bench():
    out = subprocess.run(["cargo", "bench", "--bench", "routing"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def machine():
    mem = next((l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal")), "?")
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    return f"{os.cpu_count()} cores ({cpu}), {int(mem) // 1024 // 1024} GiB RAM, {platform.system()} {platform.release()}"
