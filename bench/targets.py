"""The targets the report checks, each line `- MET: ...` or `- MISSED: ...` with its numbers:
the default configuration's (and the strict mode beside it), limited keys' and live stats' (a
share of the default's throughput), and the hot path's, which also says
`- SKIPPED: ...` for a target whose cells this run did not measure (--only)."""

from cold import pct


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


def hot_path(by, cold, wasm):
    """The hot path against the floor (a bare fetch-forward worker on the same workerd)
    and Portkey, all from this run's cells."""
    out = []

    def check(ok, text):
        out.append(f"- {'MET' if ok else 'MISSED'}: {text}")

    def skipped(text, missing):
        out.append(f"- SKIPPED: {text} (not measured in this run: {missing})")

    def cells(*keys):
        found = [by.get(k) for k in keys]
        missing = ", ".join(f"{s} {'streamed' if st else 'non-streamed'} {lat} ms c={c}"
                            for (s, lat, st, c), r in zip(keys, found) if not r)
        return found, missing

    for c in (16, 64):
        text = f"cognigate ≥ 70% of the floor's req/s at c={c} (non-streamed, 0 ms upstream)"
        (cg, fl), missing = cells(("cognigate", 0, False, c), ("floor", 0, False, c))
        if missing:
            skipped(text, missing)
        else:
            check(cg["rps"] >= 0.7 * fl["rps"], f"{text}: {cg['rps']:.0f} vs {fl['rps']:.0f} req/s ({cg['rps'] / fl['rps']:.0%})")
    text = "streamed cognigate ≥ 60% of the streamed floor's req/s at c=16 (0 ms upstream)"
    (cg, fl), missing = cells(("cognigate", 0, True, 16), ("floor", 0, True, 16))
    if missing:
        skipped(text, missing)
    else:
        check(cg["rps"] >= 0.6 * fl["rps"], f"{text}: {cg['rps']:.0f} vs {fl['rps']:.0f} req/s ({cg['rps'] / fl['rps']:.0%})")
    # "added" as in the tables: p50 minus the mock's own (`direct`) p50 in the same cell.
    text = "added p50 at c=1 at or below Portkey's (non-streamed, 0 ms upstream)"
    (cg, pk, d), missing = cells(("cognigate", 0, False, 1), ("portkey", 0, False, 1), ("direct", 0, False, 1))
    if missing:
        skipped(text, missing)
    else:
        a_cg, a_pk = cg["p50_ms"] - d["p50_ms"], pk["p50_ms"] - d["p50_ms"]
        check(a_cg <= a_pk, f"{text}: {a_cg:.2f} vs {a_pk:.2f} ms")
    text = "cognigate's p99/p50 at c=1 no worse than 1.25 × the floor's (non-streamed, 0 ms upstream)"
    (cg, fl), missing = cells(("cognigate", 0, False, 1), ("floor", 0, False, 1))
    if missing:
        skipped(text, missing)
    else:
        r_cg, r_fl = cg["p99_ms"] / cg["p50_ms"], fl["p99_ms"] / fl["p50_ms"]
        check(r_cg <= 1.25 * r_fl, f"{text}: {r_cg:.2f} ({cg['p99_ms']:.2f}/{cg['p50_ms']:.2f} ms) vs 1.25 × {r_fl:.2f} "
                                   f"({fl['p99_ms']:.2f}/{fl['p50_ms']:.2f} ms) = {1.25 * r_fl:.2f}")
    text = "cold first request p50 ≤ 2 × the floor's"
    if not cold or not cold["cognigate"]["first"] or not cold["floor"]["first"]:
        skipped(text, "the cold cell")
    else:
        p_cg, p_fl = pct(cold["cognigate"]["first"], 0.5), pct(cold["floor"]["first"], 0.5)
        check(p_cg <= 2 * p_fl, f"{text}: {p_cg:.2f} vs {p_fl:.2f} ms ({p_cg / p_fl:.2f}x, "
                                f"{len(cold['cognigate']['first'])} and {len(cold['floor']['first'])} samples)")
    text = "gzipped wasm (build/index_bg.wasm, gzip -9) < 500,000 bytes"
    if not wasm:
        skipped(text, "build/index_bg.wasm")
    else:
        check(wasm[1] < 500_000, f"{text}: {wasm[1]:,} bytes")
    return out
