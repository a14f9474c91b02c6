"""The capacity model's simulation (bench/capacity.py says what it models and prints the tables):
one run of the discrete-event model for one set of parameters `p`, returning its counters."""

import heapq
import math
import random
from collections import deque


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
