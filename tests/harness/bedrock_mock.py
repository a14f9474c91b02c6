"""A scripted AWS Bedrock runtime on 127.0.0.1, strict where the real one is.

- Every SigV4 signature is recomputed with botocore's own signer (`SigV4Auth`) from the headers
  the request lists as signed, its body and its `x-amz-date`: a wrong one is a 403
  `InvalidSignatureException`, as AWS answers it. A `Bearer` token must be a configured Bedrock
  API key. No credentials at all is `MissingAuthenticationTokenException`.
- `POST /model/{modelId}/converse` answers Converse JSON; `/converse-stream` answers the binary
  AWS event stream (`application/vnd.amazon.eventstream`), each frame with real CRC32s.
- The Converse rules a request must respect are checked, each a 400 `ValidationException`: the
  first turn is the user's, roles alternate, no blank text block, a history with tool use needs a
  `toolConfig`, tool names match `[a-zA-Z0-9_-]{1,64}`.
- Errors carry `x-amzn-ErrorType` and a `{"message"}` body, with the status botocore's model gives
  them (so the status says nothing reliable: `ServiceQuotaExceededException` is a 400).

Control, for the tests: `POST /__script` pushes a rule (`{"times": 1, "error": "ThrottlingException"}`,
`{"times": 1, "stream_exception": "throttlingException"}`, `{"text": "..."}`), `GET /__calls` lists
the calls received, `POST /__reset` clears both.

Usage: `python3 bedrock_mock.py '<json config>'` with `{"credentials": {"AKID": "secret"},
"api_keys": ["..."]}`; prints the port on its first line.
"""

import json
import re
import struct
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler
from urllib.parse import unquote

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from quiet_server import serve

# botocore's service model: the status each error is answered with.
STATUS = {
    "ThrottlingException": 429,
    "ServiceQuotaExceededException": 400,
    "ModelNotReadyException": 429,
    "ServiceUnavailableException": 503,
    "InternalServerException": 500,
    "ModelErrorException": 424,
    "ModelTimeoutException": 408,
    "AccessDeniedException": 403,
    "UnrecognizedClientException": 403,
    "InvalidSignatureException": 403,
    "ExpiredTokenException": 400,
    "MissingAuthenticationTokenException": 403,
    "ResourceNotFoundException": 404,
    "ValidationException": 400,
}
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

CONFIG = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
LOCK = threading.Lock()
RULES = []
CALLS = []


def header(name, value):
    n, v = name.encode(), value.encode()
    return struct.pack("B", len(n)) + n + b"\x07" + struct.pack(">H", len(v)) + v


def frame(headers, payload):
    """One event-stream message: prelude (total, headers length, CRC), headers, payload, CRC."""
    hb = b"".join(header(k, v) for k, v in headers)
    total = 12 + len(hb) + len(payload) + 4
    prelude = struct.pack(">II", total, len(hb))
    prelude += struct.pack(">I", zlib.crc32(prelude) & 0xFFFFFFFF)
    body = prelude + hb + payload
    return body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def event(kind, payload):
    payload = dict(payload, p="abcdefghij")  # the padding field real streams carry
    return frame([(":message-type", "event"), (":event-type", kind),
                  (":content-type", "application/json")], json.dumps(payload).encode())


def exception(kind, message):
    return frame([(":message-type", "exception"), (":exception-type", kind),
                  (":content-type", "application/json")], json.dumps({"message": message}).encode())


