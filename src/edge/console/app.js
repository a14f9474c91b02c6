// CogniGate console (issue 24). Reads the admin API with the key kept in sessionStorage.
// Every text from the API goes into the page through textContent or setAttribute, never as HTML.
'use strict';

const STORE = 'cognigate.adminKey';
const REFRESH_MS = 2000;
const $ = (id) => document.getElementById(id);
let timer = null;
let loading = false;

// ---- DOM helpers: elements from data, never markup ----
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined && v !== false) node.setAttribute(k, String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function table(head, rows, empty) {
  if (!rows.length) return el('p', { class: 'muted' }, empty);
  return el('div', { class: 'scroll' }, el('table', {},
    el('thead', {}, el('tr', {}, head.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows)));
}

function fill(id, ...nodes) {
  $(id).querySelector('.body').replaceChildren(...nodes);
}

// ---- formatting ----
function clock(ms) {
  return new Date(ms).toLocaleString(undefined, { hour12: false });
}

// The gateway's clock minus this browser's, from the answers' Date header: times left are the
// gateway's. Date has whole seconds, so a difference under 2 s is taken as none.
let skew = 0;
const now = () => Date.now() + skew;

function left(until) {
  const s = Math.max(0, Math.ceil((until - now()) / 1000));
  if (s < 60) return `${s} s left`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(s % 60).padStart(2, '0')} s left`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min left`;
}

// A countdown cell: ticks every second on its own.
function countdown(until) {
  return el('span', { class: 'countdown', 'data-until': until, title: clock(until) }, left(until));
}

function tick() {
  for (const node of document.querySelectorAll('[data-until]')) {
    node.textContent = left(Number(node.getAttribute('data-until')));
  }
}

const num = (v, d) => (v === null || v === undefined ? '–' : Number(v).toFixed(d));
// Dollars: cents from $1 up, three significant digits below (a request costs fractions of a cent).
const usd = (v) => {
  const n = Number(v || 0);
  return n >= 1 ? `$${n.toFixed(2)}` : `$${Number(n.toPrecision(3))}`;
};
// Money that may be negative (cache savings when writes cost more than reads saved).
const signedUsd = (v) => (Number(v || 0) < 0 ? `−${usd(-Number(v))}` : usd(v));

// ---- the admin API ----
class Refused extends Error {}

async function api(path) {
  const key = sessionStorage.getItem(STORE) || '';
  const resp = await fetch(path, { headers: { authorization: `Bearer ${key}` }, cache: 'no-store' });
  const served = Date.parse(resp.headers.get('date') || '');
  if (!Number.isNaN(served)) skew = Math.abs(served - Date.now()) < 2000 ? 0 : served - Date.now();
  let body = null;
  try { body = await resp.json(); } catch (_) { body = null; }
  if (resp.status === 401) throw new Refused('The admin key was refused (401).');
  if (!resp.ok) {
    const err = new Error((body && body.error && body.error.message) || `HTTP ${resp.status}`);
    err.status = resp.status;
    err.code = body && body.error && body.error.code;
    throw err;
  }
  return body;
}

const enc = encodeURIComponent;

function say(text, kind) {
  const m = $('message');
  m.textContent = text;
  m.className = kind || 'error';
  m.hidden = !text;
}

// ---- sign in / out ----
function signedIn(yes) {
  $('forget').hidden = !yes;
  $('key').hidden = yes;
  $('enter').hidden = yes;
  $('key-label').textContent = yes ? 'Admin key kept for this tab' : 'Admin key';
  $('picker').hidden = !yes;
  $('main').hidden = !yes;
  if (!yes && timer) { clearInterval(timer); timer = null; }
}

async function enter(key) {
  sessionStorage.setItem(STORE, key);
  say('');
  try {
    const tenants = (await api('/admin/v1/tenants')).data;
    const pick = $('tenant');
    const want = decodeURIComponent(location.hash.slice(1)) || pick.value;
    pick.replaceChildren(...tenants.map((t) => el('option', { value: t.id }, `${t.name} (${t.id})`)));
    if (tenants.some((t) => t.id === want)) pick.value = want;
    signedIn(true);
    $('key').value = '';
    if (!tenants.length) { say('No tenants yet: create one with POST /admin/v1/tenants.', 'info'); return; }
    await refresh();
    if (!timer) timer = setInterval(refresh, REFRESH_MS);
  } catch (e) {
    fail(e);
  }
}

function fail(e) {
  if (e instanceof Refused) {
    sessionStorage.removeItem(STORE);
    signedIn(false);
    say(e.message);
  } else {
    say(`Could not reach the admin API: ${e.message}`);
  }
}

// ---- one tenant's view ----
async function refresh() {
  const t = $('tenant').value;
  if (!t || loading) return;
  loading = true;
  const base = `/admin/v1/tenants/${enc(t)}`;
  const at = now();
  const day = 86400000;
  try {
    const [providers, models, aliases, rules, stats, events, days, byModel] = await Promise.all([
      api(`${base}/providers`), api(`${base}/models`), api(`${base}/aliases`),
      api(`${base}/routing-rules`), api(`${base}/stats`), api(`${base}/events?since=${at - day}`),
      api(`${base}/usage?from=${at - 13 * day - (at % day)}&to=${at + day}&group_by=day`),
      api(`${base}/usage?from=${at - 30 * day}&to=${at + day}&group_by=model`),
    ]);
    const explained = await explainAll(base, rules.data);
    if ($('tenant').value !== t) return;
    breakers(stats, events.data);
    routing(rules.data, explained);
    parked(stats.parked_keys || [], providers.data);
    live(stats.data);
    usage(days, byModel);
    catalog(models.data, aliases.data);
    providerList(providers.data);
    $('updated').textContent = `updated ${new Date().toLocaleTimeString(undefined, { hour12: false })}`;
    say('');
  } catch (e) {
    fail(e);
  } finally {
    loading = false;
  }
}

// Each rule's match through the explain route; null per match when the route is not there.
async function explainAll(base, rules) {
  const names = [...new Set(rules.map((r) => r.match))];
  const out = new Map();
  await Promise.all(names.map(async (name) => {
    try {
      out.set(name, await api(`${base}/explain?model=${enc(name)}`));
    } catch (e) {
      if (e instanceof Refused) throw e;
      out.set(name, { error: e });
    }
  }));
  return out;
}

function breakers(stats, events) {
  const opened = new Map();
  for (const e of events) {
    if (e.event === 'breaker.opened' && e.breaker_until) opened.set(`${e.provider}/${e.model}`, e.breaker_until);
  }
  const rows = stats.data.filter((r) => r.breaker !== 'closed').map((r) => {
    const until = r.breaker_until || opened.get(`${r.provider}/${r.model}`);
    const state = r.breaker === 'half_open' ? 'half-open' : r.breaker;
    return el('tr', { 'data-breaker': `${r.provider}/${r.model}`, class: `state-${r.breaker}` },
      el('td', {}, r.provider), el('td', {}, r.model),
      el('td', {}, el('span', { class: `badge ${r.breaker}` }, state)),
      el('td', {}, r.breaker === 'open' && until ? countdown(until) : 'next request probes'));
  });
  const closed = stats.data.length - rows.length;
  const summary = el('p', { class: 'muted' }, `${closed} of ${stats.data.length} closed.`);
  const recent = events.slice(-30).reverse().map((e) => el('li', { class: e.event.replace('.', '-') },
    el('time', { datetime: new Date(e.time).toISOString() }, clock(e.time)), ' ',
    el('strong', {}, e.event === 'breaker.opened' ? 'opened' : 'closed'), ' ',
    `${e.provider}/${e.model}`, e.reason ? ` · ${e.reason}` : '',
    e.open_ms ? ` · for ${Math.round(e.open_ms / 1000)} s` : ''));
  fill('breakers',
    table(['Provider', 'Model', 'State', 'Time left'], rows, 'Every breaker is closed.'),
    summary,
    el('h3', {}, 'Timeline, last 24 h'),
    recent.length ? el('ol', { class: 'timeline' }, recent) : el('p', { class: 'muted' }, 'No breaker events.'));
}

function entryText(entry) {
  if (typeof entry === 'string') return entry;
  if (entry && entry.spread) return `spread(${entry.spread.map((m) => `${m.model}×${m.weight}`).join(', ')})`;
  return JSON.stringify(entry);
}

function routing(rules, explained) {
  if (!rules.length) { fill('rules', el('p', { class: 'muted' }, 'No routing rules.')); return; }
  const blocks = rules.map((rule) => {
    const ex = explained.get(rule.match);
    const title = el('h3', {}, rule.match,
      rule.name && rule.name !== rule.match ? el('span', { class: 'muted' }, ` (rule ${rule.name})`) : '',
      rule.priority ? el('span', { class: 'muted' }, ` priority ${rule.priority}`) : '');
    const when = rule.when ? el('p', { class: 'when' }, `when ${JSON.stringify(rule.when)}`) : null;
    let body;
    // A conditional rule serves only requests its `when` holds for; explain (no request facts)
    // shows the request that names the match and nothing else, so such a rule shows its entries.
    if (ex && !ex.error && !rule.when) {
      const cands = ex.candidates || [];
      body = table(['#', 'Entry', 'Resolves to now', 'Decision'], rule.chain.flatMap((entry, i) => {
        const here = cands.filter((c) => c.position === i);
        const row = (c) => el('tr', { 'data-position': i }, el('td', {}, i), el('td', {}, entryText(entry)),
          el('td', {}, c ? `${c.model} @ ${c.provider}` : 'nothing now (dead position)'),
          el('td', {}, c ? decision(c) : '–'));
        return here.length ? here.map(row) : [row(null)];
      }), 'Empty chain.');
    } else {
      const why = rule.when ? 'Conditional: its entries as written.'
        : ex && ex.error && ex.error.status === 404 && ex.error.code === 'not_found'
          ? 'explain is not available on this gateway; showing the entries.'
          : `explain failed: ${ex && ex.error ? ex.error.message : 'no answer'}`;
      body = el('div', {}, el('p', { class: 'muted' }, why),
        el('ol', { class: 'chain', start: 0 }, rule.chain.map((e) => el('li', {}, entryText(e)))));
    }
    return el('article', { class: 'rule', 'data-rule': rule.name || rule.match }, title, when, body);
  });
  fill('rules', ...blocks);
}

function decision(c) {
  const span = el('span', { class: `badge ${c.decision}` }, c.decision);
  const parts = [span];
  if (c.reason) parts.push(` ${c.reason}`);
  if (c.until) parts.push(' · ', countdown(c.until));
  if (c.score !== null && c.score !== undefined) parts.push(` · score ${num(c.score, 3)}`);
  return el('span', {}, parts);
}

function lastFour(providers) {
  const map = new Map();
  for (const p of providers) for (const k of p.keys) map.set(`${p.name}/${k.id}`, k);
  return map;
}

function keyLabel(k) {
  if (k.secret) return `${k.id} (secret ${k.secret})`;
  return k.last4 ? `${k.id} …${k.last4}` : k.id;
}

function parked(list, providers) {
  const keys = lastFour(providers);
  fill('parked', table(['Provider', 'Key', 'Free in', 'Free at'], list.map((p) => {
    const k = keys.get(`${p.provider}/${p.key}`);
    return el('tr', { 'data-parked': `${p.provider}/${p.key}` }, el('td', {}, p.provider),
      el('td', {}, k ? keyLabel(k) : p.key), el('td', {}, countdown(p.until)), el('td', {}, clock(p.until)));
  }), 'No key is parked.'));
}

function live(rows) {
  const seen = rows.filter((r) => r.requests > 0);
  fill('stats', table(['Model', 'Provider', 'Requests', 'Success', 'Latency', 'TTFB', 'Bar'], seen.map((r) => {
    const ok = r.success_rate === null ? null : r.success_rate * 100;
    return el('tr', { 'data-model': r.model }, el('td', {}, r.model), el('td', {}, r.provider),
      el('td', { class: 'n' }, r.requests), el('td', { class: 'n' }, ok === null ? '–' : `${ok.toFixed(1)} %`),
      el('td', { class: 'n' }, r.latency_ms === null ? '–' : `${num(r.latency_ms, 0)} ms`),
      el('td', { class: 'n' }, r.ttfb_ms === null ? '–' : `${num(r.ttfb_ms, 0)} ms`),
      el('td', {}, meter(ok)));
  }), 'No model has served traffic yet (stats come from live requests).'));
}

function meter(pct) {
  const w = pct === null ? 0 : Math.max(0, Math.min(100, pct));
  return svg('svg', { class: 'meter', viewBox: '0 0 100 8', preserveAspectRatio: 'none', role: 'img' },
    svg('rect', { x: 0, y: 0, width: 100, height: 8, class: 'track' }),
    svg('rect', { x: 0, y: 0, width: w, height: 8, class: w >= 95 ? 'good' : w >= 80 ? 'warn' : 'bad' }));
}

// The last 14 UTC days, oldest first, with zeros where nothing was recorded.
function fourteenDays(groups) {
  const byDay = new Map(groups.filter((d) => d.group).map((d) => [d.group, d]));
  const out = [];
  for (let i = 13; i >= 0; i--) {
    const day = new Date(now() - i * 86400000).toISOString().slice(0, 10);
    out.push(byDay.get(day) || { group: day, requests: 0, cost_usd: 0 });
  }
  return out;
}

function usage(days, byModel) {
  const data = fourteenDays(days.data);
  const max = Math.max(1e-12, ...data.map((d) => d.cost_usd));
  const maxReq = Math.max(1, ...data.map((d) => d.requests));
  const W = 600; const H = 180; const pad = 28;
  const bw = data.length ? (W - pad) / data.length : 0;
  const chart = svg('svg', { class: 'chart', viewBox: `0 0 ${W} ${H + 24}`, role: 'img', 'aria-label': 'cost and requests per day' },
    svg('line', { x1: pad, y1: H, x2: W, y2: H, class: 'axis' }));
  data.forEach((d, i) => {
    const h = (d.cost_usd / max) * (H - 20);
    const x = pad + i * bw;
    const bar = svg('rect', { x: x + 2, y: H - h, width: Math.max(1, bw - 4), height: h, class: 'bar' });
    bar.append(svg('title', {}, `${d.group}: ${usd(d.cost_usd)}, ${d.requests} requests, ` +
      `cache ${d.cache_read_tokens || 0} read / ${d.cache_write_tokens || 0} written, saved ${signedUsd(d.cache_savings_usd)}`));
    chart.append(bar);
    const ry = H - (d.requests / maxReq) * (H - 20);
    chart.append(svg('circle', { cx: x + bw / 2, cy: ry, r: 3, class: 'dot' }));
    if (i % 2 === 1 || i === data.length - 1) {
      chart.append(svg('text', { x: x + bw / 2, y: H + 16, class: 'label' }, d.group.slice(5)));
    }
  });
  chart.append(svg('text', { x: 0, y: 12, class: 'label start' }, usd(max > 1e-12 ? max : 0)));
  const t = days.total;
  fill('usage',
    el('p', {}, `Last 14 days: ${t.requests} requests, ${t.prompt_tokens} prompt and ${t.completion_tokens} completion tokens, ${usd(t.cost_usd)}.`),
    el('p', { class: 'cache-savings' }, `Prompt cache: ${t.cache_read_tokens} tokens read, ${t.cache_write_tokens} written, ` +
      `net saving ${signedUsd(t.cache_savings_usd)} (reads' discount minus writes' premium).`),
    t.requests ? chart : el('p', { class: 'muted' }, 'No usage recorded in the last 14 days.'),
    el('p', { class: 'legend muted' }, 'Bars: cost per UTC day. Dots: requests.'),
    table(['Model (30 days)', 'Requests', 'Tokens in', 'Tokens out', 'Cache read', 'Cache written', 'Cost', 'Cache saved'], byModel.data.map((g) =>
      el('tr', {}, el('td', {}, g.group === null ? '(nothing served)' : g.group), el('td', { class: 'n' }, g.requests),
        el('td', { class: 'n' }, g.prompt_tokens), el('td', { class: 'n' }, g.completion_tokens),
        el('td', { class: 'n' }, g.cache_read_tokens), el('td', { class: 'n' }, g.cache_write_tokens),
        el('td', { class: 'n' }, usd(g.cost_usd)), el('td', { class: 'n' }, signedUsd(g.cache_savings_usd)))), 'No usage by model.'));
}

function catalog(models, aliases) {
  fill('catalog',
    table(['Model', 'Provider', 'Upstream', 'Context', 'In $/Mtok', 'Out $/Mtok', 'Capabilities'], models.map((m) =>
      el('tr', {}, el('td', {}, m.id), el('td', {}, m.provider), el('td', {}, m.upstream_model),
        el('td', { class: 'n' }, m.context_window), el('td', { class: 'n' }, m.input_price_per_mtok),
        el('td', { class: 'n' }, m.output_price_per_mtok), el('td', {}, (m.capabilities || []).join(', ')))), 'No models.'),
    el('h3', {}, 'Aliases'),
    table(['Alias', 'Pin', 'Rank by', 'Tier', 'Capabilities'], aliases.map((a) =>
      el('tr', {}, el('td', {}, a.name), el('td', {}, a.pin || '–'), el('td', {}, a.rank_by || '–'),
        el('td', {}, a.cost_tier || '–'), el('td', {}, (a.capabilities || []).join(', ')))), 'No aliases.'));
}

function providerList(providers) {
  fill('providers', table(['Provider', 'Kind', 'Base URL', 'Keys (id, last four)', 'Strategy', 'rpm'], providers.map((p) =>
    el('tr', {}, el('td', {}, p.name), el('td', {}, p.kind), el('td', { class: 'url' }, p.base_url),
      el('td', {}, p.keys.map(keyLabel).join(', ')), el('td', {}, p.key_strategy),
      el('td', { class: 'n' }, p.rpm === null || p.rpm === undefined ? '–' : p.rpm))), 'No providers.'));
}

// ---- wiring ----
document.addEventListener('DOMContentLoaded', () => {
  $('login').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const key = $('key').value.trim();
    if (!key) { say('Paste the admin key first.'); return; }
    enter(key);
  });
  $('forget').addEventListener('click', () => {
    sessionStorage.removeItem(STORE);
    signedIn(false);
    say('The key is forgotten.', 'info');
  });
  $('tenant').addEventListener('change', () => {
    history.replaceState(null, '', `#${enc($('tenant').value)}`);
    refresh();
  });
  setInterval(tick, 1000);
  const saved = sessionStorage.getItem(STORE);
  if (saved) enter(saved);
});
