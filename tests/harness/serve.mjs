// Runs the built worker on workerd through Miniflare, with local D1 and Durable Objects persisted
// under a state directory, the way `wrangler dev` would but without its Node proxy in front.
//
//   node tests/harness/serve.mjs --state DIR [--keep-state] [--port N] [--var KEY=VALUE ...]
//                                [--script build/index.js] [--bare] [--analytics]
//                                [--inspector-port N]
// --inspector-port opens workerd's V8 inspector (DevTools protocol) on 127.0.0.1:N, for
// `make profile` (bench/profile.py), which records a CPU profile through it.
// CG_MINIFLARE=PATH (in the environment) loads Miniflare from PATH, an entry module, instead of
// the installed package: bench/cold_compile.py points it at a copy that passes V8 flags to workerd.
// --analytics (or CG_HARNESS_ANALYTICS=1 in the environment) adds the `ANALYTICS` Analytics
// Engine binding (off unless asked, so other suites run without it).
// --bare runs a script without the gateway's D1 and Durable Object bindings (the benchmark floor).
//
// Prints one JSON line {"url": "..."} when ready. Then reads JSON lines on stdin:
//   {"id": 1, "sql": "...", "params": [...]}  -> {"id": 1, "rows": [...]} | {"id": 1, "error": "..."}
//   {"id": 1, "scheduled": <epoch ms>}        -> the cron handler run once -> {"id": 1, "rows": []}
//   {"id": 1, "ledger": <tenant>, "path": "/settle", "body": "..."}
//                                             -> that tenant's ledger object called directly (as a
//                                                retry from an isolate would) -> {"id": 1, "rows":
//                                                [{"status": N, "text": "..."}]}
// When stdin closes (the test process exited, even by a panic) it disposes Miniflare and exits, so
// nothing it started outlives the tests.
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { createInterface } from "node:readline";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const { Miniflare, Log, LogLevel } = await import(
  process.env.CG_MINIFLARE ? pathToFileURL(process.env.CG_MINIFLARE).href : "miniflare"
);

// Miniflare's proxy (getD1Database, getWorker) blocks on `Atomics.wait` until its fetch thread
// stores 1 and notifies, then asserts the reply is there. The thread stores and notifies in two
// steps, so a notify left over from the previous call can wake the next wait while the value is
// still 0: the reply is not there yet and the assertion kills this process (seen once in CI, on 2
// busy cores). An untimed wait here goes back to waiting until the value really changed.
const atomicsWait = Atomics.wait.bind(Atomics);
Atomics.wait = (array, index, value, timeout) => {
  if (timeout !== undefined && timeout !== Infinity) return atomicsWait(array, index, value, timeout);
  let outcome;
  do outcome = atomicsWait(array, index, value);
  while (outcome === "ok" && Atomics.load(array, index) === value);
  return outcome;
};

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const state = opt("--state");
if (!state) {
  console.error("serve.mjs: --state DIR is required");
  process.exit(2);
}

// [vars] from wrangler.toml: simple `KEY = "value"` lines are all this project writes there.
function wranglerVars() {
  const toml = readFileSync(path.join(root, "wrangler.toml"), "utf8");
  const vars = {};
  let inVars = false;
  for (const line of toml.split("\n")) {
    const t = line.trim();
    if (t.startsWith("[")) inVars = t === "[vars]";
    const m = inVars && t.match(/^([A-Z0-9_]+)\s*=\s*"(.*)"$/);
    if (m) vars[m[1]] = m[2];
  }
  return vars;
}

// stdout carries the protocol; Miniflare's own messages and the worker's console go to stderr.
class StderrLog extends Log {
  log(message) {
    process.stderr.write(message + "\n");
  }
}

const bare = args.includes("--bare");
const bindings = wranglerVars();
args.forEach((a, i) => {
  if (a === "--var") {
    const [k, ...v] = args[i + 1].split("=");
    bindings[k] = v.join("=");
  }
});

