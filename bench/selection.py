"""What one run measures: everything (`make bench`), or the subset `--only` names.

`--only` takes comma-separated names of three kinds:
  - systems of the load matrix (`cognigate`, `floor`, `portkey`, ...): those systems' cells;
  - cell filters (`0ms`, `50ms`, `streamed`, `non-streamed`): only the matrix cells that match
    (with no system named, every system's);
  - groups outside the matrix: `cold` (the first request of a fresh isolate), `special` (failover
    and breaker-open), `counters` (the hot path's D1 and Durable Object counters), `routing` (the
    pure routing micro-benchmark, `cargo bench`), `changes` (the hot-path issue's builds, one per
    change, beside this build and the floor: bench/changes.py).
Whenever the matrix runs, `direct` (the mock itself) runs with it: every "added" column and the
cache-hit table are measured against it."""

SYSTEMS = ("direct", "floor", "cognigate", "cognigate-limits", "cognigate-ranked", "cognigate-cached", "cognigate-otel", "cognigate-strict",
           "cognigate-rtt20", "cognigate-strict-rtt20", "cognigate-noopt", "litellm", "portkey")
FILTERS = {"0ms": ("latency", 0), "50ms": ("latency", 50), "streamed": ("stream", True), "non-streamed": ("stream", False)}
GROUPS = ("cold", "special", "counters", "routing", "changes")


def rotated(items, i):
    """`items` in the order of turn `i`: each turn starts one further along, so a slow stretch of
    the machine falls on every system alike."""
    items = list(items)
    k = i % len(items)
    return items[k:] + items[:k]
# The CogniGate configurations each need their own workerd (a different build or other vars).
GATEWAY_OF = {"cognigate": "gateway", "cognigate-limits": "gateway", "cognigate-ranked": "gateway",
              "cognigate-cached": "gateway", "cognigate-otel": "gateway", "cognigate-strict": "gateway-strict", "cognigate-rtt20": "gateway-rtt20",
              "cognigate-strict-rtt20": "gateway-strict-rtt20", "cognigate-noopt": "gateway-noopt"}


class Selection:
    def __init__(self, only=None):
        self.everything = not only
        names = [n.strip() for n in (only or "").split(",") if n.strip()]
        unknown = [n for n in names if n not in SYSTEMS and n not in FILTERS and n not in GROUPS]
        if unknown:
            raise SystemExit(f"--only: unknown name(s) {', '.join(unknown)}; known: "
                             f"{', '.join(SYSTEMS)}; {', '.join(FILTERS)}; {', '.join(GROUPS)}")
        systems = [n for n in names if n in SYSTEMS]
        filters = [FILTERS[n] for n in names if n in FILTERS]
        if self.everything or (filters and not systems):
            systems = list(SYSTEMS)
        self.systems = set(systems) | ({"direct"} if systems else set())
        self.groups = set(GROUPS) if self.everything else {n for n in names if n in GROUPS}
        self.latencies = [lat for lat in (0, 50) if not any(k == "latency" for k, _ in filters)
                          or ("latency", lat) in filters]
        self.streams = [st for st in (False, True) if not any(k == "stream" for k, _ in filters)
                        or ("stream", st) in filters]

    def matrix(self):
        return bool(self.systems)

    def wants(self, name):
        return name in self.systems or name in self.groups

    def gateways(self):
        """The CogniGate workerd processes this run needs: each selected configuration's, and the
        default's for the failover, breaker-open and counter cells (they use its tenants)."""
        need = {GATEWAY_OF[s] for s in self.systems if s in GATEWAY_OF}
        if self.groups & {"special", "counters"}:
            need.add("gateway")
        return need
