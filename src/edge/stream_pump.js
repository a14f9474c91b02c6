// The middle of a streamed answer, run by the runtime (`stream_pump.rs` says why and what it
// keeps). Plain events pass without a call into wasm: the bytes an event may need the relay for
// are few and ASCII, and a scan for them here is cheaper than one crossing.

const LF = 10;
const CR = 13;
const QUOTE = 34;
const BACKSLASH = 92;
const OPEN_BRACKET = 91;
const LOWER_E = 101;
const LOWER_M = 109;
const LOWER_N = 110;
const LOWER_U = 117;

// An event still open past this many bytes sends the rest of the stream through the relay, whose
// parser owns the event size limit.
const HELD_MAX = 64 * 1024;
// Passed events wait for the relay in one buffer of at most this many bytes.
const BATCH_MAX = 256 * 1024;

// Index just past the last blank line in `bytes` (an event's end: "\n\n"), 0 when there is none,
// -1 when the bytes hold a '\r' (its line endings are the relay's to judge, from then on).
export function plainEnd(bytes) {
  let end = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === CR) return -1;
    if (b === LF && i > 0 && bytes[i - 1] === LF) end = i + 1;
  }
  return end;
}

function follows(bytes, i, word) {
  if (i + word.length > bytes.length) return false;
  for (let k = 0; k < word.length; k++) {
    if (bytes[i + k] !== word.charCodeAt(k)) return false;
  }
  return true;
}

function isSpace(b) {
  return b === 32 || b === 9 || b === LF || b === CR;
}

// After a `"usage"` at `i`: whether a value other than null follows its colon.
function usageNotNull(bytes, i) {
  let j = i + 7;
  while (j < bytes.length && isSpace(bytes[j])) j++;
  if (bytes[j] !== 58) return false;
  j++;
  while (j < bytes.length && isSpace(bytes[j])) j++;
  return j < bytes.length && bytes[j] !== LOWER_N;
}

// Whether complete events may need the relay: "[DONE]" or "message_stop" (the end), "error" (an
// error event, or a payload with an error member), a "\u" escape (which can spell any of them),
// or a "usage" member that is not null (read, and a chat stream's usage chunk maybe stripped).
// Never false for an event the relay would do anything to but pass and meter; true for a few it
// would only pass.
export function needsRelay(bytes) {
  for (let i = 0; i < bytes.length; i++) {
    switch (bytes[i]) {
      case OPEN_BRACKET:
        if (follows(bytes, i + 1, "DONE]")) return true;
        break;
      case LOWER_E:
        if (follows(bytes, i + 1, "rror")) return true;
        break;
      case BACKSLASH:
        if (bytes[i + 1] === LOWER_U) return true;
        break;
      case QUOTE:
        if (follows(bytes, i + 1, 'usage"') && usageNotNull(bytes, i)) return true;
        break;
      case LOWER_M:
        if (follows(bytes, i + 1, "essage_stop")) return true;
        break;
    }
  }
  return false;
}

function joined(a, b) {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

// The passed events, kept for the relay to meter (and copy for the cache) in one call.
class Batch {
  constructor() {
    this.bytes = new Uint8Array(0);
    this.length = 0;
  }
  keep(seg) {
    const need = this.length + seg.length;
    if (need > this.bytes.length) {
      const grown = new Uint8Array(Math.max(need, this.bytes.length * 2, 4096));
      grown.set(this.bytes.subarray(0, this.length), 0);
      this.bytes = grown;
    }
    this.bytes.set(seg, this.length);
    this.length = need;
  }
  take() {
    if (this.length === 0) return undefined;
    const out = this.bytes.slice(0, this.length);
    this.length = 0;
    return out;
  }
}

// Reads `reader` (starting with `pending`, a read under way since `lastChunkAt`) and writes to
// `writer` until the stream's middle ends; resolves to { kind, error, pending, batch, held },
// never rejects. `kind`: 0 the relay ended it, 1 the body ended, 2 a read failed, 3 the side
// waited on was quiet too long (`idle` says so), 4 the caller's side went away.
//
// `step(chunk, batch)` is the relay: it returns what to write (`undefined`: the chunk as it was;
// `null`: the stream ended), after metering `batch`, the events passed since its last call. With
// `plain`, the relay is only asked about events that may need it; the rest go out as sent and
// wait in the batch, which goes with every call when `withEveryStep` (the cache's copy keeps
// their order) and otherwise at the end, or once it is full. `held` starts the part-read event
// the relay had, and ends as the one the pump had.
export function relay_chunks(reader, pending, writer, step, idle, lastChunkAt, plain, held, withEveryStep) {
  return new Promise((resolve) => {
    let over = false;
    let reading = pending;
    let onCaller = false;
    let since = lastChunkAt;
    let timer;
    const batch = new Batch();
    held = held && held.length > 0 ? held : undefined;
    const finish = (kind, error) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      resolve({ kind, error, pending: reading, batch: batch.take(), held });
    };
    const onTimer = () => {
      if (over) return;
      const left = idle(onCaller, since, Date.now());
      if (left > 0) timer = setTimeout(onTimer, left);
      else finish(3);
    };
    const gone = () => finish(4);
    const write = (out) => {
      if (out.byteLength === 0) return next();
      onCaller = true;
      since = Date.now();
      writer.write(out).then(next, gone);
    };
    // The relay's word on `chunk`, after the passed events it is handed: written, or the end.
    const relayed = (chunk, passed) => {
      const out = step(chunk, passed);
      if (out === null) return finish(0);
      write(out === undefined ? chunk : out);
    };
    const onPlain = (chunk) => {
      const data = held ? joined(held, chunk) : chunk;
      held = undefined;
      const end = plainEnd(data);
      if (end < 0 || (end === 0 && data.length > HELD_MAX)) {
        plain = false;
        return relayed(data, batch.take());
      }
      if (end < data.length) held = data.slice(end);
      if (end === 0) return next();
      const seg = end === data.length ? data : data.subarray(0, end);
      if (needsRelay(seg)) return relayed(seg, withEveryStep ? batch.take() : undefined);
      batch.keep(seg);
      if (batch.length > BATCH_MAX) step(undefined, batch.take());
      write(seg);
    };
    const onRead = (r) => {
      if (over) return;
      reading = undefined;
      if (r.done) return finish(1);
      const chunk = r.value;
      if (!(chunk instanceof Uint8Array)) return finish(2, "the body gave a chunk that is not bytes");
      if (plain) onPlain(chunk);
      else relayed(chunk, batch.take());
    };
    const onFail = (e) => {
      if (over) return;
      reading = undefined;
      finish(2, e);
    };
    const next = () => {
      if (over) return;
      onCaller = false;
      since = Date.now();
      reading = reader.read();
      reading.then(onRead, onFail);
    };
    writer.closed.then(gone, gone);
    if (reading === undefined) next();
    else reading.then(onRead, onFail);
    onTimer();
  });
}

// Reads on until the body ends: at most `reads` reads, each within `readMs`.
export function drain_body(reader, pending, reads, readMs) {
  return new Promise((resolve) => {
    let left = reads;
    const read = (p) => {
      const timer = setTimeout(resolve, readMs);
      p.then(
        (r) => {
          clearTimeout(timer);
          if (r.done || !(r.value instanceof Uint8Array) || --left <= 0) resolve();
          else read(reader.read());
        },
        () => {
          clearTimeout(timer);
          resolve();
        },
      );
    };
    read(pending ?? reader.read());
  });
}
