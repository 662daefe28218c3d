/* util.js - shared helpers of the jprof page: DOM building (text nodes
 * only, data is never parsed as HTML), number/time formatting, the API
 * client, sortable tables and notices. Everything hangs off window.JP; no third-party code. */
'use strict';

const JP = (window.JP = window.JP || {});

/* el('td', {class: 'num', text: '12', title: '...'}, child, ...) */
JP.el = function (tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
};

JP.clear = function (node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
};

/* ---- formatting ---- */

const nf = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const nf1 = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const nf2 = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

JP.int = (n) => (n === null || n === undefined ? '—' : nf.format(n));

/* A value in the kind's unit: ns -> "1.25 s", bytes -> "3.1 MiB". */
JP.fmtUnit = function (v, unit) {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  const neg = v < 0;
  let a = Math.abs(v);
  let s;
  if (unit === 'ns') {
    if (a >= 3600e9) s = nf2.format(a / 3600e9) + ' h';
    else if (a >= 60e9) s = nf2.format(a / 60e9) + ' min';
    else if (a >= 1e9) s = nf2.format(a / 1e9) + ' s';
    else if (a >= 1e6) s = nf1.format(a / 1e6) + ' ms';
    else if (a >= 1e3) s = nf1.format(a / 1e3) + ' µs';
    else s = nf.format(a) + ' ns';
  } else if (unit === 'bytes') {
    const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let i = 0;
    while (a >= 1024 && i < u.length - 1) {
      a /= 1024;
      i++;
    }
    s = (i ? nf1.format(a) : nf.format(a)) + ' ' + u[i];
  } else {
    s = nf.format(a) + (unit === 'samples' ? '' : unit ? ' ' + unit : '');
  }
  return (neg ? '−' : '') + s;
};

JP.pct = function (x, digits) {
  if (x === null || x === undefined || !Number.isFinite(x)) return '—';
  return (x * 100).toFixed(digits === undefined ? 1 : digits) + ' %';
};

/* A share change in percentage points, signed. */
JP.pp = function (x) {
  if (!Number.isFinite(x)) return '—';
  const v = (x * 100).toFixed(2);
  return (x > 0 ? '+' : x < 0 ? '−' : '±') + v.replace('-', '') + ' pp';
};

JP.UNIT_WORDS = { cpu: 'CPU time', wall: 'wall time', alloc: 'bytes allocated', old: 'bytes still alive', lock: 'time blocked', park: 'time parked', io: 'time waiting for I/O' };
JP.SAMPLE_WORDS = { cpu: 'samples', wall: 'samples', alloc: 'sampled objects', old: 'live sampled objects', lock: 'contentions', park: 'parks', io: 'I/O waits' };

/* <time> in the viewer's zone, UTC on hover. */
JP.time = function (iso) {
  if (!iso) return JP.el('span', { class: 'dim', text: '—' });
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return document.createTextNode(iso);
  return JP.el('time', { datetime: iso, title: 'UTC ' + d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z') },
    d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }));
};

JP.ago = function (iso) {
  if (!iso) return '';
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  if (!Number.isFinite(s)) return '';
  if (s < 0) return 'in the future';
  if (s < 90) return Math.round(s) + ' s ago';
  if (s < 5400) return Math.round(s / 60) + ' min ago';
  if (s < 172800) return Math.round(s / 3600) + ' h ago';
  return Math.round(s / 86400) + ' days ago';
};

/* ---- the API ---- */

const TOKEN_KEY = 'jprof.token';
JP.token = {
  get: () => sessionStorage.getItem(TOKEN_KEY) || '',
  set: (t) => (t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY)),
};

