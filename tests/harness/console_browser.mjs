// Drives the console page (GET /console) in Debian's chromium, headless, through puppeteer-core.
// Used by tests/e2e/admin/console.rs:
//
//   node tests/harness/console_browser.mjs '<json config>'
//
// The config: {url, admin_key, caller_key, tenant, trip_model, trips, breaker, parked,
// screenshots, chromium}. Prints one JSON line of what it saw; the Rust test asserts on it.
// Every Content-Security-Policy violation (a `securitypolicyviolation` event in the page or a CSP
// message on the browser's console) is collected, so the test can fail on any.
import puppeteer from 'puppeteer-core';
import { mkdirSync } from 'node:fs';

const cfg = JSON.parse(process.argv[2]);
const seen = { violations: [], page_errors: [], steps: [] };
const step = (s) => seen.steps.push(s);

const browser = await puppeteer.launch({
  executablePath: cfg.chromium || '/usr/bin/chromium',
  headless: true,
  // The test machine runs as root in a container: chromium's sandbox needs user namespaces.
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});
try {
  const page = await browser.newPage();
  await page.setViewport({ width: 1366, height: 900 });
  await page.evaluateOnNewDocument(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => {
      window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || '(inline)'}`);
    });
  });
  page.on('console', (m) => {
    if (/content.security.policy/i.test(m.text())) seen.violations.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => seen.page_errors.push(String(e)));
  const requested = new Set();
  page.on('request', (r) => requested.add(new URL(r.url()).origin));

  const resp = await page.goto(`${cfg.url}/console`, { waitUntil: 'load' });
  seen.status = resp.status();
  seen.csp = resp.headers()['content-security-policy'] || null;
  step('opened');

  // A wrong key first: a clear message, nothing kept.
  await page.type('#key', 'not-the-admin-key');
  await page.click('#enter');
  await page.waitForFunction(() => {
    const m = document.getElementById('message');
    return !m.hidden && m.textContent.length > 0;
  }, { timeout: 15000 });
  seen.wrong_key_message = await page.$eval('#message', (m) => m.textContent);
  seen.wrong_key_kept = await page.evaluate(() => sessionStorage.getItem('cognigate.adminKey'));
  seen.main_hidden_after_wrong_key = await page.$eval('#main', (m) => m.hidden);
  step('wrong key');

  // The admin key: the tenant picker, then the tenant's view.
  await page.$eval('#key', (i) => { i.value = ''; });
  await page.type('#key', cfg.admin_key);
  await page.click('#enter');
  await page.waitForSelector(`#tenant option[value="${cfg.tenant}"]`, { timeout: 15000 });
  await page.select('#tenant', cfg.tenant);
  await page.waitForFunction((m) => document.querySelector('#catalog')?.textContent.includes(m),
    { timeout: 15000 }, cfg.trip_model);
  seen.key_kept = await page.evaluate(() => sessionStorage.getItem('cognigate.adminKey'));
  seen.tenant_option = await page.$eval(`#tenant option[value="${cfg.tenant}"]`, (o) => o.textContent);
  seen.injected_element = await page.evaluate(() => document.getElementById('injected') !== null);
  seen.open_before_trip = await page.$$eval('[data-breaker] .badge', (b) => b.map((x) => x.textContent));
  step('signed in');

  // Trip the breaker through the mock while the page is open: it shows on the next refresh.
  seen.trip_statuses = [];
  for (let i = 0; i < cfg.trips; i++) {
    const r = await fetch(`${cfg.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${cfg.caller_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: cfg.trip_model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    seen.trip_statuses.push(r.status);
    await r.text();
  }
  step('tripped');
  const row = `[data-breaker="${cfg.breaker}"]`;
  await page.waitForFunction((sel) => {
    const r = document.querySelector(sel);
    return r && /open/.test(r.querySelector('.badge')?.textContent || '') && r.querySelector('.countdown');
  }, { timeout: 20000 }, row);
  const read = () => page.$eval(row, (r) => ({
    state: r.querySelector('.badge').textContent,
    left: r.querySelector('.countdown').textContent,
    until: Number(r.querySelector('.countdown').getAttribute('data-until')),
  }));
  seen.breaker = await read();
  await new Promise((r) => setTimeout(r, 2100));
  seen.breaker_later = await read();
  if (cfg.parked) {
    await page.waitForSelector(`[data-parked="${cfg.parked}"]`, { timeout: 20000 });
    seen.parked_row = await page.$eval(`[data-parked="${cfg.parked}"]`, (r) => r.textContent);
  }
  seen.timeline = await page.$$eval('#breakers .timeline li', (l) => l.map((x) => x.textContent));
  seen.rules_text = await page.$eval('#rules', (r) => r.textContent);
  seen.usage_bars = await page.$$eval('#usage svg.chart rect.bar', (b) => b.length);
  step('breaker shown');

  mkdirSync(cfg.screenshots, { recursive: true });
  await page.screenshot({ path: `${cfg.screenshots}/console.png`, fullPage: true });

  // A phone: one column, nothing wider than the screen.
  await page.setViewport({ width: 390, height: 844, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  await new Promise((r) => setTimeout(r, 300));
  seen.phone_overflow = await page.evaluate(() => document.documentElement.scrollWidth - 390);
  await page.screenshot({ path: `${cfg.screenshots}/console-phone.png`, fullPage: true });
  step('screenshots');

  seen.violations.push(...await page.evaluate(() => window.__csp));
  seen.origins = [...requested];
} catch (e) {
  seen.error = String(e && e.stack || e);
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
