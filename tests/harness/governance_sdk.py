"""The official `openai` Python SDK against the gateway's limits.

    python3 tests/harness/governance_sdk.py GATEWAY_URL/v1 API_KEY SCENARIO 'JSON OPTIONS'

Scenarios:
  chat    options: model (null: the request names none), user (the body's `user`), end_user
          (the X-CogniGate-User header). Prints status, Retry-After, the served model and the
          error body of a refusal.
  stream  options: model, include_usage. Prints the text, how many chunks carried usage, and
          the usage the SDK saw.
Retries are off: a 429 must reach the caller as it was sent.
"""
import json
import sys

import openai

base_url, api_key, scenario, raw_options = sys.argv[1:5]
options = json.loads(raw_options)
client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
MESSAGES = [{"role": "user", "content": "hello"}]


def chat():
    model = options.get("model")
    kwargs = {"messages": MESSAGES, "model": model if model is not None else openai.NOT_GIVEN}
    if options.get("user") is not None:
        kwargs["user"] = options["user"]
    if options.get("end_user") is not None:
        kwargs["extra_headers"] = {"X-CogniGate-User": options["end_user"]}
    try:
        raw = client.chat.completions.with_raw_response.create(**kwargs)
    except openai.APIStatusError as e:
        return {
            "status": e.status_code,
            "retry_after": e.response.headers.get("retry-after"),
            "body": e.body,
        }
    c = raw.parse()
    return {
        "status": raw.status_code,
        "model": raw.headers.get("x-cognigate-model"),
        "cost": raw.headers.get("x-cognigate-cost-usd"),
        "text": c.choices[0].message.content,
        "usage": c.usage.total_tokens if c.usage else None,
    }


def stream():
    kwargs = {"model": options["model"], "messages": MESSAGES, "stream": True}
    if options.get("include_usage"):
        kwargs["stream_options"] = {"include_usage": True}
    text, with_usage, usage = "", 0, None
    for chunk in client.chat.completions.create(**kwargs):
        if chunk.usage is not None:
            with_usage += 1
            usage = chunk.usage.total_tokens
        for choice in chunk.choices:
            text += choice.delta.content or ""
    return {"text": text, "chunks_with_usage": with_usage, "usage": usage}


try:
    out = {"ok": True, **{"chat": chat, "stream": stream}[scenario]()}
except Exception as e:  # the Rust test prints it
    out = {"ok": False, "error": repr(e)}
print(json.dumps(out))