/* GET /api/v1/PATH?params -> {ok, status, data, error, code}. Never throws. */
JP.api = async function (path, params, signal) {
  /* a URLSearchParams goes as it is (it may carry deliberate empty values) */
  let q = params instanceof URLSearchParams ? params : null;
  if (!q) {
    q = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v !== undefined && v !== null && v !== '') q.set(k, v);
    }
  }
  const url = '/api/v1/' + path + (q.toString() ? '?' + q : '');
  const headers = { Accept: 'application/json' };
  const tok = JP.token.get();
  if (tok) headers.Authorization = 'Bearer ' + tok;
  let resp;
  try {
    resp = await fetch(url, { headers, signal, cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    if (e.name === 'AbortError') return { ok: false, aborted: true };
    return { ok: false, status: 0, code: 'network', error: 'jprof-server could not be reached (' + e.message + ')' };
  }
  let body = null;
  try {
    body = await resp.json();
  } catch (e) {
    body = null;
  }
  if (resp.ok && body) return { ok: true, status: resp.status, data: body };
  const err = (body && body.error) || {};
  return {
    ok: false,
    status: resp.status,
    code: err.code || (resp.status === 401 ? 'unauthorized' : 'http'),
    error: err.message || 'HTTP ' + resp.status,
  };
};

/* ---- notices: every state in words ---- */

JP.notice = function (kind, text, extra) {
  return JP.el('p', { class: 'notice notice-' + kind, role: kind === 'error' || kind === 'auth' ? 'alert' : 'status', dataset: { notice: kind } }, text, extra || null);
};

/* Words for a failed answer (401 / 403 / 503 / network). */
JP.failure = function (r, what) {
  if (r.status === 401) {
    return JP.notice('auth', 'Unauthorized: jprof-server rejected the token (401). Enter a valid read token above; no data is shown.');
  }
  if (r.status === 403) {
    return JP.notice('auth', 'Forbidden (403): ' + r.error + '. This token has no read scope for what ' + what + ' needs.');
  }
  if (r.status === 503 || r.status === 429) {
    return JP.notice('error', 'The store is unavailable right now (' + r.status + '): ' + r.error + '. Try again in a moment.');
  }
  return JP.notice('error', 'Could not load ' + what + ': ' + r.error + (r.status ? ' (HTTP ' + r.status + ')' : ''));
};

/* Notices from an answer's meta: partial, truncated, dropped, cut stacks. */
JP.metaNotices = function (meta, what) {
  const out = [];
  if (!meta) return out;
  if (meta.partial) {
    out.push(JP.notice('partial', 'Partial answer: ' + (meta.partial_reason || 'the query budget ran out') +
      '. ' + what + ' covers only part of the range.'));
  }
  if (meta.truncated && meta.omitted_nodes !== undefined) {
    out.push(JP.notice('truncated', 'Truncated: the tree was cut to its ' + JP.int(meta.nodes) + ' heaviest nodes (' +
      JP.int(meta.omitted_nodes) + ' smaller ones omitted); every shown total stays exact.'));
  } else if (meta.truncated) {
    out.push(JP.notice('truncated', 'Truncated: ' + what + ' was cut to ' + JP.int(meta.limit) + ' rows.'));
  }
  if (meta.dropped) out.push(JP.notice('info', 'The recorder dropped some events in this range: counts are a lower bound.'));
  if (meta.stacks_truncated) out.push(JP.notice('info', 'Some stacks were cut by the recorder (too deep): their roots are missing.'));
  return out;
};

/* ---- tables: real <table>, sortable by header buttons ---- */

/* cols: [{key, label, num, render(row) -> node|string, value(row) -> sortable, title}] */
JP.table = function (opts) {
  const cols = opts.cols;
  let sortKey = opts.sort || null;
  let desc = opts.desc !== undefined ? opts.desc : true;
  const table = JP.el('table', { class: 'data' + (opts.class ? ' ' + opts.class : ''), dataset: { table: opts.name || '' } });
  if (opts.caption) table.append(JP.el('caption', { text: opts.caption }));
  const thead = JP.el('thead');
  const tr = JP.el('tr');
  const tbody = JP.el('tbody');
  const value = (c, r) => (c.value ? c.value(r) : r[c.key]);
  const ths = cols.map((c) => {
    const th = JP.el('th', { scope: 'col', class: c.num ? 'num' : null, title: c.title || null });
    const b = JP.el('button', { type: 'button', class: 'sort', text: c.label });
    b.addEventListener('click', () => {
      if (sortKey === c.key) desc = !desc;
      else {
        sortKey = c.key;
        desc = !!c.num;
      }
      fill();
    });
    th.append(b);
    tr.append(th);
    return th;
  });
  thead.append(tr);
  table.append(thead, tbody);
  function fill() {
    const rows = opts.rows.slice();
    const col = cols.find((c) => c.key === sortKey);
    if (col) {
      rows.sort((a, b) => {
        const x = value(col, a), y = value(col, b);
        let r;
        if (typeof x === 'number' && typeof y === 'number') r = x - y;
        else r = String(x ?? '').localeCompare(String(y ?? ''));
        return desc ? -r : r;
      });
    }
    cols.forEach((c, i) => ths[i].setAttribute('aria-sort', c.key === sortKey ? (desc ? 'descending' : 'ascending') : 'none'));
    JP.clear(tbody);
    const max = opts.max || 1000;
    for (const r of rows.slice(0, max)) {
      const row = JP.el('tr', { class: opts.rowClass ? opts.rowClass(r) : null });
      for (const c of cols) {
        const v = c.render ? c.render(r) : value(c, r);
        row.append(JP.el('td', { class: c.num ? 'num' : null }, v === undefined || v === null ? '—' : v));
      }
      if (opts.onRow) {
        row.classList.add('clickable');
        row.tabIndex = 0;
        row.addEventListener('click', () => opts.onRow(r));
        row.addEventListener('keydown', (e) => {
          if (e.key === 'Enter') opts.onRow(r);
        });
      }
      tbody.append(row);
    }
    if (!rows.length) {
      tbody.append(JP.el('tr', {}, JP.el('td', { colspan: cols.length, class: 'dim', text: opts.empty || 'Nothing to show.' })));
    }
  }
  fill();
  return JP.el('div', { class: 'table-wrap' }, table);
};

JP.section = function (title, ...children) {
  return JP.el('section', { class: 'card' }, JP.el('h2', { text: title }), ...children);
};

/* Lock text of either form: "cls@id" or {class, id, kind}. */
JP.lockText = function (l) {
  if (!l) return '—';
  if (typeof l === 'string') return l;
  return (l.class || '?') + (l.id ? '@' + l.id : '');
};

/* "monitor" or "ownable synchronizer" (java.util.concurrent). */
JP.lockKind = function (l) {
  if (l && typeof l === 'object' && l.kind) {
    return /own|sync|juc|park/i.test(l.kind) ? 'ownable synchronizer' : l.kind === 'monitor' ? 'monitor' : l.kind;
  }
  const t = JP.lockText(l);
  return /java\.util\.concurrent|Sync@|AbstractQueuedSynchronizer/.test(t) ? 'ownable synchronizer' : 'monitor';
};
