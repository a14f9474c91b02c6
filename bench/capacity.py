#!/usr/bin/env python3
"""Capacity model for one hot tenant/provider's routing Durable Object.

A discrete-event simulation of what the gateway's isolates send to the routing object of one
tenant/provider, and what they send to its upstream when that upstream starts failing. It is a
model of the code in src/health/{provider_state,breaker,grant}.rs and src/edge/routing_client.rs,
not a measurement; plain Python 3.11, standard library only.

What is modelled
  * Requests arrive as one Poisson stream (--rps) spread uniformly at random over --isolates.
  * Each isolate has its own round trip to the object (uniform in [rtt/4, 7*rtt/4], --rtt-ms);
    the object sees an acquire half a round trip after the isolate sends it and answers in the
    state it is in at that moment (single-threaded: events are applied in time order).
  * Strict mode (--lease-ms 0): every request sends one /acquire; the call goes upstream when the
    answer is back (Pass/Probe) or not at all (Skip).
  * (a) grants (--lease-ms L > 0): an acquire for a quiet candidate (breaker closed, no counted
    failure inside window_ms) comes back with a grant until now+L for --allowance requests; the
    request that asked is served by the answer itself, the next `allowance` ones locally. A grant
    is never longer than open_duration/2. Any report the isolate sends (and its answer) drops its
    grants and moves its generation on; a grant answered to an acquire sent before that is
    discarded (the ticket check of grant.rs).
  * (b) --skip: an acquire answered Skip{until} (breaker open) also lets the isolate skip the
    candidate locally until min(until, now+lease) without asking again. Exact: only a manual
    reset closes an open breaker before `until`. Skip grants survive the isolate's own reports
    (a report cannot close an open breaker). While the breaker is half-open with its probe out,
    the Skip answer carries a skip grant for up to a lease (never past the probe's deadline).
    With --jitter, a skip grant that would end at `until` ends instead at a random point up to
    one lease after it, so all isolates do not come back in the same instant when the breaker
    goes half-open (only a quick successful probe makes that skipping late). The isolate could
    do (b) alone: the Skip answer already carries `until`.
  * (c) --adaptive prop|integral|isolates: the object stretches the leases it grants (and skip
    leases) up to --lease-cap-ms:
        prop:     factor = max(1, acquires over the last second / target)   (stateless; load
                  still grows ~ sqrt(isolates) -- the equilibrium of rate = N/(L*rate/target))
        integral: every second factor *= sqrt(rate/target), step within [0.5, 2], factor
                  within [1, cap/L]; converges on the target, no wire change
        isolates: lease = max(L, active isolates / target), where the object counts the distinct
                  isolates that asked within the cap (each acquire would carry a random
                  per-isolate id); feed-forward, so each isolate asks ~once per lease and the
                  object sees ~target acquires/s until the cap or the allowance binds
  * --jitter J: every lease (grant or skip) is cut by a random share up to J, so isolates
    granted together (cold start, the outage) do not come back together.
  * (d) --coalesce: an isolate sends at most one failure report per model per --coalesce-ms,
    and none while it knows the breaker is open; a report's answer carries the breaker's
    `until` (so the isolate learns of the opening from its own report, and with --skip gets a
    skip grant from it). Without (d) every counted failure is reported (today's code).
  * (e) --single-flight: one acquire in flight per isolate and model; requests arriving while it
    is out wait for its answer and use its grant (today every request without a live grant
    sends its own acquire, so an isolate at r req/s sends ~1 + r*RTT acquires per lease).
  * (f) --scale-allowance: the allowance grows with the stretched lease (allowance * lease/L);
    needed once rps/(allowance+1) itself nears the budget (100,000 req/s).
  * (g) --sample-reports K: an isolate holding a live grant reports a failure only with
    probability K/active isolates and otherwise keeps its grant (which still ends within its
    lease or allowance): the onset burst of one report per isolate shrinks to ~K, at the cost
    of more calls to the failing upstream.
  * Upstream: from --failure-onset-s on, each call fails with probability --failure-rate after
    --fail-ms (a fast 5xx is ~0.1-0.5 s, a timeout is the request budget). Successes send no
    report. Breaker: --threshold failures inside --window-ms open it for --open-ms; then one
    half-open probe (no grant is ever issued with a probe).

Reported per scenario
  * routing-object requests/s (acquires + reports): mean over steady state and the peak sliding
    1-s window, before the onset ([5 s, onset)) and after it (mean over [onset+5 s, end); peak
    from onset+2 s, i.e. the outage once settled; and peak over any 1-s window inside
    [onset, end), which includes the onset burst, with the reports in that window).
  * the breaker's opening time after the onset, the upstream calls between onset and opening
    (every mode pays these; they are what it takes to learn), the extra upstream calls sent after
    the object opened the breaker (all isolates; half-open probes not counted), the most any one
    isolate sent after the opening, and staleness: last such call minus the opening time.

  python3 bench/capacity.py --isolates 1000 --rps 10000 --lease-ms 250 --skip --adaptive isolates \
      --jitter 0.3 --coalesce --single-flight [--series]
  python3 bench/capacity.py --table          # the standard grid + sensitivity (~1 min)

Not modelled: the object's queueing when offered more than it serves (load is what is offered),
parks (429s), other candidates the skipped requests fail over to, manual resets, clock skew.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capacity_model import simulate  # noqa: E402

BUDGET = 1000.0  # req/s one routing object is meant to stay under


def mechanisms(p):
    if p.lease_ms <= 0:
        return "strict" + (" +d" if p.coalesce else "")
    m = ["a"]
    if p.skip:
        m.append("b")
    if p.adaptive != "off":
        m.append("c" + {"prop": "ᵖ", "integral": "ⁱ", "isolates": "ⁿ"}[p.adaptive])
    if p.jitter:
        m.append("j")
    if p.coalesce:
        m.append("d")
    if p.single_flight:
        m.append("e")
    if getattr(p, "scale_allowance", False):
        m.append("f")
    if getattr(p, "sample_reports", 0):
        m.append(f"g{p.sample_reports}")
    return "+".join(m)


HEADER = (
    "| isolates | lease | mech | obj/s steady | obj/s peak | obj/s outage | outage peak from "
    "onset+2 s | obj/s outage peak (reports) | opens after | calls to learn | extra calls after open | max/isolate | "
    "staleness |\n"
    "|---:|---:|:---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def fmt_rate(v):
    s = f"{v:,.0f}"
    return f"**{s}**" if v >= BUDGET else s


def row(p, r):
    oa = "never" if r["open_after_ms"] is None else f"{r['open_after_ms']:.0f} ms"
    return (
        f"| {p.isolates:,} | {p.lease_ms} ms | {mechanisms(p)} | {fmt_rate(r['pre_mean'])} | "
        f"{fmt_rate(r['pre_peak'])} | {fmt_rate(r['post_mean'])} | {fmt_rate(r['settled_peak'])} | "
        f"{fmt_rate(r['post_peak'])} ({r['post_peak_reports']:,.0f}) | {oa} | "
        f"{r['calls_to_learn']:,} | {r['extra_after_open']:,} | {r['max_per_isolate']} | "
        f"{r['staleness_ms']:.0f} ms |"
    )


def parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 1)[1])
    ap.add_argument("--isolates", type=int, default=1000)
    ap.add_argument("--rps", type=float, default=10000, help="total, one tenant/provider")
    ap.add_argument("--lease-ms", type=int, default=1000, help="ROUTING_LEASE_MS; 0 = strict")
    ap.add_argument("--allowance", type=int, default=64, help="GRANT_BLOCK")
    ap.add_argument("--failure-onset-s", type=float, default=20)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--failure-rate", type=float, default=1.0, help="share of calls failing")
    ap.add_argument("--fail-ms", type=float, default=250, help="time for a call to fail")
    ap.add_argument("--rtt-ms", type=float, default=80, help="mean isolate<->object round trip")
    ap.add_argument("--threshold", type=int, default=5, help="breaker error_threshold")
    ap.add_argument("--window-ms", type=int, default=30000)
    ap.add_argument("--open-ms", type=int, default=60000, help="breaker open_duration_ms")
    ap.add_argument("--probe-timeout-ms", type=int, default=30000)
    ap.add_argument("--skip", action="store_true", help="(b) skip grants while open")
    ap.add_argument("--adaptive", choices=["off", "prop", "integral", "isolates"], default="off",
                    help="(c) load-adaptive lease")
    ap.add_argument("--adaptive-target", type=float, default=500, help="acquires/s")
    ap.add_argument("--lease-cap-ms", type=int, default=10000)
    ap.add_argument("--jitter", type=float, default=0.0,
                    help="each lease (grant or skip) is cut by a random share up to this, so "
                         "isolates that were granted together do not all ask again together")
    ap.add_argument("--coalesce", action="store_true", help="(d) coalesced failure reports")
    ap.add_argument("--coalesce-ms", type=int, default=100)
    ap.add_argument("--single-flight", action="store_true",
                    help="(e) one acquire in flight per isolate and model; requests arriving "
                         "meanwhile wait for its answer and use its grant")
    ap.add_argument("--scale-allowance", action="store_true",
                    help="(f) the allowance grows with the lease: allowance * lease / lease-ms")
    ap.add_argument("--sample-reports", type=int, default=0, metavar="K",
                    help="(g) an isolate holding a live grant reports a failure only with "
                         "probability K/active isolates (the object counts them, as in "
                         "--adaptive isolates, and would put the share in the grant); "
                         "otherwise it keeps its grant")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--table", action="store_true", help="run the standard grid")
    ap.add_argument("--series", action="store_true",
                    help="also print acquires and reports per second")
    return ap


RECOMMENDED = dict(lease_ms=250, skip=True, adaptive="isolates", jitter=0.3, coalesce=True,
                   single_flight=True)


BUILT = dict(lease_ms=1500, skip=True, jitter=0.3, single_flight=True, allowance=512)


def variant(base, **kw):
    p = argparse.Namespace(**vars(base))
    for k, v in kw.items():
        setattr(p, k, v)
    return p


def grid(base):
    """The standard scenario grid: (isolates, lease, mechanisms) at the given rate."""
    off = dict(skip=False, adaptive="off", coalesce=False, single_flight=False, jitter=0.0,
               scale_allowance=False, sample_reports=0)
    combos = [dict(lease_ms=0), dict(lease_ms=0, coalesce=True)]
    for lease in (250, 1000):
        combos += [
            dict(lease_ms=lease),
            dict(lease_ms=lease, single_flight=True),
            dict(lease_ms=lease, skip=True, single_flight=True),
            dict(lease_ms=lease, skip=True, coalesce=True, single_flight=True),
            dict(lease_ms=lease, skip=True, adaptive="prop", coalesce=True, single_flight=True),
            dict(lease_ms=lease, skip=True, adaptive="integral", jitter=0.3, coalesce=True,
                 single_flight=True),
            dict(lease_ms=lease, skip=True, adaptive="isolates", jitter=0.3, coalesce=True,
                 single_flight=True),
        ]
    combos.append(dict(lease_ms=2000, skip=True, jitter=0.3, coalesce=True, single_flight=True))
    # What the gateway builds today (DEFAULT_LEASE_MS): grants, skip grants, jitter, one acquire
    # per candidate per isolate; no coalescing, no adaptive lease.
    combos.append(BUILT)
    combos.append(dict(RECOMMENDED, sample_reports=20))
    for n in (100, 1000):
        for c in combos:
            yield variant(base, isolates=n, **{**off, **c})


def sensitivity(base):
    """Slow and partial failures, and ten times the rate, for strict / today / recommended."""
    off = dict(skip=False, adaptive="off", coalesce=False, single_flight=False, jitter=0.0,
               scale_allowance=False, sample_reports=0, isolates=1000)
    for label, kw in (("failures take 10 s (timeouts)", dict(fail_ms=10000)),
                      ("20% of calls fail", dict(failure_rate=0.2)),
                      ("breaker open 10 s (probe fails, reopens)", dict(open_ms=10000))):
        for c in (dict(lease_ms=0), dict(lease_ms=1000), RECOMMENDED):
            yield label, variant(base, **{**off, **kw, **c})
    yield ("breaker open 10 s, no jitter",
           variant(base, **{**off, **RECOMMENDED, "open_ms": 10000, "jitter": 0.0}))
    short = dict(rps=base.rps * 10, seconds=30, failure_onset_s=10)
    label = f"{base.rps * 10:,.0f} req/s, 30 s, onset 10 s"
    for n, c in ((1000, RECOMMENDED), (1000, dict(RECOMMENDED, scale_allowance=True)),
                 (10000, dict(RECOMMENDED, scale_allowance=True))):
        yield label, variant(base, **{**off, **short, **c, "isolates": n})


def main():
    base = parser().parse_args()
    started = time.time()
    if base.table:
        print(f"{base.rps:,.0f} req/s for one tenant/provider, {base.seconds:.0f} s, upstream "
              f"fails {base.failure_rate:.0%} from {base.failure_onset_s:.0f} s (each failure "
              f"after {base.fail_ms:.0f} ms); mean RTT to the object {base.rtt_ms:.0f} ms; "
              f"allowance {base.allowance}; breaker {base.threshold} in "
              f"{base.window_ms / 1000:.0f} s, open {base.open_ms / 1000:.0f} s; (c) target "
              f"{base.adaptive_target:.0f} acquires/s, cap {base.lease_cap_ms / 1000:.0f} s; "
              f"(d) {base.coalesce_ms} ms. Bold: at or over {BUDGET:,.0f} req/s.\n")
        print(HEADER)
        for p in grid(base):
            print(row(p, simulate(p)), flush=True)
        print("\nSensitivity (1,000 isolates unless named; strict, today's grants at 1 s, and the "
              "recommended a+b+cⁿ+j+d+e on a 250 ms base):\n")
        print("| case |" + HEADER[1:].replace("|---:|---:|:---|", "|:---|---:|---:|:---|", 1))
        for label, p in sensitivity(base):
            print(f"| {label} " + row(p, simulate(p)), flush=True)
    else:
        r = simulate(base)
        print(HEADER)
        print(row(base, r))
        print(f"\ncounters: {r['counters']}; isolates sending after open: "
              f"{r['isolates_after_open']}; reports after onset: {r['reports_after_onset']:,}; "
              f"cold-start peak: {r['cold_peak']:,.0f}")
        if base.series:
            print("second: acquires+reports")
            print(" ".join(f"{k}:{a}+{r_}" for k, (a, r_) in enumerate(r["series"])))
    print(f"\n({time.time() - started:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