def validation(body):
    """The reason a Converse body is refused, or None."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages must not be empty"
    if messages[0].get("role") != "user":
        return "A conversation must start with a user message."
    uses_tools = False
    for i, m in enumerate(messages):
        if i and m.get("role") == messages[i - 1].get("role"):
            return "A conversation must alternate between user and assistant roles."
        content = m.get("content")
        if not isinstance(content, list) or not content:
            return f"messages.{i}.content must not be empty"
        for block in content:
            if "text" in block and not str(block["text"]).strip():
                return "The text field in the ContentBlock object is blank."
            if "toolUse" in block or "toolResult" in block:
                uses_tools = True
            if "toolUse" in block and not TOOL_NAME.match(block["toolUse"].get("name", "")):
                return "toolUse.name failed to satisfy constraint"
    tools = (body.get("toolConfig") or {}).get("tools")
    if uses_tools and not tools:
        return "The toolConfig field must be defined when using toolUse and toolResult content blocks."
    for t in tools or []:
        if not TOOL_NAME.match(t.get("toolSpec", {}).get("name", "")):
            return "toolSpec.name failed to satisfy constraint"
    unknown = set(body.get("inferenceConfig") or {}) - {"maxTokens", "temperature", "topP", "stopSequences"}
    if unknown:
        return f"inferenceConfig does not take {sorted(unknown)}"
    return None


def verify(handler, raw_path, body):
    """The error type a real endpoint would refuse these credentials with, or None."""
    auth = handler.headers.get("authorization", "")
    if auth.startswith("Bearer "):
        return None if auth[7:] in CONFIG.get("api_keys", []) else "UnrecognizedClientException"
    m = re.match(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                 r"SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$", auth)
    if not m:
        return "MissingAuthenticationTokenException"
    akid, _date, region, service, signed, signature = m.groups()
    secret = CONFIG.get("credentials", {}).get(akid)
    if secret is None:
        return "UnrecognizedClientException"
    names = signed.split(";")
    if "host" not in names or "x-amz-date" not in names:
        return "InvalidSignatureException"
    headers = {n: handler.headers.get(n, "") for n in names}
    request = AWSRequest(method="POST", url=f"http://{headers['host']}{raw_path}", data=body, headers=headers)
    request.context["timestamp"] = headers["x-amz-date"]
    token = handler.headers.get("x-amz-security-token")
    signer = SigV4Auth(Credentials(akid, secret, token), service, region)
    canonical = signer.canonical_request(request)
    expected = signer.signature(signer.string_to_sign(request, canonical), request)
    if expected != signature or service != "bedrock":
        return "InvalidSignatureException"
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def error(self, kind, message):
        body = json.dumps({"message": message}).encode()
        self.send(STATUS[kind], body, headers=[("x-amzn-ErrorType", f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/")])

    def do_GET(self):
        if self.path == "/__calls":
            with LOCK:
                self.send(200, json.dumps(CALLS).encode())
        else:
            self.send(404, b"{}")

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        if self.path == "/__script":
            with LOCK:
                RULES.append(json.loads(body))
            return self.send(200, b"{}")
        if self.path == "/__reset":
            with LOCK:
                RULES.clear()
                CALLS.clear()
            return self.send(200, b"{}")
        m = re.match(r"^/model/([^/]+)/(converse|converse-stream)$", self.path)
        if not m:
            return self.error("ResourceNotFoundException", "Unknown operation")
        model, op = unquote(m.group(1)), m.group(2)
        refused = verify(self, self.path, body)
        key = (self.headers.get("authorization", "").split("Credential=")[-1].split("/")[0]
               if "Credential=" in self.headers.get("authorization", "") else "bearer")
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        with LOCK:
            CALLS.append({"path": self.path, "model": model, "key": key, "refused": refused,
                          "session_token": self.headers.get("x-amz-security-token"), "body": parsed})
            rule = next((r for r in RULES if r.get("times", 1) > 0 and r.get("key", key) == key), None)
            if rule is not None:
                rule["times"] = rule.get("times", 1) - 1
        if refused:
            return self.error(refused, "The request signature we calculated does not match the signature you provided."
                              if refused == "InvalidSignatureException" else "The security token included in the request is invalid.")
        if parsed is None or not isinstance(parsed, dict):
            return self.error("ValidationException", "Malformed input request")
        why = validation(parsed)
        if why:
            return self.error("ValidationException", why)
        rule = rule or {}
        if "error" in rule:
            return self.error(rule["error"], rule.get("message", "scripted"))
        text = rule.get("text", f"Hello from {model}.")
        usage = {"inputTokens": 11, "outputTokens": 7, "totalTokens": 18}
        if op == "converse":
            answer = {"output": {"message": {"role": "assistant", "content": [{"text": text}]}},
                      "stopReason": rule.get("stop", "end_turn"), "usage": usage, "metrics": {"latencyMs": 3}}
            return self.send(200, json.dumps(answer).encode())
        frames = [event("messageStart", {"role": "assistant"})]
        if "stream_exception" in rule:
            frames.append(exception(rule["stream_exception"], "scripted"))
        else:
            for i in range(0, len(text), 5):
                frames.append(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text[i:i + 5]}}))
            frames += [event("contentBlockStop", {"contentBlockIndex": 0}),
                       event("messageStop", {"stopReason": rule.get("stop", "end_turn")}),
                       event("metadata", {"usage": usage, "metrics": {"latencyMs": 3}})]
        self.send(200, b"".join(frames), content_type="application/vnd.amazon.eventstream")


if __name__ == "__main__":
    serve(Handler)
