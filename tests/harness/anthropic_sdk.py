"""The official `anthropic` Python SDK as a real client of the gateway's Messages surface.

    python3 tests/harness/anthropic_sdk.py GATEWAY_URL API_KEY MODEL SCENARIO

Scenarios: plain, stream, tools, error, count_tokens, stream_start. Prints one JSON summary line; the Rust e2e test asserts
on it. Retries are off so each call is one gateway request.
"""
import json
import sys

import anthropic

base_url, api_key, model, scenario = sys.argv[1:5]
client = anthropic.Anthropic(base_url=base_url, api_key=api_key, max_retries=0)
WEATHER = {
    "name": "get_weather",
    "description": "Weather for a city.",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}


def text_of(message):
    return "".join(b.text for b in message.content if b.type == "text")


def plain():
    raw = client.messages.with_raw_response.create(
        model=model,
        max_tokens=256,
        system="Be brief.",
        messages=[{"role": "user", "content": "Hello"}],
    )
    message = raw.parse()
    return {
        "text": text_of(message),
        "type": message.type,
        "stop_reason": message.stop_reason,
        "usage": message.usage.model_dump(),
        "request_id": message._request_id,
        "depth": raw.headers.get("x-cognigate-fallback-depth"),
        "provider": raw.headers.get("x-cognigate-provider"),
        "platform": raw.headers.get("x-cognigate-platform"),
    }


def stream():
    events = []
    with client.messages.stream(
        model=model, max_tokens=256, messages=[{"role": "user", "content": "Hello"}]
    ) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
        depth = s.response.headers.get("x-cognigate-fallback-depth")
        platform = s.response.headers.get("x-cognigate-platform")
    return {
        "text": text,
        "final_text": text_of(final),
        "stop_reason": final.stop_reason,
        "output_tokens": final.usage.output_tokens,
        "depth": depth,
        "platform": platform,
    }


def tools():
    first = client.messages.create(
        model=model,
        max_tokens=256,
        tools=[WEATHER],
        tool_choice={"type": "auto"},
        messages=[{"role": "user", "content": "Weather in Oslo?"}],
    )
    use = next(b for b in first.content if b.type == "tool_use")
    second = client.messages.create(
        model=model,
        max_tokens=256,
        tools=[WEATHER],
        messages=[
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "rain"}]},
        ],
    )
    return {
        "stop_reason": first.stop_reason,
        "tool_name": use.name,
        "tool_input": use.input,
        "tool_id": use.id,
        "final_text": text_of(second),
    }


def error():
    try:
        client.messages.create(model=model, max_tokens=16, messages=[{"role": "user", "content": "x"}])
    except anthropic.APIStatusError as e:
        return {"status": e.status_code, "class": type(e).__name__, "body": e.body}
    return {"status": 200}


def count_tokens():
    """`messages.count_tokens` as a request grows: a system prompt, then tools, then more turns.
    Also the beta call Claude Code makes (`?beta=true`), and an unknown model."""
    turn = [{"role": "user", "content": "Weather in Oslo?"}]
    steps = [
        {"messages": turn},
        {"messages": turn, "system": "You are a careful assistant. " * 20},
        {"messages": turn, "system": "You are a careful assistant. " * 20, "tools": [WEATHER]},
        {
            "messages": turn
            + [{"role": "assistant", "content": "Let me look."}, {"role": "user", "content": "Thanks, and Bergen?"}],
            "system": "You are a careful assistant. " * 20,
            "tools": [WEATHER],
        },
    ]
    counts = [client.messages.count_tokens(model=model, **step).input_tokens for step in steps]
    beta = client.beta.messages.count_tokens(model=model, **steps[-1]).input_tokens
    try:
        client.messages.count_tokens(model="no-such-model", messages=turn)
        unknown = {"status": 200}
    except anthropic.APIStatusError as e:
        unknown = {"status": e.status_code, "class": type(e).__name__, "body": e.body}
    return {"counts": counts, "beta": beta, "unknown": unknown}


def stream_start():
    """The usage a client sees at `message_start` (Claude Code reads its context size there) and
    in the final message."""
    with client.messages.stream(
        model=model, max_tokens=256, system="Be brief.", messages=[{"role": "user", "content": "Hello " * 200}]
    ) as s:
        start = None
        for event in s:
            if event.type == "message_start":
                start = event.message.usage.model_dump()
        final = s.get_final_message()
    return {"start": start, "final": final.usage.model_dump()}


SCENARIOS = {
    "plain": plain,
    "stream": stream,
    "tools": tools,
    "error": error,
    "count_tokens": count_tokens,
    "stream_start": stream_start,
}

try:
    out = {"ok": True, **SCENARIOS[scenario]()}
except Exception as e:  # the summary line says what failed
    out = {"ok": False, "error": repr(e)}
print(json.dumps(out))
