"""Boundary crossings per request: how often the worker's wasm calls into JavaScript, by import.

`make profile` counts them on an instrumented copy of the profiled build: every function of the
wasm module's import object is wrapped in a counter, and the entrypoint answers
`GET /__crossings` with the counts so far (and starts again from zero). Unlike CPU time, a count
does not move with the machine's speed: on this 2-core VM the same build's CPU per request moves
by 10-20% from run to run, so a change that removes crossings is seen here exactly, and its
effect on time only in the bench's rotated cells.

Background work that lands in the counting window (a usage or stats flush to the gateway's own
Durable Objects, which run in the same isolate) is counted too, spread over the requests: the
window is 1,000 requests (a few seconds), so it holds a few of the flushes a second of traffic
makes, as serving does.
"""

import json
import re
import shutil

# The import object worker-build's bundle builds for the wasm module, and the entrypoint's fetch.
IMPORTS = re.compile(r'function ([A-Za-z_$][\w$]*)\(\)\{return\{__proto__:null,"\./index_bg\.js"')
FETCH = re.compile(r'([A-Za-z_$][\w$]*)\.prototype\.fetch=function\((\w+)\)\{return ')

# Each module of imports is replaced by a plain object of counting wrappers: an inline_js snippet
# comes in as an ES module namespace, whose properties cannot be assigned.
COUNTER = (
    "globalThis.__crossings=Object.create(null);"
    "function __countCalls(o){for(const n of Object.keys(o)){const m=o[n];if(typeof m!=='object'||m===null)continue;"
    "const c={};for(const k of Object.keys(m)){const f=m[k];if(typeof f!=='function'){c[k]=f;continue}"
    "c[k]=function(...a){__crossings[k]=(__crossings[k]||0)+1;return f.apply(this,a)}}o[n]=c}return o}\n"
)


def instrument(build, out):
    """A copy of `build` (a worker-build output directory) whose imports are counted."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(build, out)
    js = (out / "index.js").read_text()
    imports, fetch = IMPORTS.search(js), FETCH.search(js)
    if not imports or not fetch:
        raise SystemExit("crossings: worker-build's bundle no longer has the shape this script patches "
                         "(the import object's function, or the entrypoint's fetch)")
    name = imports.group(1)
    js = js.replace(imports.group(0), f'function {name}(){{return __countCalls(__imports0())}}'
                                      f'function __imports0(){{return{{__proto__:null,"./index_bg.js"', 1)
    arg = fetch.group(2)
    js = js.replace(fetch.group(0), fetch.group(0)[:-len("return ")] +
                    f'if(new URL({arg}.url).pathname==="/__crossings"){{const c=globalThis.__crossings;'
                    f'globalThis.__crossings=Object.create(null);return new Response(JSON.stringify(c))}}return ', 1)
    (out / "index.js").write_text(COUNTER + js)


def per_request(http, url, key, stream, requests=1000, warm=20):
    """{import: calls per request} over `requests` sequential chat requests after `warm` others."""
    body = {"model": "bench", "messages": [{"role": "user", "content": "hello"}], "stream": stream}
    auth = {"authorization": f"Bearer {key}"}
    for _ in range(warm):
        http("POST", url + "/v1/chat/completions", body, auth)
    http("GET", url + "/__crossings")
    for _ in range(requests):
        status, _, _ = http("POST", url + "/v1/chat/completions", body, auth)
        assert status == 200, f"crossings: a chat request answered {status}"
    _, _, text = http("GET", url + "/__crossings")
    return {k: v / requests for k, v in json.loads(text).items()}


def table(name, counts, top=15):
    rows = sorted(counts.items(), key=lambda kv: -kv[1])
    lines = [f"Boundary crossings per {name} request (wasm calling JavaScript; {sum(counts.values()):.1f} in all):", "",
             "| import | calls per request |", "|---|---|"]
    lines += [f"| `{k}` | {v:.2f} |" for k, v in rows[:top]]
    return "\n".join(lines) + "\n"
