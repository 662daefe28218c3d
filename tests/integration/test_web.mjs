// test_web.mjs - the web page in a real browser: Debian's chromium, headless,
// driven by playwright-core (from npm; never a downloaded browser), against a
// real jprof-server fed by the real jprof-agent (host mode) profiling real
// JVMs with known problems (tests/java/JprofWorkload.java: hot method,
// allocation, contended monitor, parking; tests/java/Deadlocks.java: a
// monitor cycle and a ReentrantLock cycle), plus a few services ingested
// through the API for exact cases (a 20,000-node tree, a baseline to
// compare with, a service with a status and no data).
//
// Run by test_web.sh from the build dir (it installs playwright-core with
// `npm ci` and passes JPROF_WEB_NODE_MODULES). Screenshots of every view go to
// JPROF_WEB_SHOTS (default tests/integration/web-test.d/shots). Prints
// "PASS:"/"FAIL:" lines and "N passed, N failed"; exit 0 pass, 1 fail.
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const BUILD = process.cwd();
const SRCDIR = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const require = createRequire(path.join(process.env.JPROF_WEB_NODE_MODULES || path.join(BUILD, 'tests/integration/web-test.d/node_modules'), 'x.js'));
const { chromium } = require('playwright-core');
const CHROMIUM = process.env.JPROF_CHROMIUM || '/usr/bin/chromium';
const CLASSES = process.env.JPROF_WORKLOAD_CLASSES || path.join(BUILD, 'tests/java/classes');
const SHOTS = process.env.JPROF_WEB_SHOTS || path.join(BUILD, 'tests/integration/web-test.d/shots');
const WINDOW = 5;
const NS = 1_000_000_000n;
const T = { read: 'web-read-0123456789abcdef', ingest: 'web-ingest-0123456789abcd', other: 'web-other-0123456789abcde' };

let passed = 0;
const failures = [];
function check(cond, what, detail) {
  if (cond) {
    passed++;
    console.log('PASS: ' + what);
  } else {
    failures.push(what);
    console.log('FAIL: ' + what + (detail !== undefined ? '  ' + String(typeof detail === 'string' ? detail : JSON.stringify(detail)).slice(0, 1500) : ''));
  }
  return cond;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(fn, secs, step = 500) {
  const end = Date.now() + secs * 1000;
  let last;
  while (Date.now() < end) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = undefined;
    }
    await sleep(step);
  }
  return last;
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
}

const procs = [];
function run(tmp, args, log, opts = {}) {
  const out = fs.openSync(path.join(tmp, log), 'a');
  const p = spawn(args[0], args.slice(1), { stdio: ['ignore', out, out], cwd: tmp, ...opts });
  procs.push(p);
  return p;
}

async function startServer(tmp, name, extra) {
  const port = await freePort();
  const p = run(tmp, [path.join(BUILD, 'jprof-server'), '--listen', '127.0.0.1:' + port, '--data-dir', path.join(tmp, name), '--tokens', path.join(tmp, 'tokens'), ...extra], name + '.log');
  const base = 'http://127.0.0.1:' + port;
  const ok = await waitFor(async () => (await fetch(base + '/healthz')).ok, 10, 100);
  return { p, base, ok };
}

async function api(base, p, token = T.read) {
  const r = await fetch(base + '/api/v1/' + p, { headers: { Authorization: 'Bearer ' + token } });
  return { status: r.status, headers: r.headers, body: await r.json() };
}

async function ingest(base, batch) {
  const r = await fetch(base + '/api/v1/ingest', { method: 'POST', headers: { Authorization: 'Bearer ' + T.ingest, 'Content-Type': 'application/json' }, body: JSON.stringify(batch, (k, v) => (typeof v === 'bigint' ? Number(v) : v)) });
  return r.status;
}

const nowNs = () => BigInt(Date.now()) * 1_000_000n;

/* Two class histograms of one pod ten minutes apart, as the agent uploads
 * them: web.Session grows by `leak` objects (144 bytes each), the rest stays. */
function heapBatch(id, t, n) {
  const classes = [
    { name: '[B', module: 'java.base@17', instances: 5000, bytes: 4000000 },
    { name: 'web.Session', module: '', instances: n, bytes: n * 144 },
    { name: 'java.lang.String', module: 'java.base@17', instances: 3000, bytes: 72000 },
  ].sort((a, b) => b.bytes - a.bytes);
  const total = (k) => classes.reduce((s, c) => s + c[k], 0);
  return { batch_id: id, collector: { id: 'web-test' }, heap_histograms: [{
    target: { namespace: 'demo', service: 'heapsvc', pod: 'heapsvc-1' }, time: t,
    histogram: { time_ns: t, took_ns: 42000000, all: false, total_instances: total('instances'), total_bytes: total('bytes'),
      classes_total: classes.length, undercounted: 0, classes } }] };
}

/* A tree of 20,010 nodes where nearly every node is drawn (the worst case
 * for the canvas): 10 roots, each with 100 chains 20 frames deep. */
function bigBatch(start) {
  const frames = [], stacks = [], rows = [];
  for (let r = 0; r < 10; r++) {
    frames.push('big.Root' + r + '.run');
    const ri = frames.length - 1;
    for (let c = 0; c < 100; c++) {
      const st = [ri];
      for (let d = 0; d < 20; d++) {
        frames.push('big.Chain' + r + '_' + c + '.level' + d);
        st.push(frames.length - 1);
      }
      stacks.push(st);
      const w = 1 + ((r * 7 + c) % 5);
      rows.push([stacks.length - 1, w, w * 10_000_000]);
    }
  }
  return {
    batch_id: 'web-big-1', collector: { id: 'web-test' }, frames, stacks,
    windows: [{ target: { namespace: 'demo', service: 'big', pod: 'big-1' }, kind: 'cpu', start, end: start + 60n * NS, period_ns: 10_000_000, events: rows.length, rows }],
  };
}

