"""The official `openai` Python SDK as a real client of the gateway.

    python3 tests/harness/openai_sdk.py GATEWAY_URL/v1 API_KEY MODEL SCENARIO

Scenarios: responses, responses_stream, responses_tools, embeddings, retrieve, raw, refused,
chat_stream [include_usage], chat_cost, chat_platform [stream].
Prints one JSON summary line; the Rust e2e test asserts on it. Retries are off.
"""
import json
import sys

import openai

base_url, api_key, model, scenario = sys.argv[1:5]
client = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0)
TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def responses():
    r = client.responses.create(model=model, instructions="Be brief.", input="Hello", max_output_tokens=100)
    return {"object": r.object, "status": r.status, "text": r.output_text, "usage": r.usage.total_tokens}


def responses_stream():
    events, text, final = [], "", None
    for e in client.responses.create(model=model, input="Hello", stream=True):
        events.append(e.type)
        if e.type == "response.output_text.delta":
            text += e.delta
        if e.type == "response.completed":
            final = e.response
    return {"events": events, "text": text, "final_text": final.output_text if final else None}


def responses_tools():
    stream = len(sys.argv) > 5 and sys.argv[5] == "stream"
    if stream:
        first = None
        for e in client.responses.create(model=model, input="Weather in Oslo?", tools=[TOOL], stream=True):
            if e.type == "response.completed":
                first = e.response
    else:
        first = client.responses.create(model=model, input="Weather in Oslo?", tools=[TOOL])
    call = next(i for i in first.output if i.type == "function_call")
    second = client.responses.create(
        model=model,
        tools=[TOOL],
        input=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
            {"type": "function_call_output", "call_id": call.call_id, "output": "rain"},
        ],
    )
    return {"name": call.name, "arguments": json.loads(call.arguments), "call_id": call.call_id, "final_text": second.output_text}


def embeddings():
    raw = client.embeddings.with_raw_response.create(model=model, input="hello")
    e = raw.parse()
    return {
        "count": len(e.data),
        "dims": len(e.data[0].embedding),
        "depth": raw.headers.get("x-cognigate-fallback-depth"),
        "provider": raw.headers.get("x-cognigate-provider"),
    }


def retrieve():
    m = client.models.retrieve(model)
    listed = [x.created for x in client.models.list()]
    return {"id": m.id, "created": m.created, "listed_created": listed}


def raw():
    r = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": "hi"}]
    )
    c = r.parse()
    return {
        "x_request_id": r.headers.get("x-request-id"),
        "cognigate_request_id": r.headers.get("x-cognigate-request-id"),
        "request_id": c._request_id,
    }


def chat_stream():
    """A chat stream, asking for the usage chunk only with `include_usage`."""
    include = len(sys.argv) > 5 and sys.argv[5] == "include_usage"
    extra = {"stream_options": {"include_usage": True}} if include else {}
    text, usage, usage_chunks, chunks = "", None, 0, 0
    stream = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "hi"}], stream=True, **extra
    )
    for c in stream:
        chunks += 1
        if c.choices:
            text += c.choices[0].delta.content or ""
        if c.usage is not None:
            usage_chunks += 1
            usage = {"prompt": c.usage.prompt_tokens, "completion": c.usage.completion_tokens}
    return {"text": text, "chunks": chunks, "usage_chunks": usage_chunks, "usage": usage}


def chat_cost():
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": "hi"}], user="sdk-user"
    )
    c = raw.parse()
    return {"cost": raw.headers.get("x-cognigate-cost-usd"), "prompt": c.usage.prompt_tokens}


def chat_platform():
    """One chat request, streamed when the fifth argument says `stream`: its text and the
    headers that say where it was served."""
    stream = len(sys.argv) > 5 and sys.argv[5] == "stream"
    raw = client.chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": "hi"}], stream=stream
    )
    parsed = raw.parse()
    if stream:
        text = "".join(c.choices[0].delta.content or "" for c in parsed if c.choices)
    else:
        text = parsed.choices[0].message.content
    headers = {h: raw.headers.get(f"x-cognigate-{h}") for h in ("platform", "provider", "fallback-depth")}
    return {"text": text, **headers}


def refused():
    try:
        client.responses.create(model=model, input="x", previous_response_id="resp_1")
    except openai.APIStatusError as e:
        return {"status": e.status_code, "body": e.body}
    return {"status": 200}


try:
    scenarios = [responses, responses_stream, responses_tools, embeddings, retrieve, raw, refused]
    scenarios += [chat_stream, chat_cost, chat_platform]
    fns = {f.__name__: f for f in scenarios}
    out = {"ok": True, **fns[scenario]()}
except Exception as e:
    out = {"ok": False, "error": repr(e)}
print(json.dumps(out))
