"""An OTLP/HTTP trace receiver on 127.0.0.1 that holds the gateway to the wire: every POST to
/v1/traces is decoded with opentelemetry-proto's ExportTraceServiceRequest, a JSON body through
protobuf's JSON parser (trace and span ids converted from the OTLP mapping's hex to the base64
protobuf's parser reads), a protobuf body as protobuf. A body that does not decode is recorded
as an error and answered 400, as a collector would.

Argument: JSON config, unused ({}). Control routes:
  POST /__script {"status": 503}       answer every later export with this status
  POST /__script {"hang_ms": 15000}    hold every later export this long before answering
  GET  /__calls                        [{"content_type", "headers", "spans": [...] | "error",
                                         "status", "received_ms", "answered_ms" once answered}]
Each span is MessageToDict's, with traceId, spanId and parentSpanId back in hex and the resource's
attributes beside it under "resource".
"""

import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from quiet_server import serve

LOCK = threading.Lock()
CALLS = []
SCRIPT = {"status": 200, "hang_ms": 0}
ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def hex_to_b64(obj):
    if isinstance(obj, dict):
        return {
            k: (base64.b64encode(bytes.fromhex(v)).decode() if k in ID_FIELDS and isinstance(v, str) else hex_to_b64(v))
            for k, v in obj.items()
        }
    if isinstance(obj, list):
        return [hex_to_b64(v) for v in obj]
    return obj


def decode(content_type, body):
    req = ExportTraceServiceRequest()
    if content_type.startswith("application/json"):
        json_format.Parse(json.dumps(hex_to_b64(json.loads(body))), req)
    elif content_type.startswith("application/x-protobuf"):
        req.ParseFromString(body)
        # Parsing is lenient: re-encoding must give the same bytes, so no field was misread.
        if req.SerializeToString() != body:
            raise ValueError("protobuf body does not re-encode to the same bytes")
    else:
        raise ValueError(f"content-type {content_type!r}")
    spans = []
    for rs in req.resource_spans:
        resource = json_format.MessageToDict(rs.resource)
        for ss in rs.scope_spans:
            for span in ss.spans:
                d = json_format.MessageToDict(span)
                for k in ID_FIELDS:
                    if k in d:
                        d[k] = base64.b64decode(d[k]).hex()
                d["resource"] = resource
                d["scope"] = json_format.MessageToDict(ss.scope)
                spans.append(d)
    return spans


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b"{}"):
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/__calls":
            with LOCK:
                body = json.dumps(CALLS).encode()
            return self.answer(200, body)
        self.answer(404)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        if self.path == "/__script":
            with LOCK:
                SCRIPT.update(json.loads(body))
            return self.answer(200)
        if self.path != "/v1/traces":
            return self.answer(404)
        with LOCK:
            status, hang_ms = SCRIPT["status"], SCRIPT["hang_ms"]
        content_type = self.headers.get("content-type", "")
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            call = {"content_type": content_type, "headers": headers, "spans": decode(content_type, body)}
        except Exception as e:  # recorded for the test to fail on
            call = {"content_type": content_type, "headers": headers, "error": str(e)}
            status = 400
        call["status"] = status
        call["received_ms"] = int(time.time() * 1000)
        with LOCK:
            CALLS.append(call)
        if hang_ms:
            time.sleep(hang_ms / 1000)
        with LOCK:
            call["answered_ms"] = int(time.time() * 1000)
        self.answer(status)

if __name__ == "__main__":
    json.loads(sys.argv[1] if len(sys.argv) > 1 else "{}")
    serve(Handler)
