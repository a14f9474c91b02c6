"""Reads a V8 `.cpuprofile` of the gateway's isolate (bench/profile.py): the top functions by self
time, and the CPU per request split by what the request path is doing.

Each sample is charged to one part:
  - `JS glue` when the sampled function itself is JavaScript outside the runtime's builtins (the
    worker-build shim, wasm-bindgen's generated glue) or a wasm function of wasm-bindgen, js-sys,
    web-sys, serde-wasm-bindgen or workers-rs, which exist to carry values across the boundary;
  - otherwise the outermost frame on its stack that names a part of the request path (PARTS);
  - `GC` and `runtime (native)` for V8's own pseudo-frames; `other wasm` for the rest.
Outermost, because a part's helpers (serde_json, memcpy, a hash) are that part's cost.
"""

import re
from collections import defaultdict

from cold import pct

# (part, pattern on the function name), checked from the stack's root down. Names are as the wasm
# name section has them (demangled Rust paths) or as the JS glue names them.
PARTS = [
    ("auth and config lookup", r"gateway::caller|store::caller_key|store::tenant_config|api::auth|hash_key|may_be_caller_key|tenant_cache|key_cache"),
    ("body check", r"read_body|Inbound::parse|body_read|surfaces::.*parse|chat_body|json_shape"),
    ("routing and admission", r"routed::route|limits::govern|limits::allowed|local_grants|routing::|grants|admission"),
    ("response cache (off)", r"response_cache::"),
    ("upstream body build", r"upstream_body|providers::.*(build|body|request)|UpstreamRequest|to_upstream"),
    ("fetch", r"upstream::FetchUpstream|edge::upstream::|worker::fetch|Fetch::send|fetch_with"),
    ("answer reading", r"stream_response|stream_report|served::|UpstreamBody|answer|read_answer|respond"),
    ("log line", r"request_end|log_line|LogContext|console_log|console\.log"),
    ("usage and metrics", r"usage_sink|ledger_client|metrics_sink|live_stats|usage::|metric_counts|request_metrics|analytics"),
    ("cascade", r"cascade::"),
    ("entry and routing of the URL", r"edge::entry|route_table|edge::http::"),
]
GLUE_WASM = re.compile(r"^<?(wasm_bindgen|js_sys|web_sys|worker::|serde_wasm_bindgen|wasm_bindgen_futures|__wbg|__wbindgen)")
GC_FRAME = "(garbage collector)"
PSEUDO = {GC_FRAME: "GC", "(program)": "runtime (native)", "(root)": "runtime (native)"}


def _is_wasm(frame):
    return frame["url"].startswith("wasm://") or frame.get("codeType") == "wasm"


def _label(frame):
    name = frame["functionName"] or "(anonymous)"
    where = "wasm" if _is_wasm(frame) else (frame["url"].rsplit("/", 1)[-1] or "builtin")
    return f"{name} [{where}]"


# A gap between two samples longer than this is time in which V8 took no sample: the isolate's
# thread was off the CPU (the load tool and the mock share these 2 cores) or outside V8 (workerd's
# own C++: its event loop, HTTP, I/O). Charged whole, the gap went to whatever ran next: a 201 ms
# gap made an alarm handler the 9th costliest function of a non-streamed profile, and half of a
# profile's time sat in such gaps. A sample after a gap is charged one typical interval (the
# profile's median), and the gaps are reported as left out, since they are not any function's.
GAP_US = 1000


def _charged(profile):
    """(node id, microseconds charged) per sample, and the microseconds of gaps left out."""
    deltas = profile["timeDeltas"]
    typical = sorted(deltas)[len(deltas) // 2] if deltas else 0
    charged, gaps = [], 0.0
    for node, dt in zip(profile["samples"], deltas):
        if dt > GAP_US:
            gaps += dt - typical
            dt = typical
        charged.append((node, dt))
    return charged, gaps


def _self_times(charged):
    """Microseconds charged per node id."""
    t = defaultdict(float)
    for node, dt in charged:
        t[node] += dt
    return t


def _part_of(stack):
    leaf = stack[-1]
    name = leaf["functionName"]
    if name in PSEUDO:
        return PSEUDO[name]
    if name == "(idle)":
        return None
    if not _is_wasm(leaf) and leaf["url"] and not leaf["url"].startswith("node:"):
        return "JS glue"
    if _is_wasm(leaf) and GLUE_WASM.search(name):
        return "JS glue"
    for frame in stack:
        for part, pattern in PARTS:
            if re.search(pattern, frame["functionName"]):
                return part
    return "other wasm" if _is_wasm(leaf) else "runtime builtins (JS)"


def summarize(name, profile, requests, load, concurrency, top=15):
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}
    charged, gaps = _charged(profile)
    selfs = _self_times(charged)
    busy = sum(t for nid, t in selfs.items() if nodes[nid]["callFrame"]["functionName"] != "(idle)")
    by_fn, by_part = defaultdict(float), defaultdict(float)
    for nid, t in selfs.items():
        frame = nodes[nid]["callFrame"]
        if frame["functionName"] == "(idle)":
            continue
        by_fn[_label(frame)] += t
        stack, cur = [], nid
        while cur is not None:
            stack.append(nodes[cur]["callFrame"])
            cur = parent.get(cur)
        part = _part_of(stack[::-1])
        by_part[part] += t
    per_req = lambda us: us / requests if requests else float("nan")  # noqa: E731
    lines = [f"## {name}: {load['rps']:.0f} req/s at c={concurrency}, {requests:.0f} requests profiled, "
             f"{busy / 1e3:.0f} ms of isolate CPU sampled ({per_req(busy):.1f} µs per request)", "",
             f"Top {top} functions by self time:", "", "| # | function | self ms | share | µs per request |", "|---|---|---|---|---|"]
    for i, (fn, t) in enumerate(sorted(by_fn.items(), key=lambda kv: -kv[1])[:top], 1):
        lines.append(f"| {i} | `{fn}` | {t / 1e3:.1f} | {t / busy:.1%} | {per_req(t):.1f} |")
    lines += ["", "CPU per request by part of the request path:", "", "| part | µs per request | share |", "|---|---|---|"]
    for part, t in sorted(by_part.items(), key=lambda kv: -kv[1]):
        lines.append(f"| {part} | {per_req(t):.1f} | {t / busy:.1%} |")
    lines += ["", _pauses(charged, profile, nodes),
              f"Left out: {gaps / 1e3:.0f} ms of gaps over {GAP_US} µs between samples (no sample taken; "
              "see GAP_US).", ""]
    return "\n".join(lines)


def _pauses(charged, profile, nodes):
    """The tail question: how long V8's collector holds the isolate at a stretch.
    A pause is a run of consecutive `(garbage collector)` samples; at c=1 a request that meets
    one waits it out."""
    runs, cur = [], 0.0
    for node, dt in charged:
        if nodes[node]["callFrame"]["functionName"] == GC_FRAME:
            cur += dt
        elif cur:
            runs.append(cur)
            cur = 0.0
    if cur:
        runs.append(cur)
    if not runs:
        return "GC pauses: none sampled."
    span = sum(profile["timeDeltas"]) / 1e6
    return (f"GC pauses: {len(runs)} in {span:.1f} s ({len(runs) / span:.1f} per second), "
            f"{sum(runs) / 1e3:.1f} ms in all; p50 {pct(runs, 0.5) / 1e3:.2f} ms, "
            f"p90 {pct(runs, 0.9) / 1e3:.2f} ms, longest {max(runs) / 1e3:.2f} ms.")
