#!/usr/bin/env python3
"""Capacity model for one hot tenant/provider's routing Durable Object (issue 14, item 4).

A discrete-event simulation of what the gateway's isolates send to the routing object of one
tenant/provider, and what they send to its upstream when that upstream starts failing. It is a
model of the code in src/state/{provider_state,breaker,grant}.rs and src/edge/routing_client.rs,
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
import heapq
import math
import random
import sys
import time
from collections import deque

BUDGET = 1000.0  # req/s one routing object is meant to stay under

# event kinds
OBJ_ACQ, OBJ_REP, ANS_GRANT, ANS_SKIP, FAIL, REP_ANS, ANS_NONE = range(7)


def simulate(p):
    rng = random.Random(p.seed)
    n = p.isolates
    end = float(p.seconds)
    onset = float(p.failure_onset_s)
    fail_s = p.fail_ms / 1000.0
    window = p.window_ms / 1000.0
    open_s = p.open_ms / 1000.0
    probe_timeout = p.probe_timeout_ms / 1000.0
    base_lease = min(p.lease_ms, p.open_ms / 2) / 1000.0
    cap = max(base_lease, min(p.lease_cap_ms, p.open_ms / 2) / 1000.0)
    allowance = p.allowance
    threshold = p.threshold
    q = p.failure_rate
    grants = base_lease > 0
    skip_mode = p.skip and grants
    adaptive = p.adaptive if grants else "off"
    target = p.adaptive_target
    coalesce = p.coalesce
    coalesce_s = p.coalesce_ms / 1000.0
    single = p.single_flight and grants
    scale_allowance = p.scale_allowance and grants
    sample = p.sample_reports if grants else 0

    # one-way delay per isolate (half its round trip)
    rtt = p.rtt_ms / 1000.0
    half = [rng.uniform(rtt / 4, 7 * rtt / 4) / 2 for _ in range(n)]

    # isolate state
    gen = [0] * n
    g_until = [0.0] * n
    g_left = [0] * n
    s_until = [0.0] * n  # skip grant
    known_open = [0.0] * n  # (d) breaker known open until
    last_rep = [-1e9] * n  # (d) last failure report sent
    inflight = [False] * n  # (e) an acquire is out
    waiting = [0] * n  # (e) requests waiting for it

    # object state
    CLOSED, OPEN, HALF = 0, 1, 2
    b = {"state": CLOSED, "until": 0.0, "probe": 0, "deadline": 0.0, "token": 0}
    fails = deque()
    acq_times = deque()
    factor = [1.0 if p.adaptive != "isolates" else 0.0, -1e9]  # value, last update
    opened = []  # times the breaker opened

    nbins = int(end * 100) + 2
    acq_bins = [0] * nbins
    rep_bins = [0] * nbins

    post_calls = []  # (time, isolate) of non-probe calls to the failing upstream after onset
    counters = {"probes": 0, "local_skips": 0, "grant_hits": 0, "suppressed": 0,
                "calls": 0, "waited_then_asked": 0,
                "sampled_out": 0}

    heap = []
    seq = 0
    rand = rng.random

    jitter = p.jitter
    seen = {}  # "isolates" mode: isolate id -> last acquire time

    def lease_now(t, i):
        if adaptive == "off":
            lease = base_lease
        elif adaptive == "isolates":
            # the object counts the distinct isolates that asked within the cap (each acquire
            # carries a random per-isolate id) and leases so that they ask `target` times/s
            seen[i] = t
            if t - factor[1] >= 1.0:
                for k in [k for k, v in seen.items() if v <= t - cap]:
                    del seen[k]
                factor[0] = len(seen) / target
                factor[1] = t
            lease = min(max(base_lease, factor[0]), cap)
        else:
            while acq_times and acq_times[0] <= t - 1.0:
                acq_times.popleft()
            rate = len(acq_times)
            if adaptive == "prop":
                f = max(1.0, rate / target)
            else:
                if t - factor[1] >= 1.0:
                    step = min(max(math.sqrt(max(rate, 1) / target), 0.5), 2.0)
                    factor[0] = min(max(factor[0] * step, 1.0), cap / base_lease)
                    factor[1] = t
                f = factor[0]
            lease = min(base_lease * f, cap)
        return lease * (1.0 - jitter * rand()) if jitter else lease

    def skip_lease(t, i, until):
        # (b) how long an isolate may skip locally. Open: until min(until, now+lease), exact.
        # With --jitter the end is spread over up to one lease past `until` (while the breaker
        # is half-open everything but the one probe is skipped anyway; only a quick successful
        # probe makes that late), so the isolates do not all come back at `until` together.
        # Half-open with the probe out (until None): skip for up to a lease, no later than the
        # probe's deadline.
        lease = lease_now(t, i)
        if until is None:
            return min(b["deadline"], t + lease)
        if jitter:
            return min(t + lease, until + rand() * lease)
        return min(until, t + lease)

    def call(tc, i, probe):
        nonlocal seq
        counters["calls"] += 1
        if tc >= onset and (q >= 1.0 or rng.random() < q):
            if probe:
                counters["probes"] += 1
            else:
                post_calls.append((tc, i))
            seq += 1
            heapq.heappush(heap, (tc + fail_s, seq, FAIL, i, probe, 0.0))

    def breaker_open_until(t):
        return b["until"] if b["state"] == OPEN and t < b["until"] else 0.0

    def decide_locally(t, i):
        """A skip grant or a grant with allowance left decides the request without the object."""
        if s_until[i] > t:
            counters["local_skips"] += 1
            return True
        if g_until[i] > t and g_left[i] > 0:
            g_left[i] -= 1
            counters["grant_hits"] += 1
            call(t, i, 0)
            return True
        return False

    def release(t, i):
        # (e) the answer is back: the requests that waited for it use its grant or skip grant;
        # any left over (no grant, ticket stale, allowance spent) each ask the object now.
        nonlocal seq
        inflight[i] = False
        w, waiting[i] = waiting[i], 0
        while w:
            w -= 1
            if not decide_locally(t, i):
                seq += 1
                push(heap, (t + half[i], seq, OBJ_ACQ, i, gen[i], 0.0))
                counters["waited_then_asked"] += 1

    lam = p.rps
    t_arr = -math.log(1.0 - rng.random()) / lam
    randrange = rng.randrange
    push = heapq.heappush
    pop = heapq.heappop

    while True:
        if heap and heap[0][0] <= t_arr:
            t, _, kind, i, x, y = pop(heap)
            if t >= end:
                break
            if kind == OBJ_ACQ:
                acq_bins[int(t * 100)] += 1
                if adaptive != "off":
                    acq_times.append(t)
                st = b["state"]
                probe = 0
                skip_until = None
                if st == CLOSED:
                    admit = 0
                elif st == OPEN and t < b["until"]:
                    admit, skip_until = 1, b["until"]
                elif st == HALF and t < b["deadline"]:
                    admit = 1
                else:
                    b["token"] += 1
                    b["state"], b["probe"], b["deadline"] = HALF, b["token"], t + probe_timeout
                    admit, probe = 0, b["token"]
                tans = t + half[i]
                if admit == 0:
                    if grants and not probe:
                        while fails and fails[0] <= t - window:
                            fails.popleft()
                        if not fails:
                            seq += 1
                            push(heap, (tans, seq, ANS_GRANT, i, x, t + lease_now(t, i)))
                            call(tans, i, probe)
                            continue
                    call(tans, i, probe)
                    if single:
                        seq += 1
                        push(heap, (tans, seq, ANS_NONE, i, 0, 0.0))
                elif skip_mode or (coalesce and skip_until is not None):
                    su = skip_lease(t, i, skip_until) if skip_mode else 0.0
                    seq += 1
                    push(heap, (tans, seq, ANS_SKIP, i, skip_until or 0.0, su))
                elif single:
                    seq += 1
                    push(heap, (tans, seq, ANS_NONE, i, 0, 0.0))
            elif kind == ANS_GRANT:
                if gen[i] == x:
                    g_until[i] = y
                    # (f) the allowance stretched with the lease (the grant's length is y minus
                    # the object's clock when it answered)
                    g_left[i] = (max(allowance, int(allowance * (y - t + half[i]) / base_lease))
                                 if scale_allowance else allowance)
                if single:
                    release(t, i)
            elif kind == ANS_SKIP:
                if coalesce:
                    known_open[i] = max(known_open[i], x)
                if y > s_until[i]:
                    s_until[i] = y
                if single:
                    release(t, i)
            elif kind == ANS_NONE:
                release(t, i)
            elif kind == FAIL:
                if (sample and not x and g_until[i] > t and g_left[i] > 0
                        and rand() >= min(1.0, sample / max(len(seen) or n, 1))):
                    # (g) not this isolate's turn to report: keep the grant, which runs out
                    # within its lease or allowance like any other news from elsewhere
                    counters["sampled_out"] += 1
                    continue
                gen[i] += 1
                g_until[i] = 0.0
                if not x and coalesce and (known_open[i] > t or t - last_rep[i] < coalesce_s):
                    counters["suppressed"] += 1
                    continue
                last_rep[i] = t
                seq += 1
                push(heap, (t + half[i], seq, OBJ_REP, i, x, 0.0))
            elif kind == OBJ_REP:
                rep_bins[int(t * 100)] += 1
                st = b["state"]
                if st == CLOSED:
                    while fails and fails[0] <= t - window:
                        fails.popleft()
                    fails.append(t)
                    if len(fails) >= threshold:
                        b["state"], b["until"] = OPEN, t + open_s
                        fails.clear()
                        opened.append(t)
                elif st == HALF and x == b["probe"]:
                    b["state"], b["until"] = OPEN, t + open_s
                    opened.append(t)
                ou = breaker_open_until(t) if coalesce else 0.0
                su = skip_lease(t, i, ou) if (ou and skip_mode) else 0.0
                seq += 1
                push(heap, (t + half[i], seq, REP_ANS, i, ou, su))
            else:  # REP_ANS
                gen[i] += 1
                g_until[i] = 0.0
                if x:
                    known_open[i] = max(known_open[i], x)
                if y > s_until[i]:
                    s_until[i] = y
        else:
            t = t_arr
            if t >= end:
                if not heap or heap[0][0] >= end:
                    break
                t_arr = float("inf")
                continue
            t_arr = t - math.log(1.0 - rand()) / lam
            i = randrange(n)
            if decide_locally(t, i):
                pass
            elif single and inflight[i]:
                waiting[i] += 1
            else:
                if single:
                    inflight[i] = True
                seq += 1
                push(heap, (t + half[i], seq, OBJ_ACQ, i, gen[i], 0.0))

    # ---- metrics
    tot = [a + r for a, r in zip(acq_bins, rep_bins)]

    def mean(lo, hi):
        lo_b, hi_b = int(lo * 100), int(hi * 100)
        if hi_b <= lo_b:
            return float("nan")
        return sum(tot[lo_b:hi_b]) / (hi - lo)

    def peak(lo, hi, bins=tot):
        lo_b, hi_b = int(lo * 100), int(hi * 100)
        if hi_b - lo_b < 100:
            return float(sum(bins[lo_b:hi_b]))
        s = sum(bins[lo_b:lo_b + 100])
        best = s
        for k in range(lo_b + 100, hi_b):
            s += bins[k] - bins[k - 100]
            if s > best:
                best = s
        return float(best)

    warm = min(5.0, onset / 2)
    res = {
        "pre_mean": mean(warm, onset),
        "pre_peak": peak(warm, onset),
        "cold_peak": peak(0.0, min(warm, onset)),
        "post_mean": mean(min(onset + 5.0, end), end),
        "post_peak": peak(onset, end),
        "settled_peak": peak(min(onset + 2.0, end), end),
        "post_peak_reports": peak(onset, end, rep_bins),
        "reports_after_onset": sum(rep_bins[int(onset * 100):]),
        "counters": counters,
        "series": [(sum(acq_bins[k * 100:(k + 1) * 100]), sum(rep_bins[k * 100:(k + 1) * 100]))
                   for k in range(int(end))],
    }
    if opened:
        t_open = opened[0]
        before = [c for c in post_calls if c[0] <= t_open]
        after = [c for c in post_calls if c[0] > t_open]
        per = {}
        for _, i in after:
            per[i] = per.get(i, 0) + 1
        res.update(
            open_after_ms=(t_open - onset) * 1000,
            calls_to_learn=len(before),
            extra_after_open=len(after),
            max_per_isolate=max(per.values()) if per else 0,
            isolates_after_open=len(per),
            staleness_ms=(max(c[0] for c in after) - t_open) * 1000 if after else 0.0,
        )
    else:
        res.update(open_after_ms=None, calls_to_learn=len(post_calls), extra_after_open=0,
                   max_per_isolate=0, isolates_after_open=0, staleness_ms=0.0)
    return res


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
