"""A scripted Google Vertex AI on 127.0.0.1, strict where the real one is.

- `POST /token` is Google's OAuth token endpoint: a JWT-bearer assertion is verified with the
  service account's public key (PyJWT, RS256), its `aud` must be this endpoint, `iss` a known
  account and `scope` the cloud-platform scope. A bad one is a 400 `invalid_grant`, as Google
  answers it. A good one gets an access token that the model routes then require.
- `POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:rawPredict` (and
  `:streamRawPredict`) take Anthropic's Messages body without `model` and with
  `anthropic_version: "vertex-2023-10-16"`, and answer Anthropic's JSON or SSE.
- `.../publishers/google/models/{m}:generateContent` (and `:streamGenerateContent?alt=sse`)
  answer Gemini's shapes. Express mode (`/v1/publishers/google/...`) takes an API key in
  `x-goog-api-key` instead of a token, and serves Google's models only.
- Errors come in both of Vertex's shapes: Google's envelope (`error.status`) and, for Claude,
  Anthropic's (`overloaded_error` on a 529).

Control, for the tests: `GET /__account` is the service-account file this mock trusts (its
`token_uri` pointing here), `GET /__account?rogue=1` one with the same email and an unknown key;
`POST /__script` pushes a rule (`{"times": 1, "status": 429, "shape": "google"}`,
`{"times": 1, "status": 529, "shape": "anthropic"}`, `{"times": 1, "token": "refuse"}`),
`GET /__calls` lists the calls received.

Usage: `python3 vertex_mock.py '{"project": "p", "region": "us-east5", "api_keys": [...],
"expires_in": 3599}'`; prints the port on its first line.
"""

import json
import re
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from quiet_server import serve

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
EMAIL = "gateway@test-project.iam.gserviceaccount.com"
LOCK = threading.Lock()
RULES, CALLS, TOKENS = [], [], set()
KEYS = {name: rsa.generate_private_key(public_exponent=65537, key_size=2048) for name in ("real", "rogue")}
PORT = [0]


def account(name):
    pem = KEYS[name].private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()).decode()
    return {"type": "service_account", "project_id": CONFIG.get("project", "p"), "private_key_id": "k1",
            "private_key": pem, "client_email": EMAIL, "client_id": "1",
            "token_uri": f"http://127.0.0.1:{PORT[0]}/token"}


def take_rule(kind):
    with LOCK:
        rule = next((r for r in RULES if r.get("times", 1) > 0 and (("token" in r) == (kind == "token"))), None)
        if rule is not None:
            rule["times"] = rule.get("times", 1) - 1
        return rule or {}


def anthropic_sse(model, text):
    events = [("message_start", {"type": "message_start", "message": {
        "id": "msg_vrtx_01", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 13, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"})]
    for i in range(0, len(text), 6):
        events.append(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                               "delta": {"type": "text_delta", "text": text[i:i + 6]}}))
    events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
               ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                  "usage": {"output_tokens": 5}}),
               ("message_stop", {"type": "message_stop"})]
    return "".join(f"event: {k}\ndata: {json.dumps(v)}\n\n" for k, v in events).encode()


