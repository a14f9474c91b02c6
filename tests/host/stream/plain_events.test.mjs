// The runtime's half of a plain stream's middle (src/edge/stream_pump.js), run on node: which
// bytes pass without the relay, and that an event cut by a chunk's end is never judged in half.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const source = readFileSync(new URL("../../../src/edge/stream_pump.js", import.meta.url), "utf8");
const { plainEnd, needsRelay, relay_chunks } = await import(
  "data:text/javascript;base64," + Buffer.from(source).toString("base64")
);

const enc = (s) => new TextEncoder().encode(s);
const dec = (b) => new TextDecoder().decode(b);
const delta = (t) => `data: {"choices":[{"delta":{"content":"${t}"}}],"usage":null}\n\n`;
const USAGE = 'data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7}}\n\n';
const DONE = "data: [DONE]\n\n";

test("an event ends at a blank line, and a '\\r' leaves the stream to the relay", () => {
  assert.equal(plainEnd(enc("")), 0);
  assert.equal(plainEnd(enc("data: a\n")), 0);
  assert.equal(plainEnd(enc("data: a\n\n")), 9);
  assert.equal(plainEnd(enc("data: a\n\ndata: b\n")), 9);
  assert.equal(plainEnd(enc("data: a\n\n\n")), 10, "an empty event after it is whole too");
  assert.equal(plainEnd(enc("data: a\r\n\r\n")), -1);
  assert.equal(plainEnd(enc("data: a\n\ndata: b\r")), -1);
});

test("a plain delta, with or without a null usage, passes without the relay", () => {
  assert.equal(needsRelay(enc(delta("Hello"))), false);
  assert.equal(needsRelay(enc('data: {"usage": null, "choices":[]}\n\n')), false);
  assert.equal(needsRelay(enc(": keep-alive\n\n")), false);
  assert.equal(needsRelay(enc(delta('say \\"usage\\": 5'))), false, "quoted text is not a member");
});

test("every event the relay acts on is asked about", () => {
  assert.equal(needsRelay(enc(DONE)), true, "the end");
  assert.equal(needsRelay(enc(USAGE)), true, "the usage chunk");
  assert.equal(needsRelay(enc('data: {"usage" :\n {"prompt_tokens":1}}\n\n')), true, "spaced usage");
  assert.equal(needsRelay(enc('data: {"error":{"message":"x"}}\n\n')), true, "an error member");
  assert.equal(needsRelay(enc("event: error\ndata: {}\n\n")), true, "an error event");
  assert.equal(needsRelay(enc('data: {"\\u0065rror":{}}\n\n')), true, "an escape that spells it");
  assert.equal(needsRelay(enc('data: {"\\u0075sage":{}}\n\n')), true, "an escaped usage key");
  assert.equal(needsRelay(enc('data: {"usage"')), false, "a usage with no value yet is not judged");
  assert.equal(needsRelay(enc('event: message_stop\ndata: {"type":"message_stop"}\n\n')), true, "a Messages end");
  assert.equal(
    needsRelay(enc('event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"hi"}}\n\n')),
    false,
    "a Messages delta passes",
  );
});

// A reader over `chunks`, a writer that keeps what it is given, and a relay that ends at [DONE]
// and strips a usage chunk, as the gateway's does for a caller who did not ask for usage.
function harness(chunks, { plain = true, held, withEveryStep = false } = {}) {
  const written = [];
  const steps = [];
  let i = 0;
  const reader = {
    read: () =>
      Promise.resolve(i < chunks.length ? { done: false, value: enc(chunks[i++]) } : { done: true }),
  };
  const writer = { write: (b) => (written.push(dec(b)), Promise.resolve()), closed: new Promise(() => {}) };
  const step = (chunk, batch) => {
    const text = chunk && dec(chunk);
    steps.push({ chunk: text, batch: batch && dec(batch) });
    if (text === undefined) return undefined;
    if (text.includes("[DONE]")) return null;
    if (text.includes('"usage":{')) return enc(text.replace(USAGE, ""));
    return undefined;
  };
  const idle = () => 60_000;
  const run = relay_chunks(reader, undefined, writer, step, idle, Date.now(), plain, held && enc(held), withEveryStep);
  return run.then((m) => ({ m, written, steps }));
}

test("plain events go out as sent and reach the relay once, at the end", async () => {
  const { m, written, steps } = await harness([delta("a"), delta("b") + delta("c")]);
  assert.deepEqual(written, [delta("a"), delta("b") + delta("c")]);
  assert.deepEqual(steps, [], "no call into the relay for a plain event");
  assert.equal(m.kind, 1, "the body ended");
  assert.equal(dec(m.batch), delta("a") + delta("b") + delta("c"));
  assert.equal(m.held, undefined);
});

test("a usage chunk cut by a chunk's end is held, then judged whole", async () => {
  const cut = USAGE.length - 20;
  const { m, written, steps } = await harness([
    delta("a") + USAGE.slice(0, cut),
    USAGE.slice(cut) + delta("b"),
    DONE,
  ]);
  assert.deepEqual(steps[0], { chunk: USAGE + delta("b"), batch: undefined }, "the whole event");
  assert.deepEqual(written, [delta("a"), delta("b")], "stripped, never half sent");
  assert.equal(steps[1].chunk, DONE);
  assert.equal(m.kind, 0, "the relay ended it");
  assert.equal(dec(m.batch), delta("a"), "metered at the end");
});

test("with the cache's copy, the passed events go with every call, in order", async () => {
  const { steps, m } = await harness([delta("a"), USAGE, delta("b"), DONE], { withEveryStep: true });
  assert.deepEqual(steps, [
    { chunk: USAGE, batch: delta("a") },
    { chunk: DONE, batch: delta("b") },
  ]);
  assert.equal(m.batch, undefined);
});

test("the relay's part-read event starts the pump's, and the pump's goes back at the end", async () => {
  const first = delta("a");
  const { written, m } = await harness([first.slice(9) + "data: {\"cho"], { held: first.slice(0, 9) });
  assert.deepEqual(written, [first]);
  assert.equal(dec(m.held), 'data: {"cho');
});

test("a stream with '\\r' line ends goes to the relay from then on, with what passed before", async () => {
  const { written, steps } = await harness([delta("a"), "data: {}\r\n\r\n", delta("b")]);
  assert.deepEqual(written, [delta("a"), "data: {}\r\n\r\n", delta("b")]);
  assert.deepEqual(steps, [
    { chunk: "data: {}\r\n\r\n", batch: delta("a") },
    { chunk: delta("b"), batch: undefined },
  ]);
});

test("an event open past the held limit goes to the relay, which owns the size limit", async () => {
  const big = "data: " + "x".repeat(70 * 1024);
  const { steps, written } = await harness([delta("a"), big]);
  assert.equal(steps.length, 1);
  assert.equal(steps[0].chunk, big);
  assert.deepEqual(written, [delta("a"), big]);
});

test("without plain, every chunk goes to the relay as before", async () => {
  const { steps, written } = await harness([delta("a"), DONE], { plain: false });
  assert.deepEqual(
    steps.map((s) => s.chunk),
    [delta("a"), DONE],
  );
  assert.deepEqual(written, [delta("a")]);
});