const mf = new Miniflare({
  modules: true,
  scriptPath: path.join(root, opt("--script", "build/index.js")),
  modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"], fallthrough: true }],
  compatibilityDate: "2026-04-01",
  host: "127.0.0.1",
  port: Number(opt("--port", "0")),
  bindings,
  ...(bare ? {} : {
    d1Databases: { DB: "cognigate-local" },
    durableObjects: {
      ROUTING: { className: "RoutingObject", useSQLite: true },
      LEDGER: { className: "LedgerObject", useSQLite: true },
      ALERTS: { className: "AlertOutbox", useSQLite: true },
    },
  }),
  ...(args.includes("--analytics") || process.env.CG_HARNESS_ANALYTICS === "1"
    ? { analyticsEngineDatasets: { ANALYTICS: { dataset: "cognigate" } } }
    : {}),
  d1Persist: path.join(state, "d1"),
  durableObjectsPersist: path.join(state, "do"),
  cf: false,
  ...(opt("--inspector-port") ? { inspectorPort: Number(opt("--inspector-port")) } : {}),
  // The worker's console output (one JSON line per request) goes to stderr with Miniflare's own.
  // CG_WORKER_LOG=discard drops it (benchmarks: Node relaying every line costs the runtime CPU).
  handleRuntimeStdio(stdout, stderr) {
    for (const s of [stdout, stderr]) {
      if (process.env.CG_WORKER_LOG === "discard") s.resume();
      else s.pipe(process.stderr);
    }
  },
  // INFO logs every request from inside workerd through Node; benchmarks turn it down to WARN.
  log: new StderrLog(LogLevel[(process.env.CG_HARNESS_LOG ?? "info").toUpperCase()] ?? LogLevel.INFO),
});

const url = await mf.ready;
const db = bare ? null : await mf.getD1Database("DB");

if (db) await migrate(db);

// Applies the migrations not yet applied, in order, statement by statement (each file ends its
// statements with ';' and a newline). Same bookkeeping table as wrangler's.
async function migrate(db) {
  await db.exec(
    "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TEXT)",
  );
  const applied = new Set((await db.prepare("SELECT name FROM d1_migrations").all()).results.map((r) => r.name));
  const files = readdirSync(path.join(root, "migrations")).filter((f) => f.endsWith(".sql")).sort();
  for (const file of files.filter((f) => !applied.has(f))) {
    const sql = readFileSync(path.join(root, "migrations", file), "utf8")
      .split("\n")
      .filter((l) => !l.trim().startsWith("--"))
      .join("\n");
    const statements = sql.split(/;\s*\n/).map((s) => s.trim()).filter(Boolean);
    statements.push(`INSERT INTO d1_migrations (name, applied_at) VALUES ('${file}', datetime('now'))`);
    await db.batch(statements.map((s) => db.prepare(s)));
  }
}

process.stdout.write(JSON.stringify({ url: url.toString() }) + "\n");

const rl = createInterface({ input: process.stdin });
rl.on("line", async (line) => {
  let req;
  try {
    req = JSON.parse(line);
    // {"id", "scheduled": <epoch ms>} runs the cron handler once with that scheduledTime.
    if (req.scheduled !== undefined) {
      const worker = await mf.getWorker();
      await worker.scheduled({ scheduledTime: new Date(req.scheduled), cron: "* * * * *" });
      process.stdout.write(JSON.stringify({ id: req.id, rows: [] }) + "\n");
      return;
    }
    if (req.ledger !== undefined) {
      const ns = await mf.getDurableObjectNamespace("LEDGER");
      const stub = ns.get(ns.idFromName(req.ledger));
      const resp = await stub.fetch(`https://ledger${req.path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: req.body,
      });
      const text = await resp.text();
      process.stdout.write(JSON.stringify({ id: req.id, rows: [{ status: resp.status, text }] }) + "\n");
      return;
    }
    const { results } = await db.prepare(req.sql).bind(...(req.params ?? [])).all();
    process.stdout.write(JSON.stringify({ id: req.id, rows: results }) + "\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ id: req?.id ?? null, error: String(e) }) + "\n");
  }
});
rl.on("close", async () => {
  await mf.dispose();
  // The databases go (unless a restart will reuse them); a log file beside them stays.
  if (!args.includes("--keep-state")) {
    for (const dir of ["d1", "do"]) rmSync(path.join(state, dir), { recursive: true, force: true });
  }
  process.exit(0);
});
