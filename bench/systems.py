"""The systems the bench measures, started on this machine: the native mock upstreams, workerd
through Miniflare (tests/harness/serve.mjs) for the floor and the CogniGate configurations, the
gateway's tenants, providers and keys (set up through its admin API), and the peers LiteLLM and
Portkey installed from their registries."""

import json
import shutil
import subprocess
import sys

from processes import ROOT, WORK, free_port, http, log, run, start, wait_http

LITELLM_VERSIONS = ["1.110.2", "1.100.0"]  # newest first; the first that installs is used
PORTKEY_VERSION = "1.15.2"
# Portkey declares @hono/node-server ^1.3.3, which npm resolves to the newest 1.x. From 1.14.2 on,
# node-server's Response keeps a streamed body's init.headers as they are: for Portkey's stream
# that is the upstream fetch's Headers, guarded immutable, and Portkey then appends its
# x-portkey-* headers to them (ResponseService.updateHeaders), so every streamed request answered
# 500 "Something went wrong" ("TypeError: immutable" in its log; Portkey-AI/gateway issues 1389
# and 1550). 1.14.1 copies those headers into a plain object, and Portkey streams. Non-streamed,
# 1.14.1 measured no slower (A/B, alternating rounds of 2 s, req/s: c=1 515, 696, 821 against
# 1.19.19's 520, 688, 805; c=16 859, 930, 930 against 845, 907, 871).
PORTKEY_NODE_SERVER = "1.14.1"
ADMIN = "bench-admin-key"
KEK = "ab" * 32
# The mocks speak plain http on 127.0.0.1.
GATEWAY_VARS = {"CG_ADMIN": ADMIN, "CG_KEK": KEK, "DEBUG_COUNTERS": "true", "ALLOW_HTTP_UPSTREAMS": "true"}


def start_mock(latency, status=None, words=None):
    port = free_port()
    cmd = [ROOT / "target/release/mock-provider", "--port", str(port), "--name", f"mock{latency}", "--latency-ms", str(latency)]
    if status:
        cmd += ["--status", str(status)]
    if words:
        cmd += ["--words", str(words)]
    start(list(map(str, cmd)), f"mock-{latency}-{status or 200}{f'-{words}w' if words else ''}")
    assert wait_http(f"http://127.0.0.1:{port}/v1/models", 10), "mock did not start"
    return port


def serve_cmd(state, script, extra_args, env_vars):
    cmd = ["node", "tests/harness/serve.mjs", "--state", str(state), "--script", script, *extra_args]
    for k, v in env_vars.items():
        cmd += ["--var", f"{k}={v}"]
    return cmd


def read_ready(p):
    """serve.mjs's one JSON line, printed once Miniflare's `ready` resolved and D1's migrations
    ran: the worker's URL. Nothing here sends the worker a request."""
    line = p.stdout.readline().decode()
    if not line:
        raise RuntimeError(f"serve.mjs exited before it was ready (exit {p.wait()})")
    return json.loads(line)["url"].rstrip("/")


def start_workerd(name, script, extra_args, env_vars, keep_state=False, harness_env=None):
    state = WORK / f"state-{name}"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir(parents=True)
    cmd = serve_cmd(state, script, [*extra_args, *(["--keep-state"] if keep_state else [])], env_vars)
    p = start(cmd, name, env={"CG_HARNESS_LOG": "warn", **(harness_env or {})}, stdout=subprocess.PIPE)
    return read_ready(p)