def gemini_answer(model, text):
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 6, "candidatesTokenCount": 4, "totalTokenCount": 10},
            "modelVersion": model}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json"):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def google_error(self, status, kind, message):
        self.send(status, {"error": {"code": status, "message": message, "status": kind}})

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/__calls":
            with LOCK:
                return self.send(200, CALLS)
        if url.path == "/__account":
            return self.send(200, account("rogue" if "rogue" in parse_qs(url.query) else "real"))
        self.send(404, b"{}")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        url = urlsplit(self.path)
        if url.path == "/__script":
            with LOCK:
                RULES.append(json.loads(body))
            return self.send(200, b"{}")
        if url.path == "/token":
            return self.token(body)
        return self.predict(url, body)

    def token(self, body):
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        refused = None
        if self.headers.get("content-type") != "application/x-www-form-urlencoded":
            refused = "invalid_request"
        elif form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer":
            refused = "unsupported_grant_type"
        else:
            try:
                claims = jwt.decode(form.get("assertion", ""), KEYS["real"].public_key(), algorithms=["RS256"],
                                    audience=f"http://127.0.0.1:{PORT[0]}/token", issuer=EMAIL,
                                    options={"require": ["exp", "iat", "iss", "aud"]})
                if claims.get("scope") != SCOPE or claims["exp"] - claims["iat"] > 3600:
                    refused = "invalid_scope"
            except jwt.PyJWTError:
                refused = "invalid_grant"
        if take_rule("token").get("token") == "refuse":
            refused = "invalid_grant"
        with LOCK:
            CALLS.append({"kind": "token", "refused": refused})
        if refused:
            return self.send(400, {"error": refused, "error_description": "Invalid JWT Signature."})
        token = "ya29." + secrets.token_urlsafe(24)
        with LOCK:
            TOKENS.add(token)
        self.send(200, {"access_token": token, "expires_in": CONFIG.get("expires_in", 3599), "token_type": "Bearer"})

    def predict(self, url, body):
        m = re.match(r"^/v1/(?:projects/([^/]+)/locations/([^/]+)/)?publishers/(anthropic|google)/models/([^/:]+):(\w+)$",
                     url.path)
        if not m:
            return self.google_error(404, "NOT_FOUND", "The requested URL was not found.")
        project, region, publisher, model, method = m.groups()
        model = unquote(model)
        auth = self.headers.get("authorization", "")
        api_key = self.headers.get("x-goog-api-key")
        if project is None:
            who = "api_key" if api_key in CONFIG.get("api_keys", []) and publisher == "google" else None
        else:
            with LOCK:
                who = "token" if auth.startswith("Bearer ") and auth[7:] in TOKENS else None
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        rule = take_rule("model")
        with LOCK:
            CALLS.append({"kind": "model", "path": self.path, "model": model, "who": who, "body": parsed})
        if who is None:
            return self.google_error(401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
        if project is not None and (project, region) != (CONFIG.get("project"), CONFIG.get("region")):
            return self.google_error(404, "NOT_FOUND", f"Project {project} or location {region} not found.")
        if "status" in rule:
            if rule.get("shape") == "anthropic":
                return self.send(rule["status"], {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            return self.google_error(rule["status"], "RESOURCE_EXHAUSTED" if rule["status"] == 429 else "UNAVAILABLE",
                                     "scripted")
        if not isinstance(parsed, dict):
            return self.google_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        text = rule.get("text", f"Hello from {model} on Vertex.")
        if publisher == "anthropic":
            return self.claude(method, model, parsed, text)
        if method == "generateContent":
            return self.send(200, gemini_answer(model, text))
        if method == "streamGenerateContent" and url.query == "alt=sse":
            chunks = [gemini_answer(model, text[i:i + 6]) for i in range(0, len(text), 6)]
            return self.send(200, "".join(f"data: {json.dumps(c)}\r\n\r\n" for c in chunks).encode(), "text/event-stream")
        return self.google_error(400, "INVALID_ARGUMENT", f"Unknown method {method}")

    def claude(self, method, model, parsed, text):
        bad = None
        if parsed.get("anthropic_version") != "vertex-2023-10-16":
            bad = "anthropic_version: Input should be 'vertex-2023-10-16'"
        elif "model" in parsed:
            bad = "model: Extra inputs are not permitted"
        elif method not in ("rawPredict", "streamRawPredict"):
            bad = f"unknown method {method}"
        elif (method == "streamRawPredict") != bool(parsed.get("stream")):
            bad = "stream must be true exactly on streamRawPredict"
        if bad:
            return self.send(400, {"type": "error", "error": {"type": "invalid_request_error", "message": bad}})
        if method == "rawPredict":
            return self.send(200, {"id": "msg_vrtx_01", "type": "message", "role": "assistant", "model": model,
                                   "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                   "stop_sequence": None, "usage": {"input_tokens": 13, "output_tokens": 5}})
        self.send(200, anthropic_sse(model, text), "text/event-stream")


if __name__ == "__main__":
    serve(Handler, on_port=lambda port: PORT.__setitem__(0, port))
