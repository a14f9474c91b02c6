"""The official `openai` Python SDK against the response cache.

    python3 tests/harness/cache_sdk.py GATEWAY_URL/v1 API_KEY MODEL SCENARIO

Scenarios: chat (non-streamed), chat_stream (streamed; the SDK reassembles the chunks).
Both send the same messages and temperature, so they share one cache key. Prints one JSON
summary line with the answer's text and the cache headers. Retries are off.
"""
import json
import sys

import openai

base_url, api_key, model, scenario = sys.argv[1:5]
client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello."}]


def headers(raw):
    h = raw.headers
    return {
        "cache": h.get("x-cognigate-cache"),
        "age": h.get("age"),
        "model_header": h.get("x-cognigate-model"),
        "request_id": h.get("x-cognigate-request-id"),
    }


def chat():
    raw = client.chat.completions.with_raw_response.create(model=model, messages=MESSAGES, temperature=0.5)
    c = raw.parse()
    return {"text": c.choices[0].message.content, "finish": c.choices[0].finish_reason, **headers(raw)}


def chat_stream():
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=MESSAGES, temperature=0.5, stream=True, stream_options={"include_usage": True}
    )
    text, finish, chunks, usage = "", None, 0, None
    for c in raw.parse():
        chunks += 1
        if c.choices:
            text += c.choices[0].delta.content or ""
            finish = c.choices[0].finish_reason or finish
        if c.usage is not None:
            usage = c.usage.total_tokens
    return {"text": text, "finish": finish, "chunks": chunks, "usage": usage, **headers(raw)}


try:
    fns = {f.__name__: f for f in [chat, chat_stream]}
    out = {"ok": True, **fns[scenario]()}
except Exception as e:
    out = {"ok": False, "error": repr(e)}
print(json.dumps(out))