def setup_gateway(url, mock0, mock50, mockfail, mock_long=None):
    """`mock_long`: tenant -> the port of a mock whose answers stream many events (bench/changes.py)."""
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

    # The long answers' tenants: the same catalog on mocks whose answers stream many events.
    tenants = (("bench0", mock0), ("bench50", mock50)) + tuple((mock_long or {}).items())
    for t, port in tenants:
        admin("POST", "/admin/v1/tenants", {"id": t, "name": t})
        provider(t, "mock", port)
        model(t, "m1", "mock")
        model(t, "m2", "mock")
        admin("PUT", f"/admin/v1/tenants/{t}/routing-rules", {"match": "bench", "chain": ["m1", "m2"]})
        keys[t] = admin("POST", f"/admin/v1/tenants/{t}/api-keys")["key"]
    # The same again with limits configured that never trip: a tenant budget and a key
    # with an rpm and a budget. A warm isolate admits them from its ledger slice,
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
    # The same catalog served through `auto:fast`, which ranks m1 and m2 by their
    # measured latency on every request (this isolate's stats, no round trip of its own; the
    # outcomes ride the grant renewals or a flush after the response).
    for t, port in (("ranked0", mock0), ("ranked50", mock50)):
        admin("POST", "/admin/v1/tenants", {"id": t, "name": t})
        provider(t, "mock", port)
        model(t, "m1", "mock")
        model(t, "m2", "mock")
        keys[t] = admin("POST", f"/admin/v1/tenants/{t}/api-keys")["key"]
    # The default with the response cache on for every request (`cache.ttl_s`). The load
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
    # The default with trace export on (`otel`, every trace sampled), to an OTLP receiver that
    # takes every batch: the mock's own server, which answers any POST 200. Spans go after the
    # answer, batched per isolate, so what this cell adds is the spans' making and the POSTs.
    # A build from before trace export refuses the setting: it gets no such tenant (bench/ab.py,
    # bench/changes.py run older builds through this setup).
    for t, port in (("otel0", mock0), ("otel50", mock50)):
        admin("POST", "/admin/v1/tenants", {"id": t, "name": t})
        otel = {"otel": {"endpoint": f"http://127.0.0.1:{mock0}/v1/traces", "headers": {"x-api-key": "bench"}}}
        status, _, _ = http("PUT", f"{url}/admin/v1/tenants/{t}/settings", otel, a)
        if status >= 300:
            continue
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


def portkey_installed(home):
    server = home / "node_modules/@portkey-ai/gateway/build/start-server.js"
    pinned = home / "node_modules/@hono/node-server/package.json"
    nested = home / "node_modules/@portkey-ai/gateway/node_modules/@hono/node-server"
    return (server.exists() and pinned.exists() and not nested.exists()
            and json.loads(pinned.read_text()).get("version") == PORTKEY_NODE_SERVER)


def start_portkey(mock0):
    """Portkey's gateway from npm, with @hono/node-server pinned (PORTKEY_NODE_SERVER says why).
    A streamed request through it must answer 200 before it is measured: a failure there is
    quick, and would otherwise be timed as if it were Portkey's stream."""
    home = WORK / "portkey"
    server = home / "node_modules/@portkey-ai/gateway/build/start-server.js"
    if not portkey_installed(home):
        # From scratch: an install from before the pin holds node-server 1.19 and a lock file.
        shutil.rmtree(home / "node_modules", ignore_errors=True)
        (home / "package-lock.json").unlink(missing_ok=True)
        home.mkdir(parents=True, exist_ok=True)
        (home / "package.json").write_text(json.dumps({
            "private": True,
            "dependencies": {"@portkey-ai/gateway": PORTKEY_VERSION},
            "overrides": {"@hono/node-server": PORTKEY_NODE_SERVER},
        }, indent=2) + "\n")
        r = subprocess.run(["npm", "install", "--prefix", str(home), "--no-audit", "--no-fund"], capture_output=True, text=True)
        if r.returncode != 0 or not portkey_installed(home):
            return None, f"Portkey could not be installed from npm ({r.stderr.strip()[-200:]})"
    port = free_port()
    start(["node", str(server), f"--port={port}", "--headless"], "portkey", env={"NODE_ENV": "production"})
    if not wait_http(f"http://127.0.0.1:{port}/", 60):
        return None, "Portkey did not come up (see target/bench/portkey.log)"
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    headers = {"authorization": "Bearer sk-x", "x-portkey-provider": "openai", "x-portkey-custom-host": f"http://127.0.0.1:{mock0}/v1"}
    status, _, text = http("POST", url, {"model": "m1", "messages": [{"role": "user", "content": "hello"}], "stream": True}, headers)
    if status != 200 or b"[DONE]" not in text:
        return None, f"Portkey's streamed answer is {status} {text[:120]!r} (see target/bench/portkey.log)"
    return {"url": url, "version": f"{PORTKEY_VERSION} (@hono/node-server {PORTKEY_NODE_SERVER})"}, None