/* The compare case: the baseline spends its time in Tax.compute, now in Cart.add. */
function shapeBatch(id, start, tax, cart) {
  return {
    batch_id: id, collector: { id: 'web-test' },
    frames: ['java.lang.Thread.run', 'com.shop.Checkout.price', 'com.shop.Tax.compute', 'com.shop.Cart.add'],
    stacks: [[0, 1, 2], [0, 1, 3]],
    windows: [{ target: { namespace: 'demo', service: 'shape', pod: 'shape-1' }, kind: 'cpu', start, end: start + 60n * NS, period_ns: 10_000_000, events: tax + cart,
      rows: [[0, tax, tax * 10_000_000], [1, cart, cart * 10_000_000]] }],
  };
}

async function main() {
  for (const bin of ['jprof-server', 'jprof-agent']) {
    if (!fs.existsSync(path.join(BUILD, bin))) return skipOrFail('not built: ' + bin);
  }
  if (!fs.existsSync(CHROMIUM)) return skipOrFail('no chromium at ' + CHROMIUM + ' (scripts/install-deps installs it)');
  if (!fs.existsSync(path.join(CLASSES, 'shop', 'JprofWorkload.class'))) return skipOrFail('test workload not compiled (make jprof-workload)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'web-test-'));
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.writeFileSync(path.join(tmp, 'tokens'), `${T.read} read *\n${T.ingest} ingest *\n${T.other} read other\n`);
  fs.writeFileSync(path.join(tmp, 'ingest.tok'), T.ingest + '\n');
  let browser;
  try {
    browser = await testAll(tmp);
  } finally {
    if (browser) await browser.close().catch(() => {});
    for (const p of procs.reverse()) {
      if (p.exitCode === null) {
        p.kill('SIGTERM');
        await Promise.race([new Promise((r) => p.once('exit', r)), sleep(5000)]);
        if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
      }
    }
    if (failures.length) {
      for (const f of fs.readdirSync(tmp).filter((x) => x.endsWith('.log'))) {
        console.log('---- ' + f);
        console.log(fs.readFileSync(path.join(tmp, f), 'utf8').slice(-2500));
      }
    }
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failures.length} failed`);
  return failures.length ? 1 : 0;
}

function skipOrFail(msg) {
  if (process.env.CI === 'true') {
    console.log('FAIL: ' + msg);
    console.log('0 passed, 1 failed');
    return 1;
  }
  console.log('SKIP: ' + msg);
  return 77;
}

async function testAll(tmp) {
  /* ---- the servers, the JVMs, the agent ---- */
  const srv = await startServer(tmp, 'server', []);
  if (!check(srv.ok, 'jprof-server starts (the page compiled in)')) return null;
  const base = srv.base;
  /* ---- services made through the API ---- */
  const now = nowNs();
  check(await ingest(base, bigBatch(now - 120n * NS)) === 200, 'a 20,000-node service is ingested');
  check(await ingest(base, shapeBatch('web-shape-old', now - 40n * 60n * NS, 90, 10)) === 200 &&
    await ingest(base, shapeBatch('web-shape-new', now - 5n * 60n * NS, 20, 80)) === 200, 'the baseline and the current shape are ingested');
  check(await ingest(base, { batch_id: 'web-empty', collector: { id: 'web-test' }, statuses: [{ target: { namespace: 'demo', service: 'empty', pod: 'empty-1' }, time: now - 60n * NS, state: 'skipped', reason: 'unsupported_jvm', message: 'not a HotSpot JVM' }] }) === 200,
  'a service with a status and no data is ingested');
  check(await ingest(base, heapBatch('web-heap-1', now - 15n * 60n * NS, 1000)) === 200 &&
    await ingest(base, heapBatch('web-heap-2', now - 5n * 60n * NS, 61000)) === 200, 'two class histograms are ingested');

  /* ---- headers: every answer ---- */
  const page0 = await fetch(base + '/');
  const csp = page0.headers.get('content-security-policy') || '';
  check(page0.status === 200 && /script-src 'self'/.test(csp) && !/unsafe-inline|unsafe-eval/.test(csp) && /frame-ancestors 'none'/.test(csp),
    'the page has a CSP without unsafe-inline/unsafe-eval, with frame-ancestors none', csp);
  check(page0.headers.get('x-content-type-options') === 'nosniff', 'the page says nosniff');
  const html = await page0.text();
  check(!/<script(?![^>]*\bsrc=)[^>]*>/i.test(html) && !/\sstyle=|<style/i.test(html) && !/\son[a-z]+=/i.test(html), 'no inline script, style or handler in index.html');
  for (const f of ['app.js', 'flame.js', 'views.js', 'util.js', 'app.css']) {
    const src = fs.readFileSync(path.join(SRCDIR, 'web', f), 'utf8');
    check(!/innerHTML|eval\(|new Function|document\.write/.test(src), f + ': no innerHTML, eval or document.write');
  }
  const js = await fetch(base + '/app.js');
  const etag = js.headers.get('etag');
  check(js.headers.get('content-type').startsWith('text/javascript') && etag && js.headers.get('content-security-policy'), 'app.js: JavaScript type, ETag, CSP');
  const again = await fetch(base + '/app.js', { headers: { 'If-None-Match': etag } });
  check(again.status === 304, 'a known ETag gets 304', again.status);
  check((await fetch(base + '/app.css')).headers.get('content-type').startsWith('text/css'), 'app.css: CSS type');
  const unauth = await fetch(base + '/api/v1/services');
  check(unauth.status === 401 && unauth.headers.get('x-content-type-options') === 'nosniff', 'JSON answers carry nosniff too');
  check((await fetch(base + '/nothing.js')).status === 404, 'an unknown file is 404');

  /* ---- the browser ---- */
  const browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    /* playwright gives every launch a fresh, temporary --user-data-dir */
  });
  const pageErrors = [];
  async function newPage(width = 1280, height = 800) {
    const ctx = await browser.newContext({ viewport: { width, height }, acceptDownloads: true });
    const page = await ctx.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && !/status of 40[13]/.test(m.text()) && pageErrors.push(m.text()));
    return { ctx, page };
  }
  const url = (q) => base + '/?' + new URLSearchParams(q).toString();
  const done = (page) => page.waitForSelector('#view[data-state=done]', { timeout: 30000 });
  async function login(page, token = T.read) {
    await page.fill('#token', token);
    await page.press('#token', 'Enter');
  }
  async function goto(page, q) {
    await page.goto(url(q));
    await done(page);
  }
  const text = (page, sel) => page.locator(sel).first().innerText().catch(() => '');
  const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, name + '.png'), fullPage: true });

  {
    /* the flame graph's speed first, before the JVMs load the machine */
    const { ctx: c0, page } = await newPage();
    await page.goto(base + '/');
    await login(page);
  /* the largest tree: 20,000 nodes */
  await goto(page, { namespace: 'demo', service: 'big', view: 'cpu', max_nodes: '20000' });
  await page.waitForSelector('canvas.flame-canvas');
  const perf = await page.evaluate(() => {
    const view = document.querySelector('.flame');
    const loads = [], draws = [];
    /* the whole client side: JSON tree -> nodes -> colours -> layout -> drawing */
    const json = window.JP.lastFlame.tree;
    /* 7 runs, up to 21 while none was under 100 ms (a busy neighbour on a
       shared core only ever adds time) */
    for (let i = 0; i < 21 && (i < 7 || Math.min(...loads) >= 100); i++) {
      const t0 = performance.now();
      window.JP.lastFlame.view.setData(json, false);
      loads.push(performance.now() - t0);
      draws.push(window.JP.lastFlameRender.ms);
    }
    loads.sort((a, b) => a - b);
    draws.sort((a, b) => a - b);
    const mid = loads.length >> 1;
    return { runs: loads.length, nodes: window.JP.lastFlameLoad.nodes, drawn: window.JP.lastFlameRender.drawn, min: loads[0], median: loads[mid], max: loads[loads.length - 1], drawMin: draws[0], drawMedian: draws[mid], view: !!view };
  });
  console.log('PERF: flame tree of ' + perf.nodes + ' nodes (' + perf.drawn + ' drawn), ' + perf.runs + ' runs: build+render best ' + perf.min.toFixed(1) + ' ms, median ' +
    perf.median.toFixed(1) + ' ms, worst ' + perf.max.toFixed(1) + ' ms; layout+draw best ' + perf.drawMin.toFixed(1) + ' ms, median ' + perf.drawMedian.toFixed(1) + ' ms; load average ' + os.loadavg()[0].toFixed(1));
  fs.writeFileSync(path.join(SHOTS, 'perf.json'), JSON.stringify(perf) + '\n');
  /* the best run: other work on the machine only ever adds time */
  check(perf.nodes >= 20000 && perf.drawn >= 15000 && perf.min < 100, 'a 20,000-node tree renders in under 100 ms', perf);
  await shot(page, 'big');

    await c0.close();
  }
  /* with its socket and file I/O: the agent records kind io too */
  const wl = run(tmp, ['java', '-Xmx256m', '-Dworkload.io=true', '-cp', CLASSES, 'shop.JprofWorkload', '400'], 'wl.log');
  execFileSync('javac', ['-d', path.join(tmp, 'dl'), path.join(SRCDIR, 'tests/java/Deadlocks.java')]);
  const dl = run(tmp, ['java', '-Xmx64m', '-cp', path.join(tmp, 'dl'), 'live.Deadlocks', '400'], 'dl.log');
  const until = new Date(Date.now() + 3600e3).toISOString().replace(/\.\d+Z$/, 'Z');
  fs.writeFileSync(path.join(tmp, 'agent.conf'),
    `pid ${wl.pid} jprof.io/threads=high jprof.io/events=cpu,alloc,lock,park,io\n` +
    `pid ${dl.pid} jprof.io/threads=high jprof.io/events=cpu jprof.io/profile-until=${until}\n`);
  run(tmp, [path.join(BUILD, 'jprof-agent'), '--mode', 'host', '--config', path.join(tmp, 'agent.conf'), '--namespace', 'demo',
    '--window', WINDOW + 's', '--scan-interval', '1s', '--server', base, '--token-file', path.join(tmp, 'ingest.tok'), '--metrics-listen', '127.0.0.1:0'], 'agent.log');

  {
    const { ctx: c0, page } = await newPage();
    await page.goto(base + '/');
    await login(page);
  /* an empty service */
  await goto(page, { namespace: 'demo', service: 'empty', view: 'cpu' });
  check(/Empty: no cpu data/.test(await page.innerText('#view')) && (await page.locator('canvas').count()) === 0, 'an empty service: cpu says empty');
  await goto(page, { namespace: 'demo', service: 'empty', view: 'overview' });
  check(/unsupported_jvm/.test(await page.innerText('#view')), 'an empty service: its status reason shows');
  await shot(page, 'empty');

  /* compare: a baseline range of the same service */
  await goto(page, { namespace: 'demo', service: 'shape', view: 'cpu', from: '-10m', base_from: '-45m', base_to: '-30m' });
  await page.waitForSelector('table[data-table=diff-top]');
  const diffRows = await page.locator('table[data-table=diff-top] tbody tr').allInnerTexts();
  const cart = diffRows.find((r) => r.includes('com.shop.Cart.add')) || '';
  const tax = diffRows.find((r) => r.includes('com.shop.Tax.compute')) || '';
  check(/\+70\.00 pp/.test(cart) && /−70\.00 pp/.test(tax), 'compare: Cart.add grew by 70 pp, Tax.compute shrank by 70 pp', diffRows);
  check(/Red frames/.test(await page.innerText('#view')) && (await page.locator('canvas.flame-canvas').count()) === 1, 'compare: a diff flame graph');
  await shot(page, 'compare');
    await c0.close();
  }
  /* out of scope: a token for namespace "other" */
  const { ctx: c3, page: p3 } = await newPage();
  await p3.goto(url({ namespace: 'demo', service: 'JprofWorkload', view: 'cpu' }));
  await done(p3);
  await login(p3, T.other);
  await done(p3);
  const t403 = await p3.innerText('#view');
  check(/Forbidden/.test(t403) && /outside this token's scope/.test(t403) && (await p3.locator('canvas').count()) === 0 && !t403.includes('computeTotals'),
    'out of scope: "Forbidden ... outside this token\'s scope", no data', t403.slice(0, 500));
  await p3.screenshot({ path: path.join(SHOTS, 'forbidden.png') });
  await c3.close();

  /* a partial answer (a tiny --query-budget) and --web-dir from disk */
  const srv2 = await startServer(tmp, 'server2', ['--query-budget', '1ns', '--web-dir', path.join(SRCDIR, 'web')]);
  check(srv2.ok, 'a second server with --query-budget 1ns and --web-dir');
  await ingest(srv2.base, shapeBatch('web-shape-p', now - 5n * 60n * NS, 20, 80));
  const disk = await (await fetch(srv2.base + '/app.js')).text();
  check(disk === fs.readFileSync(path.join(SRCDIR, 'web/app.js'), 'utf8'), '--web-dir serves the files from disk');
  const { ctx: c4, page: p4 } = await newPage();
  await p4.goto(srv2.base + '/?namespace=demo&service=shape&view=cpu');
  await login(p4);
  await done(p4);
  check(/Partial answer/.test(await p4.innerText('#view')), 'a partial answer says so, with the reason', await p4.innerText('#view'));
  await p4.screenshot({ path: path.join(SHOTS, 'partial.png') });
  await c4.close();

  /* ---- wait for the agent's data ---- */
  const topOf = async (svc, kind) => {
    const r = await api(base, `top?namespace=demo&service=${svc}&kind=${kind}&from=-1h&limit=5`);
    return r.body.rows && r.body.rows.length ? r.body.rows[0].name : null;
  };
  const hot = { cpu: 'shop.Checkout.computeTotals', alloc: 'shop.Catalog', lock: 'shop.Inventory.reserve' };
  for (const [k, want] of Object.entries(hot)) {
    const got = await waitFor(async () => ((await topOf('JprofWorkload', k)) || '').startsWith(want), 3 * WINDOW + 20);
    check(got, `agent data: ${k} on the server, ${want} on top`, await topOf('JprofWorkload', k));
  }
  /* io: the agent's JFR settings asked for the I/O events (10 ms threshold):
   * Orders.awaitReply waits 20 ms for its peer on every read */
  const ioTree = async () => JSON.stringify((await api(base, 'flamegraph?namespace=demo&service=JprofWorkload&kind=io&from=-1h')).body);
  const io = await waitFor(async () => (await ioTree()).includes('shop.Orders.awaitReply'), 3 * WINDOW + 20);
  check(io, 'agent data: io on the server, the socket wait of Orders.awaitReply in it', (await ioTree()).slice(0, 300));
  const cycles = await waitFor(async () => {
    const t = JSON.stringify((await api(base, 'deadlocks?namespace=demo&service=Deadlocks&from=-1h')).body);
    return ['mon-deadlock-1', 'mon-deadlock-2', 'rl-deadlock-1', 'rl-deadlock-2'].every((n) => t.includes(n));
  }, 3 * WINDOW + 25);
  check(cycles, 'agent data: both deadlock cycles on the server');
  const snap = await waitFor(async () => {
    const t = JSON.stringify((await api(base, 'threads?namespace=demo&service=JprofWorkload')).body);
    return t.includes('checkout-0') && t.includes('"cpu_pct":') && t.includes('inventory-');
  }, 3 * WINDOW + 20);
  check(snap, 'agent data: thread snapshots with CPU%');

  const { ctx: c1, page } = await newPage();
  /* no token, then a wrong one: words, no data */
  await page.goto(base + '/?namespace=demo&service=JprofWorkload&view=cpu');
  await done(page);
  check(await page.locator('input[type=password]#token').count() === 1 && (await text(page, 'label[for=token]')) === 'Token', 'a password input labelled Token');
  await login(page, 'not-a-token');
  await done(page);
  await page.waitForTimeout(200);
  const body401 = await page.innerText('body');
  check(/Unauthorized/.test(body401) && (await page.locator('canvas').count()) === 0 && !body401.includes('computeTotals'),
    'a rejected token: "Unauthorized", and no stack data', body401.slice(0, 600));
  await shot(page, 'unauthorized');
  check(!page.url().includes('not-a-token') && (await c1.cookies()).length === 0, 'the token is neither in the URL nor in a cookie');
  check(await page.evaluate(() => sessionStorage.getItem('jprof.token')) === 'not-a-token', 'the token is kept in sessionStorage');

  /* overview */
  await login(page);
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'overview' });
  const ov = await page.innerText('#view');
  check(/Pods and JVMs/.test(ov) && /vm:|JprofWorkload/.test(ov) && /continuous \(jfr\)/.test(ov) && /Ingestion health/.test(ov) && /Retention/.test(ov) && /Keeps 7 days/.test(ov),
    'overview: pods and JVMs, enablement, ingestion health, retention', ov.slice(0, 800));
  check(/cpu[\s\S]*(s ago)/.test(await text(page, 'table[data-table=kinds]')), 'overview: last data per kind');
  check(await page.locator('time[title^="UTC "]').count() > 0, 'times are local with UTC on hover');
  const thCount = await page.locator('table[data-table=targets] thead th[scope=col]').count();
  check(thCount >= 5, 'tables are real tables with header cells', thCount);
  await shot(page, 'overview');
  await goto(page, { view: 'overview' });
  const svcTable = await text(page, 'table[data-table=services]');
  check(svcTable.includes('JprofWorkload') && svcTable.includes('Deadlocks') && svcTable.includes('big'), 'overview without a service lists the services', svcTable);
  await goto(page, { namespace: 'demo', service: 'Deadlocks', view: 'overview' });
  check(/temporary until .+ \(jfr\)/.test(await text(page, 'table[data-table=targets]')), 'overview: a temporary window says until when, from the latest status', await text(page, 'table[data-table=targets]'));
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'overview' });
  check(/continuous \(jfr\)/.test(await text(page, 'table[data-table=targets]')), 'overview: continuous profiling says so', await text(page, 'table[data-table=targets]'));

  /* CPU */
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'cpu' });
  await page.waitForSelector('canvas.flame-canvas');
  const firstTop = await text(page, 'table[data-table=top] tbody tr');
  check(firstTop.includes('shop.Checkout.computeTotals') || firstTop.includes('shop.Crypto.hashLoop'), 'cpu: the hot method tops the table', firstTop);
  const topHead = await text(page, 'table[data-table=top] thead');
  check(/Self samples/.test(topHead) && /Total samples/.test(topHead) && /Self %/.test(topHead), 'cpu: self/total in samples and in the unit', topHead);
  const busy = await text(page, 'table[data-table=busy]');
  check(busy.includes('checkout-0') && /exact thread CPU|cumulative|RUNNABLE/.test(await page.innerText('#view')), 'cpu: busy threads with their confidence', busy.slice(0, 400));
  /* the agent sends each frame's kind: the page colours server data as jprof-top does */
  {
    const fg = await api(base, 'flamegraph?namespace=demo&service=JprofWorkload&kind=cpu&from=-1h');
    const types = new Map();
    const walk = [fg.body.tree];
    while (walk.length) {
      const n = walk.pop();
      if (n.type) types.set(n.type, (types.get(n.type) || 0) + 1);
      for (const c of n.children || []) walk.push(c);
    }
    check(fg.status === 200 && (types.get('jit') || 0) + (types.get('inlined') || 0) > 0, 'cpu: the server answers frame kinds from the agent (jit/inlined frames)', [...types]);
  }
  await shot(page, 'cpu');
  await page.screenshot({ path: path.join(SHOTS, 'cpu-viewport.png') });

  /* search */
  await page.fill('.flame-tools input[type=search]', 'computeTotals|hashLoop');
  await page.waitForFunction(() => document.querySelector('.match-info').dataset.share !== undefined && /Matched/.test(document.querySelector('.match-info').textContent), null, { timeout: 5000 });
  const share = parseFloat(await page.getAttribute('.match-info', 'data-share'));
  check(share > 0.5, 'search: a regex shows the matched share', share);
  check(new URL(page.url()).searchParams.get('search') === 'computeTotals|hashLoop', 'search: kept in the URL');
  await page.click('table[data-table=top] tbody tr:nth-child(2)');
  const rowSearch = await page.inputValue('.flame-tools input[type=search]');
  check(/^\^.*\$$/.test(rowSearch), 'clicking a top row searches its frame', rowSearch);
  await page.fill('.flame-tools input[type=search]', '');
  await page.press('.flame-tools input[type=search]', 'Enter');

  /* zoom: click the second row, breadcrumb back out; the top table follows */
  const box = await page.locator('canvas.flame-canvas').boundingBox();
  await page.mouse.click(box.x + box.width * 0.4, box.y + 18 * 3 + 9);
  const crumbs = await page.locator('.crumbs .crumb').count();
  const topHeading = await text(page, '.top-box h3');
  check(crumbs >= 2 && /under/.test(topHeading), 'zoom: a click zooms, the breadcrumb and the top table follow', [crumbs, topHeading]);
  await page.mouse.move(box.x + 20, box.y + 18 * 3 + 9);
  const tip = await text(page, '.tip');
  check(/Total/.test(tip) && /Self/.test(tip) && /samples/.test(tip), 'tooltip: self and total in units and samples', tip);
  await page.click('.crumbs .crumb >> nth=0');
  check(await page.locator('.crumbs .crumb').count() === 1 && /all data/.test(await text(page, '.top-box h3')), 'zoom: the breadcrumb zooms out');
  /* keyboard: down twice, Enter zooms, Escape zooms out */
  await page.focus('canvas.flame-canvas');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Enter');
  const kz = await page.locator('.crumbs .crumb').count();
  await page.keyboard.press('Escape');
  check(kz === 3 && (await page.locator('.crumbs .crumb').count()) === 2, 'keyboard: arrows select, Enter zooms, Escape zooms out', kz);
  await page.keyboard.press('Home');

  /* reverse */
  await page.click('button.mode[data-mode=reverse]');
  await page.waitForSelector('canvas[data-flame=reverse]');
  const rbox = await page.locator('canvas.flame-canvas').boundingBox();
  await page.mouse.move(rbox.x + 5, rbox.y + 18 + 9);
  const rtip = await text(page, '.tip');
  check(/hashLoop|computeTotals/.test(rtip), 'reverse: the first level is the leaf frames (callers view)', rtip);
  check(new URL(page.url()).searchParams.get('mode') === 'reverse', 'reverse: kept in the URL');
  await shot(page, 'cpu-reverse');

  /* sandwich */
  await page.click('button.mode[data-mode=flame]');
  await page.fill('.flame-tools input[type=search]', '^shop.Checkout.computeTotals$');
  await page.press('.flame-tools input[type=search]', 'Enter');
  await page.click('button.mode[data-mode=sandwich]');
  await page.waitForSelector('canvas[data-flame=callers]');
  const sw = await page.innerText('.flame-stage');
  check(/Callers of shop.Checkout.computeTotals/.test(sw) && /Callees of shop.Checkout.computeTotals/.test(sw) && (await page.locator('canvas[data-flame=callees]').count()) === 1,
    'sandwich: callers above and callees below the frame', sw);
  const cbox = await page.locator('canvas[data-flame=callers]').boundingBox();
  await page.mouse.move(cbox.x + 5, cbox.y + cbox.height - 18 - 9);
  check(/shop.Checkout.run/.test(await text(page, '.tip')), 'sandwich: the caller of computeTotals is Checkout.run', await text(page, '.tip'));
  await shot(page, 'cpu-sandwich');

  /* URL round trip: a new browser context (new session: the token again) */
  const shared = page.url();
  check(/mode=sandwich/.test(shared) && /frame=shop.Checkout.computeTotals/.test(shared) && /view=cpu/.test(shared), 'the URL holds the view', shared);
  const { ctx: c2, page: p2 } = await newPage();
  await p2.goto(shared);
  await done(p2);
  await login(p2);
  await done(p2);
  await p2.waitForSelector('canvas[data-flame=callers]', { timeout: 15000 });
  check((await text(p2, '.tabs [aria-current=page]')) === 'CPU' && /Callers of shop.Checkout.computeTotals/.test(await p2.innerText('.flame-stage')) &&
    (await p2.inputValue('#service')) === 'demo/JprofWorkload', 'URL round trip: a new context shows the same view');
  await c2.close();

  /* back and forward */
  await page.click('.tabs a[data-view=memory]');
  await done(page);
  check(new URL(page.url()).searchParams.get('view') === 'memory', 'a tab updates the URL');
  await page.goBack();
  await done(page);
  check((await text(page, '.tabs [aria-current=page]')) === 'CPU', 'back returns to the previous view');
  await page.goForward();
  await done(page);
  check((await text(page, '.tabs [aria-current=page]')) === 'Memory', 'forward goes to the next view');

  /* memory */
  await page.waitForSelector('table[data-table=top]');
  const mem = await text(page, 'table[data-table=top] tbody');
  check(/shop\.Catalog/.test(mem.split('\n').slice(0, 3).join('\n')), 'memory: the allocation hot spot tops the table', mem.slice(0, 300));
  check(/heap dump/.test(await page.innerText('#view')) && /sampled objects/.test(await text(page, 'table[data-table=top] thead')), 'memory: bytes and sampled objects; heap dumps said plainly');

  /* GC and memory pressure: the agent's per-window GC summaries (/api/v1/gc) */
  const gcApi = await waitFor(async () => {
    const r = await api(base, 'gc?namespace=demo&service=JprofWorkload&from=-1h');
    return r.status === 200 && r.body.gc && r.body.gc.collections > 0 ? r.body : null;
  }, 3 * WINDOW + 20);
  check(gcApi, 'gc: the agent uploaded GC summaries of the JVM (collections in /api/v1/gc)', gcApi);
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'memory' });
  await page.waitForSelector('table[data-table=gc]', { timeout: 15000 }).catch(() => {});
  const gcText = await text(page, 'table[data-table=gc]');
  const shown = Number(((gcText.match(/Collections\s+([\d,]+)/) || [])[1] || '0').replace(/,/g, ''));
  check(gcApi && shown >= gcApi.gc.collections, 'memory: the GC section counts the collections the API counts (or more, later)', { shown, api: gcApi && gcApi.gc.collections, gcText });
  check(/Longest pause\s+[\d.,]+ (ms|µs|s) .* of \S+, cause: \S/.test(gcText) && /before → .* after/.test(gcText) && /Allocation rate\s+[\d.,]+ \S+\/s/.test(gcText),
    'memory: the longest pause with collector and cause, heap before/after, allocation rate', gcText);
  check((await page.locator('svg.gc-bars rect').count()) === 60 && /heap dump/.test(await text(page, 'section[data-section=gc]')),
    'memory: pauses over time as 60 bars; what JFR cannot tell is said');
  await shot(page, 'memory');

  /* the old kind: sampled objects still alive, where they were allocated */
  await page.click('button.mode[data-kind=old]');
  await done(page);
  await page.waitForSelector('section[data-kind=old]', { timeout: 15000 }).catch(() => {});
  check(new URL(page.url()).searchParams.get('kind') === 'old' && /Objects still alive/.test(await text(page, 'section[data-kind=old] h2')) &&
    /live sampled objects/.test(await text(page, 'section[data-kind=old]')),
    'memory: the old kind (still alive) is a click away, in the URL', await text(page, 'section[data-kind=old]'));

  /* class histograms: the growth per class, the pause said */
  await goto(page, { namespace: 'demo', service: 'heapsvc', view: 'memory' });
  await page.waitForSelector('table[data-table=growth]', { timeout: 15000 }).catch(() => {});
  const growth = await text(page, 'table[data-table=growth] tbody');
  const heapText = await text(page, 'section[data-section=heap]');
  check(/^web\.Session\s+\+[\d.,]+ [KMG]?i?B\s+\+6,000/.test(growth), 'memory: the class that grows tops the growth table, per minute', growth.slice(0, 300));
  check(/paused the JVM\s+42(\.0)? ms/.test(heapText) && /safepoint/.test(heapText) && /2 histograms/.test(heapText),
    'memory: how long the latest histogram paused the JVM, and why it does', heapText.slice(0, 600));
  await shot(page, 'memory-heap');

  /* locks */
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'locks' });
  await page.waitForSelector('table[data-table=top]');
  check((await text(page, 'table[data-table=top] tbody tr')).includes('shop.Inventory.reserve'), 'locks: the contended monitor tops the table');
  /* the snapshot tables load after the flame graph; a snapshot is one
   * instant, so a later one is allowed (bounded) when none caught an
   * inventory thread waiting */
  let lk = '', lockTables = '';
  for (let attempt = 0; attempt < 8; attempt++) {
    if (attempt) {
      await sleep(WINDOW * 1000);
      await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'locks' });
    }
    await page.waitForSelector('table[data-table=blocked]');
    lk = await page.innerText('#view');
    /* every pod's tables: the service also has JVMs of earlier steps that have
     * ended, whose last snapshot may show nobody waiting */
    lockTables = (await page.locator('table[data-table=blocked]').allInnerTexts()).join('\n') +
      (await page.locator('table[data-table=locks]').allInnerTexts()).join('\n');
    if (/inventory-\d/.test(lockTables)) break;
    console.log('note: the latest snapshot shows no inventory thread waiting (' + ((lk.match(/latest thread snapshot[^\n]*|Thread states:[^\n]*/g) || []).join('; ')) + '); reading a later one');
  }
  check(/inventory-\d/.test(lockTables), 'locks: blocked/waiting threads with owners', lk.slice(lk.indexOf('Blocked and waiting'), lk.indexOf('Blocked and waiting') + 800));
  check(/blocks \d/.test(lk) && /Owner chain/.test(lk), 'locks: owner chains and "blocks N"');
  await shot(page, 'locks');
  await page.click('button.mode[data-kind=park]');
  await done(page);
  await page.waitForSelector('.flame-tools input[type=search]');
  await page.fill('.flame-tools input[type=search]', 'Payments');
  await page.waitForFunction(() => /Matched/.test(document.querySelector('.match-info').textContent), null, { timeout: 5000 });
  check(new URL(page.url()).searchParams.get('kind') === 'park' && parseFloat(await page.getAttribute('.match-info', 'data-share')) > 0, 'locks: the park graph shows Payments parking');

  /* deadlocks */
  await goto(page, { namespace: 'demo', service: 'Deadlocks', view: 'deadlocks' });
  const cyc = await page.locator('section.deadlock').evaluateAll((els) => els.map((e) => e.dataset.cycle));
  check(cyc.some((c) => /mon-deadlock-1/.test(c) && /mon-deadlock-2/.test(c)) && cyc.some((c) => /rl-deadlock-1/.test(c) && /rl-deadlock-2/.test(c)), 'deadlocks: both cycles', cyc);
  const dtext = await page.innerText('#view');
  check(/monitor/.test(dtext) && /ownable synchronizer/.test(dtext) && /Deadlocks\.transfer/.test(dtext) && /Deadlocks\.lockBoth/.test(dtext), 'deadlocks: monitor and ownable synchronizer locks, with stacks');
  await shot(page, 'deadlocks');

  /* wall (none from the JDK engine), status */
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'wall' });
  check(/Empty: no wall data/.test(await page.innerText('#view')), 'wall: no wall data, said in words');
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'status' });
  check((await page.locator('table[data-table=history] tbody tr').count()) > 0, 'status: the status history');
  await shot(page, 'status');

  /* a profile another profiler pushed (Pyroscope's /ingest, a raw JFR body,
   * the token as the basic-auth user) is shown like the agent's */
  {
    const jfr = fs.readFileSync(path.join(SRCDIR, 'tests/fixtures/jfr/asprof-cpu-alloc-lock.jfr'));
    const until = Math.floor(Date.now() / 1000), q = new URLSearchParams({ name: 'shop.app{service_name=Pushed,namespace=demo,pod=pushed-0}', from: String(until - 10), until: String(until), format: 'jfr', spyName: 'javaspy' });
    const r = await fetch(base + '/ingest?' + q, { method: 'POST', body: jfr, headers: { Authorization: 'Basic ' + Buffer.from(T.ingest + ':').toString('base64') } });
    check(r.status === 200, 'a JFR pushed as Pyroscope\'s agent pushes it is accepted', r.status);
    await goto(page, { namespace: 'demo', service: 'Pushed', view: 'overview', from: '-1h' });
    const ov = await text(page, 'table[data-table=targets] tbody');
    check(/pushed-0/.test(ov) && /pushed by another profiler/.test(ov), 'overview: a pushed pod says another profiler pushed it', ov.slice(0, 400));
    await goto(page, { namespace: 'demo', service: 'Pushed', view: 'status', from: '-1h' });
    const st = await text(page, 'table[data-table=history] tbody');
    check(/Pyroscope ingest \(format jfr\)/.test(st), 'status: the history names the ingest that pushed it', st.slice(0, 400));
    await goto(page, { namespace: 'demo', service: 'Pushed', view: 'cpu', from: '-1h' });
    await page.waitForFunction(() => window.JP && JP.lastFlameRender && JP.lastFlameRender.drawn > 0, null, { timeout: 15000 }).catch(() => {});
    check((await page.locator('canvas.flame-canvas').count()) === 1 && (await page.locator('table[data-table=top] tbody tr').count()) > 0, 'cpu: the pushed profile\'s flame graph and top table');
    await shot(page, 'pushed');
  }

  /* compare from the form, on real data: the previous period */
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'cpu', from: '-1m' });
  await page.click('form.compare button:has-text("Previous period")');
  await done(page);
  await page.waitForSelector('table[data-table=diff-top]');
  check(new URL(page.url()).searchParams.get('base_to') === '-1m' && (await page.locator('canvas.flame-canvas').count()) === 1, 'compare: "Previous period" on real data');
  const podsOpt = await page.locator('#cmp-pod option').allInnerTexts();
  check(podsOpt.some((o) => /^vm:\d+$/.test(o)), 'compare: another pod can be the baseline', podsOpt);

  /* widths: 1280 and a phone; no sideways scrolling of the page */
  for (const [w, h, tag] of [[1280, 800, 'desktop'], [390, 844, 'phone']]) {
    const { ctx, page: pw } = await newPage(w, h);
    await pw.goto(base + '/');
    await login(pw);
    for (const v of ['overview', 'cpu', 'memory', 'locks', 'deadlocks', 'io', 'status']) {
      await goto(pw, { namespace: 'demo', service: v === 'deadlocks' ? 'Deadlocks' : 'JprofWorkload', view: v });
      await pw.waitForTimeout(100);
      const sw2 = await pw.evaluate(() => document.documentElement.scrollWidth);
      check(sw2 <= w, `${tag} ${w}px: ${v} has no horizontal page scroll`, sw2);
      if (tag === 'phone') await pw.screenshot({ path: path.join(SHOTS, 'phone-' + v + '.png'), fullPage: true });
    }
    await ctx.close();
  }

  /* the I/O view: the io flame graph of the same service */
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'io' });
  const ioHead = await text(page, '#view h2');
  const ioTop = await text(page, 'table[data-table=top] tbody');
  check(/I\/O waits/.test(ioHead) && (await page.locator('canvas.flame-canvas').count()) === 1 && ioTop.length > 0,
    'the I/O view draws the io flame graph with its top table', ioHead);

  /* the flame graph's downloads: format=html, pprof and otlp of the same query */
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'cpu' });
  for (const fmt of ['html', 'pprof', 'otlp']) {
    const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), page.click(`button[data-export=${fmt}]`)]);
    const file = path.join(tmp, 'download.' + fmt);
    await dl.saveAs(file);
    const bytes = fs.readFileSync(file);
    if (fmt === 'html') {
      const html = bytes.toString('utf8');
      check(dl.suggestedFilename() === 'jprof-JprofWorkload-cpu.html' && html.includes('<script type="application/json" id="jprof-data">') &&
        html.includes('"title":"demo/JprofWorkload cpu"') && html.includes("default-src 'none'"), 'the CPU view downloads one offline HTML file of the same flame graph', dl.suggestedFilename());
    } else if (fmt === 'pprof') {
      check(dl.suggestedFilename() === 'jprof-JprofWorkload-cpu.pb.gz' && bytes[0] === 0x1f && bytes[1] === 0x8b, 'the CPU view downloads a gzipped pprof profile', dl.suggestedFilename());
    } else {
      /* a ProfilesData: field 1 (resource_profiles), length-delimited, naming the service */
      check(dl.suggestedFilename() === 'jprof-JprofWorkload-cpu.otlp.pb' && bytes[0] === 0x0a && bytes.includes('JprofWorkload') &&
        bytes.includes('service.name'), 'the CPU view downloads OpenTelemetry profiles (OTLP protobuf)', dl.suggestedFilename());
    }
  }
  const bad = await fetch(base + '/api/v1/flamegraph?namespace=demo&service=JprofWorkload&kind=cpu&format=svg', { headers: { Authorization: 'Bearer ' + T.read } });
  check(bad.status === 400 && /format must be/.test((await bad.json()).error.message), 'format=svg is refused with a message');

  /* sorting a table */
  await goto(page, { namespace: 'demo', service: 'JprofWorkload', view: 'cpu' });
  await page.click('table[data-table=top] th:nth-child(1) button');
  check((await page.getAttribute('table[data-table=top] th:nth-child(1)', 'aria-sort')) !== 'none', 'a header click sorts the table');
  check(pageErrors.length === 0, 'no script error in the page', pageErrors);
  await c1.close();

  /* ---- jprof-top --format html: the same flame graph in one offline file ---- */
  const fixture = path.join(SRCDIR, 'tests/fixtures/jfr/asprof-cpu-alloc-lock.jfr');
  const htmlFile = path.join(tmp, 'export.html');
  const collapsed = execFileSync(path.join(BUILD, 'jprof-top'), ['-b', '--jfr', fixture, '--event', 'alloc', '--value', 'total'], { encoding: 'utf8' });
  fs.writeFileSync(htmlFile, execFileSync(path.join(BUILD, 'jprof-top'), ['-b', '--jfr', fixture, '--event', 'alloc', '--value', 'total', '--format', 'html']));
  const { ctx: c5, page: px } = await newPage();
  const requests = [];
  px.on('request', (r) => requests.push(r.url()));
  await px.goto('file://' + htmlFile);
  await px.waitForFunction(() => window.JP && JP.lastFlameRender && JP.lastFlameRender.drawn > 0, null, { timeout: 15000 });
  check(requests.length === 1 && requests[0] === 'file://' + htmlFile, 'html export: nothing is fetched but the file itself', requests);
  const total = collapsed.trim().split('\n').reduce((a, l) => a + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  const root = await px.evaluate(() => JP.lastFlame.view.base.root.t);
  check(total > 0 && root === total, 'html export: the graph holds exactly the bytes of the collapsed output', { root, total });
  const head = await text(px, '#export-meta');
  check(/^alloc: .* sampled objects, .* in all, .*widths by bytes/.test(head), 'html export: kind, counts and unit named', head);
  /* the heaviest leaf of the collapsed output is searchable and in the top table */
  const leaf = collapsed.trim().split('\n').map((l) => [l.slice(0, l.lastIndexOf(' ')).split(';').pop(), Number(l.slice(l.lastIndexOf(' ') + 1))]).sort((a, b) => b[1] - a[1])[0][0];
  await px.fill('.flame-tools input[type=search]', leaf.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  await px.press('.flame-tools input[type=search]', 'Enter');
  await px.waitForFunction(() => /Matched: [1-9]/.test(document.querySelector('.match-info').textContent), null, { timeout: 5000 }).catch(() => {});
  const matched = await text(px, '.match-info');
  check(/^Matched: [0-9.]+ %/.test(matched) && !/^Matched: 0.0 %/.test(matched), 'html export: search marks the heaviest leaf (' + leaf + ')', matched);
  const topText = await text(px, 'table[data-table=top] tbody');
  check(topText.includes(leaf), 'html export: the top table lists it', topText.slice(0, 300));
  await px.click('button.mode[data-mode=reverse]');
  check((await px.getAttribute('button.mode[data-mode=reverse]', 'aria-pressed')) === 'true' && (await px.locator('canvas.flame-canvas').count()) === 1, 'html export: the reverse view works offline');
  await px.screenshot({ path: path.join(SHOTS, 'export-html.png'), fullPage: true });
  check(pageErrors.length === 0, 'html export: no script error', pageErrors);
  await c5.close();
  return browser;
}

main().then((rc) => process.exit(rc), (e) => {
  console.log('FAIL: the test crashed: ' + (e && e.stack ? e.stack : e));
  console.log(`${passed} passed, ${failures.length + 1} failed`);
  for (const p of procs) if (p.exitCode === null) p.kill('SIGKILL');
  process.exit(1);
});
