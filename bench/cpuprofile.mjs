// Records a V8 CPU profile of a workerd isolate through its inspector (DevTools protocol), for
// `make profile` (bench/profile.py drives the load while this records).
//
//   node bench/cpuprofile.mjs --port N --seconds S --out FILE.cpuprofile [--interval-us 100]
//
// Prints "recording" on stdout once the profiler runs, then, when S seconds have passed, writes
// the profile and exits. workerd lists one inspector target per worker; the gateway's fetch
// handler and its Durable Objects share the script's isolate, so one target holds them all.
import WebSocket from "ws";
import { writeFileSync } from "node:fs";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const port = Number(opt("--port"));
const seconds = Number(opt("--seconds", "10"));
const out = opt("--out");
const intervalUs = Number(opt("--interval-us", "100"));

const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
// Miniflare adds internal workers (its entry and loopback); the user's worker is "core:user:…".
const target = targets.find((t) => /core:user:/.test(t.id ?? t.title ?? "")) ?? targets[targets.length - 1];
if (!target) {
  console.error("cpuprofile: the inspector lists no targets");
  process.exit(1);
}
const ws = new WebSocket(target.webSocketDebuggerUrl ?? `ws://127.0.0.1:${port}/${target.id}`);
await new Promise((ok, fail) => {
  ws.once("open", ok);
  ws.once("error", fail);
});
let next = 0;
const pending = new Map();
ws.on("message", (data) => {
  const msg = JSON.parse(data.toString());
  const p = pending.get(msg.id);
  if (p) {
    pending.delete(msg.id);
    msg.error ? p.fail(new Error(JSON.stringify(msg.error))) : p.ok(msg.result);
  }
});
const send = (method, params = {}) =>
  new Promise((ok, fail) => {
    const id = ++next;
    pending.set(id, { ok, fail });
    ws.send(JSON.stringify({ id, method, params }));
  });

await send("Profiler.enable");
await send("Profiler.setSamplingInterval", { interval: intervalUs });
await send("Profiler.start");
process.stdout.write(`recording ${target.id ?? target.title}\n`);
await new Promise((r) => setTimeout(r, seconds * 1000));
const { profile } = await send("Profiler.stop");
writeFileSync(out, JSON.stringify(profile));
ws.close();
process.exit(0);
