"""The targets the report checks, each line `- MET: ...` or `- MISSED: ...` with its numbers:
issue 14's (the default configuration, and the strict mode beside it), and issues 21 and 22's (a
share of the default's throughput)."""


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
    if wasm:
        check(wasm[1] < 450 * 1024, f"gzipped wasm under 450 KiB: {wasm[1]:,} bytes ({wasm[1] / 1024:.0f} KiB)")
    return out

