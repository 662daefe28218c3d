/* views.js - the views of the jprof page: Overview, CPU, Memory, Locks,
 * Deadlocks, Wall, Status. Each is view(ctx) with ctx = {s (state), out
 * (element), signal, set(patch, push)}; it loads what it needs from the API
 * and says in words what came back (empty, partial, cut, refused). */
'use strict';

(function () {
  const JP = window.JP;
  const el = JP.el;

  const KIND_TITLES = { cpu: 'CPU', wall: 'Wall clock', alloc: 'Allocations', old: 'Objects still alive (old-object sampler)', lock: 'Monitor contention (lock)', park: 'Parking (java.util.concurrent)', io: 'I/O waits (sockets and files)' };
  const CONFIDENCE = {
    exact_thread_cpu: 'exact thread CPU over the last interval',
    exact: 'exact thread CPU over the last interval',
    cumulative_thread_cpu: 'cumulative thread CPU since the thread started',
    cumulative: 'cumulative thread CPU since the thread started',
    runnable_snapshot: 'RUNNABLE in the snapshot only (no CPU numbers)',
    snapshot: 'one thread snapshot',
    profile_only: 'profile hotspot only (no thread evidence)',
  };

  function scopeParams(s) {
    return { namespace: s.namespace, service: s.service, pod: s.pod || undefined, from: s.from, to: s.to };
  }

  function loading(out, what) {
    const n = JP.notice('loading', 'Loading ' + what + '…');
    out.append(n);
    out.setAttribute('aria-busy', 'true');
    return () => {
      n.remove();
      out.removeAttribute('aria-busy');
    };
  }

  function whoText(s) {
    return s.service + ' in ' + s.namespace + (s.pod ? ', pod ' + s.pod : ', all pods');
  }

  function rangeLine(meta) {
    if (!meta || !meta.from) return null;
    return el('p', { class: 'range' }, 'Range: ', JP.time(meta.from), ' – ', JP.time(meta.to));
  }

  /* ---- flame views (cpu, memory, locks, wall) ---- */

  function sampleWord(kind) {
    return JP.SAMPLE_WORDS[kind] || 'samples';
  }

  function compareActive(s) {
    return s.base_from !== null || s.base_to !== null || s.base_pod !== null;
  }

  function compareForm(ctx, kind, pods) {
    const s = ctx.s;
    const on = compareActive(s);
    const id = (x) => 'cmp-' + x;
    const bf = el('input', { id: id('from'), name: 'base_from', value: s.base_from || '', placeholder: 'e.g. -2h', size: '12' });
    const bt = el('input', { id: id('to'), name: 'base_to', value: s.base_to || '', placeholder: 'e.g. -1h', size: '12' });
    const bp = el('select', { id: id('pod'), name: 'base_pod' },
      el('option', { value: '__same', text: 'same pods as above' }),
      el('option', { value: '', text: 'all pods' }),
      pods.map((p) => el('option', { value: p, text: p })));
    bp.value = s.base_pod === null ? '__same' : s.base_pod;
    const f = el('form', { class: 'compare', 'aria-label': 'Compare with a baseline' },
      el('strong', { text: on ? 'Comparing with a baseline' : 'Compare with a baseline' }),
      el('label', { for: id('from'), text: 'Baseline from' }), bf,
      el('label', { for: id('to'), text: 'to' }), bt,
      el('label', { for: id('pod'), text: 'pod' }), bp,
      el('button', { type: 'submit', text: 'Compare' }),
      el('button', { type: 'button', class: 'secondary', text: 'Previous period', onclick: () => ctx.set({ base_from: null, base_to: s.from || '-1h', base_pod: null }, true) }),
      on ? el('button', { type: 'button', class: 'secondary', text: 'Stop comparing', onclick: () => ctx.set({ base_from: null, base_to: null, base_pod: null }, true) }) : null);
    f.addEventListener('submit', (e) => {
      e.preventDefault();
      const pod = bp.value === '__same' ? null : bp.value;
      const from = bf.value.trim() || null, to = bt.value.trim() || null;
      if (!from && !to && pod === null) ctx.set({ base_from: null, base_to: s.from || '-1h', base_pod: null }, true);
      else ctx.set({ base_from: from, base_to: to, base_pod: pod }, true);
    });
    return f;
  }

  /* Download the flame query as one offline HTML file, a pprof profile or
   * OpenTelemetry profiles (format= on /api/v1/flamegraph); the token goes
   * in the header, so the answer is fetched and saved from memory. */
  function exportButtons(p, notes) {
    const box = el('p', { class: 'export' }, 'Download: ');
    for (const [fmt, label] of [['html', 'HTML (offline flame graph)'], ['pprof', 'pprof'], ['otlp', 'OpenTelemetry (OTLP)']]) {
      const b = el('button', { type: 'button', class: 'secondary', text: label, dataset: { export: fmt } });
      b.addEventListener('click', async () => {
        const q = new URLSearchParams();
        for (const [k, v] of Object.entries(p)) if (v !== undefined && v !== null && v !== '' && k !== 'max_nodes') q.set(k, v);
        q.set('format', fmt);
        const headers = {};
        const tok = JP.token.get();
        if (tok) headers.Authorization = 'Bearer ' + tok;
        b.disabled = true;
        try {
          const resp = await fetch('/api/v1/flamegraph?' + q, { headers, cache: 'no-store', credentials: 'omit' });
          if (!resp.ok) throw new Error('HTTP ' + resp.status);
          const blob = await resp.blob();
          const m = /filename="([^"]+)"/.exec(resp.headers.get('content-disposition') || '');
          const a = el('a', { href: URL.createObjectURL(blob), download: m ? m[1] : 'jprof-profile.' + fmt });
          document.body.append(a);
          a.click();
          a.remove();
          setTimeout(() => URL.revokeObjectURL(a.href), 10000);
        } catch (e) {
          notes.append(JP.notice('error', 'The ' + fmt + ' download failed: ' + e.message));
        } finally {
          b.disabled = false;
        }
      });
      box.append(b, ' ');
    }
    return box;
  }

  function topCols(kind, unit) {
    const w = sampleWord(kind);
    return [
      { key: 'name', label: 'Frame', render: (r) => el('code', { text: r.name }) },
      { key: 'self', label: 'Self', num: true, render: (r) => JP.fmtUnit(r.self, unit) },
      { key: 'self_pct', label: 'Self %', num: true, value: (r) => r.self_pct, render: (r) => JP.pct(r.self_pct) },
      { key: 'self_samples', label: 'Self ' + w, num: true, render: (r) => JP.int(r.self_samples) },
      { key: 'total', label: 'Total', num: true, render: (r) => JP.fmtUnit(r.total, unit) },
      { key: 'total_pct', label: 'Total %', num: true, value: (r) => r.total_pct, render: (r) => JP.pct(r.total_pct) },
      { key: 'total_samples', label: 'Total ' + w, num: true, render: (r) => JP.int(r.total_samples) },
    ];
  }

  function diffCols(unit) {
    return [
      { key: 'name', label: 'Frame', render: (r) => el('code', { text: r.name }) },
      { key: 'self_delta', label: 'Change of self', num: true, value: (r) => Math.abs(r.self_delta), title: 'change of the share of all, in percentage points (sorted by size)', render: (r) => el('span', { class: r.self_delta > 0 ? 'grew' : r.self_delta < 0 ? 'shrank' : '' }, JP.pp(r.self_delta)) },
      { key: 'self', label: 'Self now', num: true, render: (r) => JP.fmtUnit(r.self, unit) },
      { key: 'base_self', label: 'Self baseline', num: true, render: (r) => JP.fmtUnit(r.base_self, unit) },
      { key: 'total_delta', label: 'Change of total', num: true, value: (r) => r.total_delta, render: (r) => JP.pp(r.total_delta) },
      { key: 'total', label: 'Total now', num: true, render: (r) => JP.fmtUnit(r.total, unit) },
      { key: 'base_total', label: 'Total baseline', num: true, render: (r) => JP.fmtUnit(r.base_total, unit) },
    ];
  }

  function escapeRe(s) {
    return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }

  /* Loads and draws one kind's flame graph (or its diff) and top table. */
  async function flameSection(ctx, kind, pods) {
    const s = ctx.s;
    const out = ctx.out;
    const sec = el('section', { class: 'card flame-card', dataset: { kind } });
    const head = el('div', { class: 'flame-head' });
    const notes = el('div', { class: 'notes' });
    const flameBox = el('div');
    const topBox = el('div', { class: 'top-box' });
    sec.append(el('h2', { text: KIND_TITLES[kind] + ' flame graph' }), head, compareForm(ctx, kind, pods), notes, flameBox, topBox);
    out.append(sec);
    const diff = compareActive(s);
    const p = Object.assign(scopeParams(s), { kind, max_nodes: s.max_nodes || 5000 });
    if (s.threads) p.threads = '1';
    const done = loading(notes, diff ? 'the comparison' : 'the ' + kind + ' profile');
    let fr, tr;
    if (diff) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(p)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
      if (s.base_from) q.set('base_from', s.base_from);
      if (s.base_to) q.set('base_to', s.base_to);
      if (s.base_pod !== null) q.set('base_pod', s.base_pod); /* '' = every pod */
      q.set('limit', '200');
      fr = await JP.api('flamegraph/diff', q, ctx.signal);
    } else {
      [fr, tr] = await Promise.all([
        JP.api('flamegraph', Object.assign({ by: 'both' }, p), ctx.signal),
        JP.api('top', Object.assign(scopeParams(s), { kind, limit: 500 }), ctx.signal),
      ]);
    }
    done();
    if (fr.aborted) return;
    if (!fr.ok) {
      notes.append(JP.failure(fr, 'the ' + kind + ' profile'));
      ctx.failed(fr);
      return;
    }
    const meta = fr.data.meta;
    const unit = meta.value_unit || meta.unit;
    head.append(rangeLine(meta));
    notes.append(...JP.metaNotices(meta, 'This ' + (diff ? 'comparison' : 'flame graph')));
    if (diff) {
      const c = meta.current || {}, b = meta.base || {};
      head.append(el('p', { class: 'summary' },
        'Now: ', JP.fmtUnit(c.total, unit), ' in ', JP.int(c.samples), ' ' + sampleWord(kind), ' (', c.pod || 'all pods', ', ', JP.time(c.from), ' – ', JP.time(c.to), '). ',
        'Baseline: ', JP.fmtUnit(b.total, unit), ' in ', JP.int(b.samples), ' ' + sampleWord(kind), ' (', b.pod || 'all pods', ', ', JP.time(b.from), ' – ', JP.time(b.to), '). ',
        'Red frames take a larger share now, blue ones a smaller share; widths are now.'));
      if (!c.samples && !b.samples) {
        notes.append(JP.notice('empty', 'Empty: neither side has ' + kind + ' data for ' + whoText(s) + '.'));
        return;
      }
      if (!c.samples) notes.append(JP.notice('empty', 'Empty: no ' + kind + ' data now; the table below lists what the baseline had.'));
      if (!b.samples) notes.append(JP.notice('empty', 'The baseline has no ' + kind + ' data: every frame counts as new.'));
    } else {
      head.append(el('p', { class: 'summary' },
        JP.UNIT_WORDS[kind] ? JP.UNIT_WORDS[kind][0].toUpperCase() + JP.UNIT_WORDS[kind].slice(1) + ': ' : '',
        JP.fmtUnit(meta.total, unit), ' in ', JP.int(meta.samples), ' ' + sampleWord(kind), ', ', JP.int(meta.windows), ' windows of ', whoText(s),
        meta.last ? ['; last data ', JP.time(meta.last), ' (' + JP.ago(meta.last) + ')'] : '', '.'));
      if (meta.samples) head.append(exportButtons(p, notes));
      if (!meta.samples && meta.partial) {
        notes.append(JP.notice('empty', 'Nothing was read before the query budget ran out: no ' + kind + ' data to show. Try a shorter range.'));
        return;
      }
      if (!meta.samples) {
        notes.append(JP.notice('empty', 'Empty: no ' + kind + ' data for ' + whoText(s) + ' in this range. ' +
          (kind === 'wall' ? 'Wall-clock profiles come from async-profiler; the JDK engine records none.' : kind === 'io' ? 'I/O waits come from the JDK engine when jprof.io/events names io (waits longer than 10 ms).' : 'Is the kind enabled (jprof.io/events) and the service profiled? See Overview.')));
        return;
      }
    }
    const fv = new JP.FlameView(flameBox, {
      kind, unit, sampleWord: sampleWord(kind), search: s.search || '', mode: s.mode, sandwich: s.mode === 'sandwich' ? s.frame : null,
      onSearch: (q) => ctx.set({ search: q || null }, false),
      onMode: (mode, frame) => ctx.set({ mode: mode === 'flame' ? null : mode, frame: mode === 'sandwich' ? frame : null }, false),
      onView: (tree, zoom, mode, frame) => drawTop(tree, zoom, mode, frame),
    });
    ctx.onLeave(() => fv.destroy());
    const serverTop = tr && tr.ok ? tr.data : null;
    const rootTotal = () => fv.base.root.t || 1;
    function drawTop(tree, zoom, mode, frame) {
      JP.clear(topBox);
      const onRow = (r) => fv.setSearch('^' + escapeRe(r.name) + '$');
      if (diff) {
        const rows = fr.data.top || [];
        topBox.append(el('h3', { text: 'Biggest changes (share of all, now against the baseline)' }));
        if (meta.top_truncated) topBox.append(JP.notice('truncated', 'Truncated: the ' + rows.length + ' biggest of ' + JP.int(meta.rows_total) + ' changed frames.'));
        topBox.append(JP.table({ name: 'diff-top', cols: diffCols(unit), rows, sort: 'self_delta', desc: true, onRow, max: 200 }));
        return;
      }
      const exact = serverTop && zoom === tree.root && mode === 'flame';
      let rows;
      if (exact) {
        rows = serverTop.rows;
        topBox.append(el('h3', { text: 'Top frames (all data in the range; click a row to search it)' }));
        if (serverTop.meta.truncated) topBox.append(JP.notice('truncated', 'Truncated: the top ' + rows.length + ' of ' + JP.int(serverTop.meta.rows_total) + ' frames.'));
      } else {
        rows = JP.topOf(zoom);
        const where = mode === 'sandwich' ? 'the sandwich of ' + frame : zoom.p ? zoom.n : mode === 'reverse' ? 'the callers view' : 'the graph';
        topBox.append(el('h3', { text: 'Top frames under ' + where + ' (click a row to search it)' }));
        if (fr.data.meta.truncated) topBox.append(JP.notice('info', 'Computed from the ' + JP.int(fr.data.meta.nodes) + ' nodes shown; the tree was cut, so small frames may be missing.'));
      }
      const all = rootTotal();
      rows = rows.map((r) => Object.assign({}, r, { self_pct: r.self / all, total_pct: r.total / all, self_samples: r.self_samples ?? null, total_samples: r.total_samples ?? null }));
      topBox.append(JP.table({ name: 'top', cols: topCols(kind, unit), rows, sort: 'self', desc: true, onRow, max: 100 }));
      if (rows.length > 100) topBox.append(el('p', { class: 'dim', text: 'The 100 heaviest of ' + JP.int(rows.length) + ' frames are listed (sort by a column to see others first).' }));
    }
    fv.setData(fr.data.tree, !!s.threads);
    JP.lastFlame = { view: fv, tree: fr.data.tree }; /* for the browser test's timing */
  }

  /* ---- threads (busy, blocked, locks) ---- */

  async function loadThreads(ctx) {
    const s = ctx.s;
    return JP.api('threads', Object.assign(scopeParams(s), { thread_limit: 50 }), ctx.signal);
  }

  function snapshotLine(t) {
    return el('p', { class: 'dim' }, 'Pod ', el('strong', { text: t.target.pod || '?' }), ': latest thread snapshot ', JP.time(t.time), ' (' + JP.ago(t.time) + ')');
  }

  function stackTop(st) {
    if (!st || !st.length) return '—';
    return el('code', { title: st.join('\n'), text: st[0] });
  }

  /* A section fed by the latest thread snapshot of each target: draw(sec, target). */
  async function snapshotSection(ctx, title, draw) {
    const sec = JP.section(title);
    ctx.out.append(sec);
    const done = loading(sec, 'thread snapshots');
    const r = await loadThreads(ctx);
    done();
    if (r.aborted) return;
    if (!r.ok) return sec.append(JP.failure(r, 'the thread snapshots'));
    const ts = r.data.targets || [];
    sec.append(...JP.metaNotices(r.data.meta, 'The thread list'));
    if (!ts.length) return sec.append(JP.notice('empty', 'No thread snapshot for ' + whoText(ctx.s) + ' in this range (jprof.io/threads off?).'));
    for (const t of ts) {
      sec.append(snapshotLine(t));
      draw(sec, t);
    }
  }

  function busySection(ctx) {
    return snapshotSection(ctx, 'Busy threads (latest snapshots)', (sec, t) => {
      const busy = (t.summary && t.summary.busy) || {};
      const conf = busy.confidence;
      sec.append(el('p', {}, 'Confidence: ', el('strong', { dataset: { confidence: conf || '' }, text: CONFIDENCE[conf] || conf || 'unknown' }),
        busy.truncated ? ' (list cut)' : ''));
      const rows = (busy.threads || []).map((x) => Object.assign({ pod: t.target.pod }, x));
      const hasEvidence = rows.some((x) => x.evidence !== undefined || x.confidence !== undefined);
      const cols = [
        { key: 'name', label: 'Thread', render: (x) => el('strong', { text: x.name }) },
        { key: 'state', label: 'State' },
        { key: 'cpu_pct', label: 'CPU %', num: true, render: (x) => (x.cpu_pct === null || x.cpu_pct === undefined ? '—' : x.cpu_pct.toFixed(1) + ' %') },
        { key: 'cpu_ns', label: 'CPU time', num: true, render: (x) => JP.fmtUnit(x.cpu_ns, 'ns') },
      ];
      if (hasEvidence) {
        cols.push({ key: 'evidence', label: 'Evidence', value: (x) => evidenceText(x), render: (x) => evidenceText(x) });
      }
      cols.push({ key: 'stack_top', label: 'Top of stack', value: (x) => (x.stack_top || [])[0] || '', render: (x) => stackTop(x.stack_top) });
      sec.append(JP.table({ name: 'busy', cols, rows, sort: 'cpu_pct', desc: true, empty: 'No busy thread in this snapshot.' }));
    });
  }

  function evidenceText(x) {
    const v = x.evidence !== undefined ? x.evidence : x.confidence;
    if (v === null || v === undefined) return '—';
    if (typeof v === 'string') return CONFIDENCE[v] || v;
    return Object.entries(v).map(([k, w]) => k + ': ' + (typeof w === 'object' ? JSON.stringify(w) : w)).join(', ');
  }

  function chainText(chain) {
    if (!chain || !chain.length) return '—';
    return chain.map((c) => (typeof c === 'string' ? c : c.name)).join(' → ');
  }

  function lockThreadsSection(ctx) {
    return snapshotSection(ctx, 'Blocked and waiting threads (latest snapshots)', (sec, t) => {
      const sum = t.summary || {};
      const bl = sum.blocked || {};
      const states = sum.states || {};
      sec.append(el('p', {}, 'Thread states: ', Object.entries(states).map(([k, v]) => k + ' ' + v).join(', ') || '—'));
      const locks = sum.locks || [];
      sec.append(el('h3', { text: 'Locks with waiters' }));
      sec.append(JP.table({
        name: 'locks', rows: locks, sort: 'owner_blocks', desc: true, empty: 'No thread waits for a lock.',
        cols: [
          { key: 'lock', label: 'Lock', value: (l) => JP.lockText(l.lock), render: (l) => el('code', { text: JP.lockText(l.lock) }) },
          { key: 'kind', label: 'Kind', value: (l) => JP.lockKind(l.lock) },
          { key: 'owner', label: 'Owner', value: (l) => (l.owner ? l.owner.name : ''), render: (l) => (l.owner ? el('strong', { text: l.owner.name }) : 'none (free or unknown)') },
          { key: 'owner_blocks', label: 'Blocks', num: true, render: (l) => 'blocks ' + (l.owner_blocks ?? 0) },
          { key: 'owner_chain', label: 'Owner chain', value: (l) => chainText(l.owner_chain), render: (l) => chainText(l.owner_chain) + (l.chain_cycles ? ' (cycle: deadlock)' : '') },
          { key: 'waiters', label: 'Waiters', value: (l) => (l.waiters || []).length, render: (l) => (l.waiters || []).map((w) => w.name + (w.state ? ' (' + w.state + ')' : '')).join(', ') },
        ],
      }));
      sec.append(el('h3', { text: 'Owners' }));
      sec.append(JP.table({
        name: 'owners', rows: bl.owners || [], sort: 'blocks', desc: true, empty: 'No owner blocks anyone.',
        cols: [
          { key: 'name', label: 'Owner thread', render: (o) => el('strong', { text: o.name }) },
          { key: 'state', label: 'State' },
          { key: 'blocks', label: 'Blocks', num: true, render: (o) => 'blocks ' + o.blocks },
        ],
      }));
      sec.append(el('h3', { text: 'Waiting threads' + (bl.count !== undefined ? ' (' + bl.count + ')' : '') }));
      sec.append(JP.table({
        name: 'blocked', rows: bl.threads || [], sort: 'name', desc: false, empty: 'No blocked or waiting thread.',
        cols: [
          { key: 'name', label: 'Thread', render: (x) => el('strong', { text: x.name }) },
          { key: 'state', label: 'State' },
          { key: 'waiting_on', label: 'Waiting on', value: (x) => JP.lockText(x.waiting_on), render: (x) => el('code', { text: JP.lockText(x.waiting_on) }) },
          { key: 'chain', label: 'Owner chain', value: (x) => chainText(x.chain) },
          { key: 'cycle', label: 'Deadlock', value: (x) => (x.cycle ? 'yes' : ''), render: (x) => (x.cycle ? el('strong', { class: 'bad', text: 'in a cycle' }) : '') },
        ],
      }));
    });
  }

  /* ---- views ---- */

  function needService(ctx) {
    if (ctx.s.namespace && ctx.s.service) return true;
    ctx.out.append(JP.notice('info', 'Choose a service above (or on the Overview) to see this view.'));
    return false;
  }

  async function podsOf(ctx) {
    const r = await JP.api('services', { namespace: ctx.s.namespace, from: ctx.s.from, to: ctx.s.to }, ctx.signal);
    if (!r.ok) return [];
    const sv = (r.data.services || []).find((x) => x.service === ctx.s.service);
    return sv ? [...new Set(sv.targets.map((t) => t.target.pod).filter(Boolean))] : [];
  }

  const V = {};

  V.cpu = async (ctx) => {
    if (!needService(ctx)) return;
    const pods = await podsOf(ctx);
    await Promise.all([flameSection(ctx, 'cpu', pods), busySection(ctx)]);
  };

  /* Pauses over the range as bars (the GC screen's sparkline): an SVG made
   * of elements and attributes only (the CSP allows no inline style). */
  function pauseBars(points) {
    const NS = 'http://www.w3.org/2000/svg';
    const w = 600, h = 48, n = points.length || 1, bw = w / n;
    const max = Math.max(1, ...points.map((p) => p.pause_total_ns || 0));
    const svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('viewBox', `0 0 ${w} ${h}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('class', 'gc-bars');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'GC pause time over the range, ' + n + ' columns');
    points.forEach((p, i) => {
      const v = p.pause_total_ns || 0;
      const bh = v ? Math.max(2, (v / max) * h) : 0;
      const r = document.createElementNS(NS, 'rect');
      r.setAttribute('x', String(i * bw + 0.5));
      r.setAttribute('width', String(Math.max(1, bw - 1)));
      r.setAttribute('y', String(h - bh));
      r.setAttribute('height', String(bh));
      const t = document.createElementNS(NS, 'title');
      t.textContent = new Date(Number(BigInt(p.start_ns) / 1000000n)).toLocaleTimeString() + ': ' +
        JP.int(p.pauses) + ' pauses, ' + JP.fmtUnit(v, 'ns') + ' paused, longest ' + JP.fmtUnit(p.pause_max_ns, 'ns');
      r.append(t);
      svg.append(r);
    });
    return svg;
  }

  function nsTime(ns) {
    if (!ns) return '';
    return JP.time(new Date(Number(BigInt(ns) / 1000000n)).toISOString());
  }

  /* GC and memory pressure from the agents' per-window GC summaries
   * (GET /api/v1/gc: the same shape as jprof-top's GC screen). */
  async function gcSection(ctx) {
    const sec = JP.section('GC and memory pressure');
    sec.dataset.section = 'gc';
    ctx.out.append(sec);
    const done = loading(sec, 'the GC summary');
    const r = await JP.api('gc', Object.assign(scopeParams(ctx.s), { points: 60 }), ctx.signal);
    done();
    if (r.aborted) return;
    if (!r.ok) return sec.append(JP.failure(r, 'the GC summary'));
    const g = r.data.gc || {};
    const m = r.data.meta || {};
    sec.append(...JP.metaNotices(m, 'The GC summary'));
    if (!g.recorded) {
      return sec.append(JP.notice('empty', 'No GC summary for ' + whoText(ctx.s) + ' in this range: no collection was recorded, ' +
        'or the agents are older than the GC summary.'));
    }
    const rows = [
      ['Collections', JP.int(g.collections)],
      ['Pauses', JP.int(g.pauses) + (g.pauses_from ? ' (' + g.pauses_from + ')' : '')],
      ['Time paused', JP.fmtUnit(g.pause_total_ns, 'ns') + (g.paused_pct !== null && g.paused_pct !== undefined ? ' — ' + g.paused_pct.toFixed(2) + ' % of the time recorded' : '')],
      ['Pause p50 / p99 / max', JP.fmtUnit(g.pause_p50_ns, 'ns') + ' / ' + JP.fmtUnit(g.pause_p99_ns, 'ns') + ' / ' + JP.fmtUnit(g.pause_max_ns, 'ns') +
        (m.percentiles === 'estimated' ? ' (p50 and p99 estimated: a window had more pauses than it keeps)' : '')],
    ];
    const longest = g.longest
      ? el('span', {}, el('strong', { text: JP.fmtUnit(g.pause_max_ns, 'ns') }), ' ' + (g.longest.phase || 'pause') + ' of ',
        el('strong', { text: g.longest.collector || '?' }), ', cause: ', el('strong', { text: g.longest.cause || '?' }), ', at ', nsTime(g.longest.start_ns))
      : '—';
    rows.push(['Longest pause', longest]);
    if (g.heap) {
      rows.push(['Heap used, last collection', JP.fmtUnit(g.heap.before_bytes, 'bytes') + ' before → ' + JP.fmtUnit(g.heap.after_bytes, 'bytes') + ' after']);
      rows.push(['Heap after collections', JP.fmtUnit(g.heap.after_min_bytes, 'bytes') + ' to ' + JP.fmtUnit(g.heap.after_max_bytes, 'bytes') +
        ' over ' + JP.int(g.heap.gcs) + ' collections (a floor that keeps rising is worth a heap dump)']);
    }
    if (g.alloc) rows.push(['Allocation rate', JP.fmtUnit(g.alloc.bytes_per_s, 'bytes') + '/s' + (g.alloc.source ? ' (' + g.alloc.source + ')' : '')]);
    if (g.dropped) rows.push(['Pauses not kept', JP.int(g.dropped)]);
    rows.push(['From', JP.int(m.windows) + ' windows of ' + JP.int(m.targets) + (m.targets === 1 ? ' JVM' : ' JVMs') + ', ' + JP.fmtUnit(m.covered_ns, 'ns') + ' recorded']);
    sec.append(el('div', { class: 'table-wrap' }, el('table', { class: 'kv', dataset: { table: 'gc' } },
      el('tbody', {}, ...rows.map(([k, v]) => el('tr', {}, el('th', { scope: 'row', text: k }), el('td', {}, v)))))));
    if ((r.data.points || []).length) {
      sec.append(el('p', { class: 'dim', text: 'Time paused over the range (hover a bar for its figures):' }), pauseBars(r.data.points));
    }
    if (g.cannot_tell) sec.append(JP.notice('info', g.cannot_tell));
  }

  /* per pod, the latest class histogram of the range and the growth since
   * the first one (/api/v1/heap): only there when a temporary window asked
   * for histograms (jprof.io/heap-histogram), since each pauses the JVM */
  async function heapSection(ctx) {
    const sec = JP.section('Heap by class, and what grows');
    sec.dataset.section = 'heap';
    ctx.out.append(sec);
    const done = loading(sec, 'the class histograms');
    const r = await JP.api('heap', Object.assign(scopeParams(ctx.s), { top: 20 }), ctx.signal);
    done();
    if (r.aborted) return;
    if (!r.ok) return sec.append(JP.failure(r, 'the class histograms'));
    sec.append(...JP.metaNotices(r.data.meta || {}, 'The class histograms'));
    const pods = r.data.pods || [];
    if (!pods.length) {
      return sec.append(JP.notice('empty', 'No class histogram of ' + whoText(ctx.s) + ' in this range. The agent takes them only when a temporary ' +
        'window asks for them (annotation jprof.io/heap-histogram, see jprof(7)): ' + r.data.pause_note + '.'));
    }
    sec.append(JP.notice('info', 'Taken only when a temporary window asks for them, because ' + r.data.pause_note + '.'));
    for (const p of pods) {
      const h = p.latest || {};
      const g = p.growth;
      const card = el('div', { class: 'heap-pod', dataset: { pod: p.target.pod || '' } });
      card.append(el('p', {}, 'Pod ', el('strong', { text: p.target.pod || '?' }), ' · ', JP.int(p.histograms),
        p.histograms === 1 ? ' histogram' : ' histograms', ', the latest at ', nsTime(h.time_ns), ': ', JP.fmtUnit(h.total_bytes, 'bytes'),
        ' in ', JP.int(h.total_instances), ' objects of ', JP.int(h.classes_total), ' classes; it paused the JVM ',
        el('strong', { text: JP.fmtUnit(h.took_ns, 'ns') }), h.all ? ' (-all: unreachable objects too)' : ''));
      if (g) {
        card.append(el('p', { class: 'summary' }, 'Growth over ', JP.fmtUnit(g.span_ns, 'ns'), ' (', JP.int(g.histograms), ' histograms): ',
          el('strong', { text: (g.total_bytes_per_min >= 0 ? '+' : '') + JP.fmtUnit(g.total_bytes_per_min, 'bytes') + '/min' }),
          g.approximate ? ' (approximate: a histogram listed only its biggest classes)' : ''));
        card.append(JP.table({
          name: 'growth', rows: g.classes || [], sort: 'bytes_per_min',
          cols: [
            { key: 'name', label: 'Class', render: (x) => el('code', { text: x.name }) },
            { key: 'bytes_per_min', label: 'Bytes/min', num: true, render: (x) => (x.bytes_per_min >= 0 ? '+' : '') + JP.fmtUnit(x.bytes_per_min, 'bytes') },
            { key: 'instances_per_min', label: 'Objects/min', num: true, render: (x) => (x.instances_per_min >= 0 ? '+' : '') + JP.int(Math.round(x.instances_per_min)) },
            { key: 'bytes_delta', label: 'Bytes grown', num: true, render: (x) => (x.bytes_delta >= 0 ? '+' : '') + JP.fmtUnit(x.bytes_delta, 'bytes') },
            { key: 'bytes_to', label: 'Bytes now', num: true, render: (x) => JP.fmtUnit(x.bytes_to, 'bytes') },
            { key: 'module', label: 'Module' },
          ],
        }));
      } else {
        card.append(el('p', { class: 'dim', text: 'One histogram in this range: the growth needs a second one.' }));
      }
      card.append(el('details', {}, el('summary', { text: 'The latest histogram, biggest classes' }), JP.table({
        name: 'histogram', rows: h.classes || [], sort: 'bytes',
        cols: [
          { key: 'name', label: 'Class', render: (x) => el('code', { text: x.name }) },
          { key: 'bytes', label: 'Bytes', num: true, render: (x) => JP.fmtUnit(x.bytes, 'bytes') },
          { key: 'instances', label: 'Objects', num: true, render: (x) => JP.int(x.instances) },
          { key: 'module', label: 'Module' },
        ],
      })));
      sec.append(card);
    }
  }

  V.memory = async (ctx) => {
    if (!needService(ctx)) return;
    const kind = ctx.s.kind === 'old' ? 'old' : 'alloc';
    ctx.out.append(JP.notice('info', 'Where memory is allocated (Allocations), which sampled objects stay alive and where they were allocated ' +
      '(Still alive: the JDK\'s old-object sampler), the heap by class and what grows (class histograms, when a temporary window asked for them), ' +
      'and GC pressure. Who holds an object (paths to GC roots) still needs a heap dump (jcmd PID GC.heap_dump and a heap analyser).'));
    ctx.out.append(el('p', { class: 'subnav', role: 'group', 'aria-label': 'Memory kind' },
      ['alloc', 'old'].map((k) => el('button', { type: 'button', class: 'mode', 'aria-pressed': String(k === kind), dataset: { kind: k },
        text: k === 'alloc' ? 'Allocations' : 'Still alive (old objects)', onclick: () => ctx.set({ kind: k }, true) }))));
    const pods = await podsOf(ctx);
    await Promise.all([flameSection(ctx, kind, pods), heapSection(ctx), gcSection(ctx)]);
  };

  V.wall = async (ctx) => {
    if (!needService(ctx)) return;
    const pods = await podsOf(ctx);
    await flameSection(ctx, 'wall', pods);
  };

  /* the code that waits for the network or the disk; hosts and paths are
   * never recorded, only the frames and the time blocked */
  V.io = async (ctx) => {
    if (!needService(ctx)) return;
    const pods = await podsOf(ctx);
    await flameSection(ctx, 'io', pods);
  };

  V.locks = async (ctx) => {
    if (!needService(ctx)) return;
    const kind = ctx.s.kind === 'park' ? 'park' : 'lock';
    const sw = el('p', { class: 'subnav', role: 'group', 'aria-label': 'Lock kind' },
      ['lock', 'park'].map((k) => el('button', { type: 'button', class: 'mode', 'aria-pressed': String(k === kind), dataset: { kind: k },
        text: k === 'lock' ? 'Monitors (synchronized)' : 'Parking (java.util.concurrent)', onclick: () => ctx.set({ kind: k }, true) })));
    ctx.out.append(sw);
    const pods = await podsOf(ctx);
    await Promise.all([flameSection(ctx, kind, pods), lockThreadsSection(ctx)]);
  };

  function cycleKey(t, d) {
    return (t.pod || '') + '|' + (d.threads || []).map((x) => x.name).sort().join(',');
  }

  function holdsText(h) {
    if (!h) return '—';
    if (Array.isArray(h)) return h.map(JP.lockText).join(', ');
    return JP.lockText(h);
  }

  function cycleCard(c) {
    const d = c.deadlock;
    const threads = d.threads || [];
    const names = threads.map((x) => x.name);
    const card = el('section', { class: 'card deadlock', dataset: { cycle: names.join(',') } },
      el('h2', {}, 'Deadlock: ', el('span', { class: 'bad', text: names.join(' ⇄ ') })),
      el('p', {}, 'Pod ', el('strong', { text: c.target.pod || '?' }), ' · seen ', JP.int(c.count), c.count === 1 ? ' time' : ' times',
        ', first ', JP.time(c.first), ', last ', JP.time(c.last),
        d.jvm_confirmed ? ' · confirmed by the JVM' : '', d.mixed ? ' · mixes monitors and ownable synchronizers' : '', c.source ? ' · ' + c.source : ''));
    const heldBy = (x, i) => {
      const want = JP.lockText(x.waits_for);
      const o = threads.find((y) => y !== x && holdsText(y.holds).split(', ').includes(want));
      return (o || threads[(i + 1) % threads.length] || {}).name || '—';
    };
    card.append(JP.table({
      name: 'cycle', rows: threads.map((x, i) => Object.assign({ held_by: heldBy(x, i), i }, x)), sort: 'i', desc: false,
      cols: [
        { key: 'name', label: 'Thread', render: (x) => el('strong', { text: x.name }) },
        { key: 'waits_for', label: 'Waits for', value: (x) => JP.lockText(x.waits_for), render: (x) => el('code', { text: JP.lockText(x.waits_for) }) },
        { key: 'kind', label: 'Lock kind', value: (x) => JP.lockKind(x.waits_for) },
        { key: 'held_by', label: 'Held by' },
        { key: 'holds', label: 'Holds', value: (x) => holdsText(x.holds), render: (x) => el('code', { text: holdsText(x.holds) }) },
      ],
    }));
    for (const x of threads) {
      const st = x.stack || [];
      card.append(el('details', { open: true }, el('summary', { text: 'Stack of ' + x.name + (st.length ? '' : ' (none recorded)') }),
        el('pre', { class: 'stack', text: st.map((f) => (typeof f === 'string' ? f : JSON.stringify(f))).join('\n') })));
    }
    return card;
  }

  V.deadlocks = async (ctx) => {
    if (!needService(ctx)) return;
    const s = ctx.s;
    const done = loading(ctx.out, 'deadlocks');
    const [dr, tr] = await Promise.all([
      JP.api('deadlocks', Object.assign(scopeParams(s), { limit: 500 }), ctx.signal),
      loadThreads(ctx),
    ]);
    done();
    if (dr.aborted) return;
    if (!dr.ok) {
      ctx.failed(dr);
      return ctx.out.append(JP.failure(dr, 'the deadlocks'));
    }
    ctx.out.append(rangeLine(dr.data.meta));
    ctx.out.append(...JP.metaNotices(dr.data.meta, 'The deadlock list'));
    const cycles = new Map();
    const add = (target, time, d, source) => {
      const k = cycleKey(target, d);
      let c = cycles.get(k);
      if (!c) cycles.set(k, (c = { target, deadlock: d, count: 0, first: time, last: time, source }));
      c.count++;
      if (time < c.first) c.first = time;
      if (time > c.last) {
        c.last = time;
        c.deadlock = d;
      }
      if (!c.deadlock.threads.some((x) => x.stack && x.stack.length) && d.threads.some((x) => x.stack && x.stack.length)) c.deadlock = d;
    };
    for (const e of dr.data.deadlocks || []) if (e.deadlock && e.deadlock.threads) add(e.target || {}, e.time, e.deadlock, 'reported by the agent');
    if (tr.ok) {
      for (const t of tr.data.targets || []) {
        for (const d of (t.summary && t.summary.deadlocks) || []) if (d.threads) add(t.target, t.time, d, 'found in the latest thread snapshot');
      }
    }
    if (!cycles.size) {
      return ctx.out.append(JP.notice('empty', 'No deadlock in ' + whoText(s) + ' in this range (nor in the latest thread snapshots).'));
    }
    ctx.out.append(el('p', { class: 'summary' }, JP.int(cycles.size) + (cycles.size === 1 ? ' deadlock cycle' : ' deadlock cycles') + ' in ' + whoText(s) + '.'));
    for (const c of cycles.values()) ctx.out.append(cycleCard(c));
  };

  /* ---- overview and status ---- */

  /* What the latest status says about enablement. Only what it says: a
   * status carries state, reason and message (and mode/until when the
   * agent sends them), so "continuous" or "temporary" is never guessed. */
  function enablement(t) {
    const st = t.state || 'unknown';
    const msg = t.message ? ' — ' + t.message : '';
    if (t.reason === 'disabled') return 'disabled' + msg;
    if (t.reason === 'window_expired') return 'temporary window ended' + msg;
    if (t.mode === 'disabled') return 'disabled' + msg;
    if (st === 'active') {
      const until = t.until ? ' until ' + new Date(t.until).toLocaleString() : '';
      /* "pushed": another profiler sent it (OTLP, Pyroscope), no agent decides */
      const mode = t.mode === 'temporary' ? 'temporary' + until : t.mode === 'continuous' ? 'continuous'
        : t.mode === 'pushed' ? 'pushed by another profiler' : 'enabled';
      return mode + (t.engine ? ' (' + t.engine + ')' : '') + msg;
    }
    return st + (t.reason ? ': ' + t.reason : '') + msg;
  }

  function servicesTable(ctx, services) {
    return JP.table({
      name: 'services', rows: services, sort: 'last_seen', desc: true, empty: 'No service with data in this range that this token may see.',
      onRow: (sv) => ctx.set({ namespace: sv.namespace, service: sv.service, pod: null, view: 'overview' }, true),
      cols: [
        { key: 'namespace', label: 'Namespace' },
        { key: 'service', label: 'Service', render: (sv) => el('strong', { text: sv.service }) },
        { key: 'pods', label: 'Pods', num: true },
        { key: 'kinds', label: 'Kinds', value: (sv) => (sv.kinds || []).join(', ') },
        { key: 'last_seen', label: 'Last seen', render: (sv) => JP.time(sv.last_seen) },
      ],
    });
  }

  async function ingestionSection(ctx) {
    const sec = JP.section('Ingestion health');
    ctx.out.append(sec);
    const r = await JP.api('ingestion', { from: ctx.s.from || '-24h', to: ctx.s.to }, ctx.signal);
    if (r.aborted) return;
    if (!r.ok) return sec.append(JP.failure(r, 'ingestion health'));
    const cs = r.data.collectors || [];
    sec.append(...JP.metaNotices(r.data.meta, 'The collector list'));
    sec.append(JP.table({
      name: 'ingestion', rows: cs, sort: 'last_seen', desc: true, empty: 'No agent sent anything in this range.',
      cols: [
        { key: 'collector', label: 'Collector', render: (c) => el('code', { text: c.collector }) },
        { key: 'version', label: 'Version' },
        { key: 'accepted', label: 'Accepted', num: true, render: (c) => JP.int(c.accepted) },
        { key: 'duplicate', label: 'Duplicate', num: true, render: (c) => JP.int(c.duplicate) },
        { key: 'rejected', label: 'Rejected', num: true, render: (c) => JP.int(c.rejected) + (c.last_reject_reason ? ' (last: ' + c.last_reject_reason + ')' : '') },
        { key: 'dropped', label: 'Dropped by the agent', num: true, value: (c) => (c.queue ? c.queue.dropped_batches : 0),
          render: (c) => (c.queue && c.queue.dropped_batches ? el('span', { class: 'bad' }, JP.int(c.queue.dropped_batches) + ' batches, ' + JP.fmtUnit(c.queue.dropped_bytes, 'bytes') + ', oldest ', JP.time(c.queue.oldest_dropped)) : 'none') },
        { key: 'last_seen', label: 'Last batch', render: (c) => JP.time(c.last_seen) },
        { key: 'last_heartbeat', label: 'Last heartbeat', render: (c) => JP.time(c.last_heartbeat) },
      ],
    }));
    const ss = r.data.server_since_start;
    if (ss) sec.append(el('p', { class: 'dim' }, 'Since this server started: ' + Object.entries(ss).map(([k, v]) => k.replace(/_/g, ' ') + ' ' + JP.int(v)).join(', ') + '.'));
  }

  async function retentionSection(ctx) {
    const sec = JP.section('Retention');
    ctx.out.append(sec);
    const r = await JP.api('retention', {}, ctx.signal);
    if (r.aborted) return;
    if (!r.ok) return sec.append(JP.failure(r, 'retention'));
    const d = r.data;
    const days = d.days || [];
    sec.append(el('p', {}, 'Keeps ', el('strong', { text: d.retention_days + ' days' }), ' (store: ' + d.store + '). Oldest data kept: ',
      days.length ? el('strong', { text: days[0].day }) : 'none', days.length ? [' (expires ', JP.time(days[0].expires), ')'] : '',
      '. Retention ran ' + JP.int(d.retention_runs) + ' times, removed ' + JP.int(d.days_removed) + ' days; last run ', JP.time(d.last_run), '.'));
    sec.append(JP.table({
      name: 'retention', rows: days, sort: 'day', desc: true,
      cols: [
        { key: 'day', label: 'Day (UTC)' },
        { key: 'windows', label: 'Windows', num: true, render: (x) => JP.int(x.windows) },
        { key: 'stack_rows', label: 'Stack rows', num: true, render: (x) => JP.int(x.stack_rows) },
        { key: 'documents', label: 'Documents', num: true, render: (x) => JP.int(x.documents) },
        { key: 'bytes', label: 'Size', num: true, render: (x) => JP.fmtUnit(x.bytes, 'bytes') },
        { key: 'expires', label: 'Expires', render: (x) => JP.time(x.expires) },
      ],
    }));
  }

  async function targetsSection(ctx, history) {
    const s = ctx.s;
    const sec = JP.section(history ? 'Status history' : 'Pods and JVMs');
    ctx.out.append(sec);
    const r = await JP.api('targets', Object.assign(scopeParams(s), { history_limit: history ? 500 : 50 }), ctx.signal);
    if (r.aborted) return null;
    if (!r.ok) {
      ctx.failed(r);
      sec.append(JP.failure(r, 'the targets'));
      return null;
    }
    const ts = r.data.targets || [];
    const hist = r.data.history || [];
    const latest = new Map();
    for (const h of hist) {
      const k = (h.target.pod || '') + '|' + (h.target.pid || '');
      if (!latest.has(k)) latest.set(k, h);
    }
    sec.append(...JP.metaNotices(r.data.meta, 'The target list'));
    if (!history) {
      if (!ts.length) {
        sec.append(JP.notice('empty', 'Empty: no pod of ' + whoText(s) + ' sent data or status in this range.'));
        return r.data;
      }
      sec.append(JP.table({
        name: 'targets', rows: ts, sort: 'last_seen', desc: true,
        cols: [
          { key: 'pod', label: 'Pod', value: (t) => t.target.pod, render: (t) => el('strong', { text: t.target.pod || '—' }) },
          { key: 'pid', label: 'PID', num: true, value: (t) => t.target.pid },
          { key: 'jvm', label: 'JVM', value: (t) => t.target.jvm || '' },
          { key: 'node', label: 'Node', value: (t) => t.target.node || '' },
          { key: 'profiling', label: 'Profiling', value: (t) => enablement(Object.assign({}, latest.get((t.target.pod || '') + '|' + (t.target.pid || '')) || {}, { state: t.state, reason: t.reason }, t.mode ? { mode: t.mode, until: t.until } : {})) },
          { key: 'kinds', label: 'Kinds', value: (t) => (t.kinds || []).join(', ') },
          { key: 'windows', label: 'Windows', num: true },
          { key: 'first_seen', label: 'First seen', render: (t) => JP.time(t.first_seen) },
          { key: 'last_seen', label: 'Last seen', render: (t) => JP.time(t.last_seen) },
        ],
      }));
      const reasons = hist.filter((h) => h.reason);
      sec.append(el('h3', { text: 'Status reasons' }));
      sec.append(reasons.length ? JP.table({
        name: 'reasons', rows: reasons.slice(0, 20), sort: 'time', desc: true,
        cols: [
          { key: 'time', label: 'Time', render: (h) => JP.time(h.time) },
          { key: 'pod', label: 'Pod', value: (h) => h.target.pod },
          { key: 'state', label: 'State' },
          { key: 'reason', label: 'Reason', render: (h) => el('strong', { text: h.reason }) },
          { key: 'message', label: 'Message' },
        ],
      }) : el('p', { class: 'dim', text: 'No target reported a problem in this range.' }));
      return r.data;
    }
    sec.append(JP.table({
      name: 'history', rows: hist, sort: 'time', desc: true, empty: 'No status in this range.', max: 500,
      cols: [
        { key: 'time', label: 'Time', render: (h) => JP.time(h.time) },
        { key: 'pod', label: 'Pod', value: (h) => h.target.pod },
        { key: 'pid', label: 'PID', num: true, value: (h) => h.target.pid },
        { key: 'state', label: 'State' },
        { key: 'reason', label: 'Reason' },
        { key: 'message', label: 'Message' },
        { key: 'engine', label: 'Engine' },
      ],
    }));
    return r.data;
  }

  async function kindsSection(ctx, kinds) {
    const s = ctx.s;
    const sec = JP.section('Last data per kind');
    ctx.out.append(sec);
    const all = ['cpu', 'alloc', 'lock', 'park', 'wall', 'io'];
    const rs = await Promise.all(all.map((k) => (kinds.includes(k) ? JP.api('top', Object.assign(scopeParams(s), { kind: k, limit: 1 }), ctx.signal) : null)));
    const rows = all.map((k, i) => {
      const r = rs[i];
      const m = r && r.ok ? r.data.meta : null;
      return { kind: k, enabled: !!r, samples: m ? m.samples : 0, total: m ? m.total : 0, unit: m ? m.value_unit || m.unit : '', first: m && m.first, last: m && m.last, partial: m && m.partial, error: r && !r.ok ? r.error : null };
    });
    sec.append(JP.table({
      name: 'kinds', rows, sort: 'kind', desc: false,
      cols: [
        { key: 'kind', label: 'Kind', render: (x) => el('strong', { text: x.kind }) },
        { key: 'samples', label: 'Events', num: true, render: (x) => (x.enabled ? JP.int(x.samples) : 'no data in range') },
        { key: 'total', label: 'Value', num: true, render: (x) => (x.enabled ? JP.fmtUnit(x.total, x.unit) : '—') },
        { key: 'first', label: 'First data', render: (x) => JP.time(x.first) },
        { key: 'last', label: 'Last data', render: (x) => (x.last ? el('span', {}, JP.time(x.last), ' (' + JP.ago(x.last) + ')') : '—') },
        { key: 'note', label: 'Note', value: (x) => (x.error ? 'error: ' + x.error : x.partial ? 'partial' : '') },
      ],
    }));
  }

  V.overview = async (ctx) => {
    const s = ctx.s;
    const done = loading(ctx.out, 'services');
    const r = await JP.api('services', { namespace: s.namespace || undefined, from: s.from, to: s.to }, ctx.signal);
    done();
    if (r.aborted) return;
    if (!r.ok) {
      ctx.failed(r);
      return ctx.out.append(JP.failure(r, 'the service list'));
    }
    const services = r.data.services || [];
    if (!s.service) {
      const sec = JP.section('Services this token may see');
      sec.append(...JP.metaNotices(r.data.meta, 'The service list'));
      if (!services.length) sec.append(JP.notice('empty', 'Empty: no service sent data in this range' + (s.namespace ? ' in namespace ' + s.namespace : '') + '.'));
      sec.append(servicesTable(ctx, services));
      ctx.out.append(sec);
      await Promise.all([ingestionSection(ctx), retentionSection(ctx)]);
      return;
    }
    const sv = services.find((x) => x.service === s.service && x.namespace === s.namespace);
    const head = JP.section('Service ' + s.service);
    ctx.out.append(head);
    if (!sv) {
      head.append(JP.notice('empty', 'Empty: service ' + s.service + ' in namespace ' + s.namespace + ' has no data and no status in this range.'));
    } else {
      head.append(el('p', {}, el('strong', { text: JP.int(sv.pods) }), sv.pods === 1 ? ' pod' : ' pods', ' in namespace ', el('strong', { text: sv.namespace }),
        '; kinds with data: ', (sv.kinds || []).join(', ') || 'none', '; last seen ', JP.time(sv.last_seen), ' (' + JP.ago(sv.last_seen) + ').'));
    }
    await targetsSection(ctx, false);
    await kindsSection(ctx, sv ? sv.kinds || [] : []);
    await Promise.all([ingestionSection(ctx), retentionSection(ctx)]);
  };

  V.status = async (ctx) => {
    if (!needService(ctx)) {
      await Promise.all([ingestionSection(ctx), retentionSection(ctx)]);
      return;
    }
    await targetsSection(ctx, true);
    await Promise.all([ingestionSection(ctx), retentionSection(ctx)]);
  };

  JP.views = V;
  JP.compareActive = compareActive;
})();
