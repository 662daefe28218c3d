/* flame.js - the flame graph of the jprof page, drawn on a canvas.
 *
 * JP.FlameView: toolbar (regex search with the matched share, flame /
 * callers / sandwich modes), breadcrumb, one canvas (two in sandwich mode:
 * callers above the frame, callees below), tooltips, keyboard. Click zooms,
 * the breadcrumb zooms out. In diff mode (a tree whose nodes carry
 * base_self/base_total) frames are coloured by how their share grew (red)
 * or shrank (blue) against the baseline.
 *
 * Speed: the JSON tree is turned once into plain node objects; a render
 * walks only nodes at least half a pixel wide and draws text only where it
 * fits, so 20,000 nodes draw in a few milliseconds (docs/PERFORMANCE.md). */
'use strict';

(function () {
  const JP = window.JP;
  const ROW = 18;
  const MIN_W = 0.5;

  /* ---- trees ---- */

  /* node: {n name, s self, t total, ss/ts samples (or -1), bs/bt baseline
   * (or -1), c children, p parent, d depth, col colour} */
  function mk(name, parent) {
    const d = parent ? parent.d + 1 : 0;
    return { n: name, s: 0, t: 0, ss: 0, ts: 0, bs: 0, bt: 0, c: [], p: parent, d, col: null };
  }

  function fromJSON(root) {
    const out = mk(root.name, null);
    let maxDepth = 0;
    let count = 0;
    const js = [root], ns = [out];
    while (js.length) {
      const j = js.pop(), n = ns.pop();
      count++;
      n.s = j.self;
      n.t = j.total;
      n.ss = j.self_samples ?? -1;
      n.ts = j.total_samples ?? -1;
      n.bs = j.base_self ?? -1;
      n.bt = j.base_total ?? -1;
      if (j.type) n.k = j.type; /* the frame's kind when the producer knows it (jprof-top) */
      if (n.d > maxDepth) maxDepth = n.d;
      const ch = j.children;
      if (!ch) continue;
      for (let i = 0; i < ch.length; i++) {
        const c = mk(ch[i].name, n);
        n.c.push(c);
        js.push(ch[i]);
        ns.push(c);
      }
    }
    return { root: out, maxDepth, count, diff: out.bt >= 0, samples: out.ts >= 0 };
  }

  /* A tree built from paths: add(path names root-first, node carrying the weights). */
  function builder(rootName, like) {
    const root = mk(rootName, null);
    root.ss = like.samples ? 0 : -1;
    root.ts = root.ss;
    root.bs = like.diff ? 0 : -1;
    root.bt = root.bs;
    let maxDepth = 0;
    let count = 1;
    const idx = new Map();
    function child(p, name) {
      let m = idx.get(p);
      if (!m) idx.set(p, (m = new Map()));
      let c = m.get(name);
      if (!c) {
        c = mk(name, p);
        c.ss = c.ts = p.ss < 0 ? -1 : 0;
        c.bs = c.bt = p.bs < 0 ? -1 : 0;
        p.c.push(c);
        m.set(name, c);
        count++;
        if (c.d > maxDepth) maxDepth = c.d;
      }
      return c;
    }
    function addw(n, w, self) {
      n.t += w.t;
      if (n.ts >= 0) n.ts += w.ts;
      if (n.bt >= 0) n.bt += w.bt;
      if (self) {
        n.s += w.t;
        if (n.ss >= 0) n.ss += w.ts;
        if (n.bs >= 0) n.bs += w.bt;
      }
    }
    return {
      add(names, w) {
        let n = root;
        addw(n, w, names.length === 0);
        for (let i = 0; i < names.length; i++) {
          n = child(n, names[i]);
          addw(n, w, i === names.length - 1);
        }
      },
      done() {
        sortTree(root);
        return { root, maxDepth, count, diff: like.diff, samples: like.samples };
      },
    };
  }

  function sortTree(root) {
    const st = [root];
    while (st.length) {
      const n = st.pop();
      n.c.sort((a, b) => b.t - a.t || b.bt - a.bt || (a.n < b.n ? -1 : 1));
      for (const c of n.c) st.push(c);
    }
  }

  function pathOf(n) {
    const names = [];
    for (let x = n; x && x.p; x = x.p) names.push(x.n);
    return names.reverse();
  }

  function each(root, fn) {
    const st = [root];
    while (st.length) {
      const n = st.pop();
      fn(n);
      for (let i = n.c.length - 1; i >= 0; i--) st.push(n.c[i]);
    }
  }

  /* Callers view: every stack's leaf first, up to the root. */
  function reverseTree(t) {
    const b = builder('all', t);
    each(t.root, (n) => {
      if (n === t.root || (n.s <= 0 && n.bs <= 0)) return;
      b.add(pathOf(n).reverse(), { t: n.s, ts: n.ss, bt: n.bs });
    });
    return b.done();
  }

  /* The outermost nodes named `name` (a recursive frame counts once). */
  function outermost(t, name) {
    const out = [];
    const st = [t.root];
    while (st.length) {
      const n = st.pop();
      if (n.n === name && n !== t.root) {
        out.push(n);
        continue;
      }
      for (const c of n.c) st.push(c);
    }
    return out;
  }

  /* Sandwich: the frame's callers (frame first, then its caller, ...) and
   * its callees (the frame's merged subtrees). */
  function sandwich(t, name) {
    const callers = builder(name, t);
    const callees = builder(name, t);
    for (const o of outermost(t, name)) {
      callers.add(pathOf(o.p).reverse(), { t: o.t, ts: o.ts, bt: o.bt });
      const base = o.d;
      each(o, (n) => {
        if (n.s > 0 || n.bs > 0) {
          const names = [];
          for (let x = n; x.d > base; x = x.p) names.push(x.n);
          callees.add(names.reverse(), { t: n.s, ts: n.ss, bt: n.bs });
        }
      });
    }
    return { callers: callers.done(), callees: callees.done() };
  }

  /* ---- colours (as jprof-top: Java green, inlined cyan, native yellow,
   * C++ orange, kernel purple, threads blue; the server sends names only,
   * so the kind is read from the name) ---- */

  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return (h >>> 0) / 4294967296;
  }

  JP.frameKind = function (name, depth, threads) {
    if (depth === 0) return 'root';
    if (threads && depth === 1) return 'thread';
    if (/_\[k\]$|^(entry_SYSCALL|do_syscall|__x64_sys|__do_sys|asm_|el0_)/.test(name)) return 'kernel';
    if (name.includes('::') || /^_Z/.test(name)) return 'cpp';
    if (/^\[.*\]$/.test(name)) return 'unknown';
    if (/^[A-Za-z_$][\w$]*(\.[\w$<>-]+)+$/.test(name) && !/\.so(\.|$)/.test(name)) {
      return /\$\$Lambda|\$Proxy|^jdk\.internal\./.test(name) ? 'inlined' : 'java';
    }
    return 'native';
  };

  const BASE = {
    root: [0, 0, 74], thread: [211, 60, 45], java: [145, 55, 48], inlined: [182, 55, 52],
    native: [48, 90, 55], cpp: [16, 85, 66], kernel: [262, 70, 70], unknown: [0, 0, 72],
  };

  /* A small palette, so drawing sets fillStyle once per colour, not once
   * per frame: 6 shades per frame kind, 12 steps each way for diffs. */
  const SHADES = 6;
  const PALETTE = [];
  const KIND_BASE = {};
  for (const [k, [h, sat, l]] of Object.entries(BASE)) {
    KIND_BASE[k] = PALETTE.length;
    for (let i = 0; i < SHADES; i++) {
      const v = i / (SHADES - 1) - 0.5;
      PALETTE.push('hsl(' + (h + v * 14).toFixed(0) + ',' + sat + '%,' + (l + v * 12).toFixed(0) + '%)');
    }
  }
  const DIFF_STEPS = 12;
  const DIFF_SAME = PALETTE.length;
  PALETTE.push('hsl(40,12%,86%)');
  const DIFF_UP = PALETTE.length;
  for (let i = 1; i <= DIFF_STEPS; i++) PALETTE.push('hsl(4,85%,' + (92 - (i / DIFF_STEPS) * 42).toFixed(0) + '%)');
  const DIFF_DOWN = PALETTE.length;
  for (let i = 1; i <= DIFF_STEPS; i++) PALETTE.push('hsl(214,80%,' + (92 - (i / DIFF_STEPS) * 42).toFixed(0) + '%)');
  const MATCH = PALETTE.length;
  PALETTE.push('hsl(300,100%,62%)');
  const NO_MATCH = PALETTE.length;
  PALETTE.push('#e4e4e4');
  const ANCESTOR = PALETTE.length;
  PALETTE.push('#d6d6d6');

  /* jprof's frame kinds (model/profile.h) onto the palette's */
  const TYPE_KIND = {
    interpreted: 'java', jit: 'java', c1: 'java', inlined: 'inlined', native: 'native',
    cpp: 'cpp', kernel: 'kernel', thread: 'thread', unknown: 'unknown',
  };

  function kindColour(n, threads) {
    const k = n.d && n.k ? TYPE_KIND[n.k] || 'unknown' : JP.frameKind(n.n, n.d, threads);
    return KIND_BASE[k] + Math.min(SHADES - 1, Math.floor(hash(n.n) * SHADES));
  }

  function diffColour(delta, maxAbs) {
    const i = Math.min(1, Math.abs(delta) / maxAbs);
    if (i < 0.04) return DIFF_SAME;
    const step = Math.max(1, Math.round(i * DIFF_STEPS)) - 1;
    return (delta > 0 ? DIFF_UP : DIFF_DOWN) + step;
  }

  /* Colours are computed when a frame is first drawn (most of a large tree
   * never is); a diff tree needs one numeric pass for its scale first. */
  function colourTree(t, threads) {
    if (!t.diff) {
      t.colour = (n) => kindColour(n, threads);
      return;
    }
    const rt = t.root.t || 1, rb = t.root.bt || 1;
    let maxAbs = 0.01;
    each(t.root, (n) => {
      n.col = null;
      n.delta = n.t / rt - n.bt / rb;
      if (n !== t.root) maxAbs = Math.max(maxAbs, Math.abs(n.delta));
    });
    t.colour = (n) => diffColour(n.delta, maxAbs);
  }

  /* ---- one canvas ---- */

  class FlameCanvas {
    /* opts: {up: draw root at the bottom, label, unit, owner (FlameView)} */
    constructor(parent, tree, opts) {
      this.tree = tree;
      this.opts = opts;
      this.zoom = tree.root;
      this.sel = null;
      this.matches = null;
      this.canvas = JP.el('canvas', {
        class: 'flame-canvas', tabindex: '0', role: 'img',
        'aria-label': opts.label + ': flame graph. Arrow keys move, Enter zooms, Escape zooms out, / searches.',
        dataset: { flame: opts.role || 'main' },
      });
      parent.append(this.canvas);
      this.canvas.addEventListener('mousemove', (e) => this.hover(e));
      this.canvas.addEventListener('mouseleave', () => opts.owner.tip(null));
      this.canvas.addEventListener('click', (e) => {
        const n = this.hit(e);
        if (n) {
          this.sel = n;
          this.setZoom(n === this.zoom && n.p ? n.p : n);
        }
      });
      this.canvas.addEventListener('keydown', (e) => this.key(e));
    }

    setZoom(n) {
      this.zoom = n;
      this.sel = n;
      this.opts.owner.zoomed(this);
      this.render();
    }

    /* Walks the visible nodes: fn(node, x, w, depth). */
    layout(W, fn) {
      const z = this.zoom;
      for (let a = z.p; a; a = a.p) fn(a, 0, W, a.d, true);
      if (z.t <= 0) return;
      const scale = W / z.t;
      const st = [z, 0];
      while (st.length) {
        const x = st.pop();
        const n = st.pop();
        const w = n.t * scale;
        fn(n, x, w, n.d, false);
        let cx = x;
        for (let i = 0; i < n.c.length; i++) {
          const c = n.c[i];
          const cw = c.t * scale;
          if (cw >= MIN_W) st.push(c, cx);
          cx += cw;
        }
      }
    }

    render() {
      const t0 = performance.now();
      const cv = this.canvas;
      const dpr = window.devicePixelRatio || 1;
      const W = Math.max(200, cv.parentElement.clientWidth);
      /* lay out first: the canvas is as tall as the deepest drawn row */
      const items = [];
      let maxD = 0;
      this.layout(W, (n, x, w, d, anc) => {
        items.push(n, x, w, anc);
        if (d > maxD) maxD = d;
      });
      const H = (this.H = (maxD + 1) * ROW);
      if (cv.width !== Math.round(W * dpr) || cv.height !== Math.round(H * dpr)) {
        cv.width = Math.round(W * dpr);
        cv.height = Math.round(H * dpr);
        cv.style.width = W + 'px';
        cv.style.height = H + 'px';
      }
      const ctx = cv.getContext('2d', { alpha: false });
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, W, H);
      ctx.font = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
      ctx.textBaseline = 'middle';
      if (!this.charW) this.charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz.ABCDEFGH').width / 35;
      const up = this.opts.up;
      const m = this.matches;
      const rowsHit = (this.rowsHit = []);
      const texts = [];
      /* rectangles grouped by colour: one fillStyle and one fill per colour */
      const groups = new Array(PALETTE.length);
      for (let i = 0; i < items.length; i += 4) {
        const n = items[i], x = items[i + 1], w = items[i + 2], anc = items[i + 3];
        const d = n.d;
        const y = up ? H - (d + 1) * ROW : d * ROW;
        (rowsHit[d] || (rowsHit[d] = [])).push(x, w, n);
        let col = n.col;
        if (col === null) col = n.col = this.tree.colour(n);
        if (m) col = m.has(n) ? MATCH : NO_MATCH;
        if (anc) col = ANCESTOR;
        (groups[col] || (groups[col] = [])).push(x, y + 1, w > 1.5 ? w - 1 : w);
        if (w > 28) texts.push(n, x, y, w);
      }
      for (let g = 0; g < groups.length; g++) {
        const r = groups[g];
        if (!r) continue;
        ctx.fillStyle = PALETTE[g];
        ctx.beginPath();
        for (let i = 0; i < r.length; i += 3) ctx.rect(r[i], r[i + 1], r[i + 2], ROW - 2);
        ctx.fill();
      }
      ctx.fillStyle = '#111';
      for (let i = 0; i < texts.length; i += 4) {
        const n = texts[i], x = texts[i + 1], y = texts[i + 2], w = texts[i + 3];
        const label = fit(n.n, Math.floor((w - 6) / this.charW));
        if (label) ctx.fillText(label, x + 3, y + ROW / 2);
      }
      if (this.sel) {
        const s = this.find(this.sel);
        if (s) {
          ctx.strokeStyle = '#000';
          ctx.lineWidth = 2;
          ctx.strokeRect(s.x + 1, (up ? H - (this.sel.d + 1) * ROW : this.sel.d * ROW) + 1, Math.max(s.w - 2, 1), ROW - 2);
        }
      }
      const drawn = items.length / 4;
      const ms = performance.now() - t0;
      cv.dataset.renderMs = ms.toFixed(2);
      cv.dataset.drawn = String(drawn);
      JP.lastFlameRender = { ms, drawn, nodes: this.tree.count };
    }

    find(n) {
      const r = this.rowsHit[n.d];
      if (!r) return null;
      for (let i = 0; i < r.length; i += 3) if (r[i + 2] === n) return { x: r[i], w: r[i + 1] };
      return null;
    }

    hitXY(x, y) {
      const H = this.H || ROW;
      const d = this.opts.up ? Math.floor((H - y) / ROW) : Math.floor(y / ROW);
      const r = this.rowsHit && this.rowsHit[d];
      if (!r) return null;
      for (let i = 0; i < r.length; i += 3) if (x >= r[i] && x < r[i] + r[i + 1]) return r[i + 2];
      return null;
    }

    hit(e) {
      const b = this.canvas.getBoundingClientRect();
      return this.hitXY(e.clientX - b.left, e.clientY - b.top);
    }

    hover(e) {
      const n = this.hit(e);
      this.canvas.style.cursor = n ? 'pointer' : 'default';
      this.opts.owner.tip(n ? { n, tree: this.tree, x: e.clientX, y: e.clientY } : null);
    }

    /* Neighbours in the drawn row, for the arrow keys. */
    rowNeighbour(n, dir) {
      const r = this.rowsHit[n.d] || [];
      const nodes = [];
      for (let i = 0; i < r.length; i += 3) nodes.push([r[i], r[i + 2]]);
      nodes.sort((a, b) => a[0] - b[0]);
      const i = nodes.findIndex((x) => x[1] === n);
      const j = i + dir;
      return j >= 0 && j < nodes.length ? nodes[j][1] : n;
    }

    key(e) {
      const owner = this.opts.owner;
      let s = this.sel || this.zoom;
      const up = this.opts.up;
      let handled = true;
      switch (e.key) {
        case 'ArrowLeft': s = this.rowNeighbour(s, -1); break;
        case 'ArrowRight': s = this.rowNeighbour(s, 1); break;
        case 'ArrowUp': s = up ? (s.c.find((c) => this.find(c)) || s) : s.p || s; break;
        case 'ArrowDown': s = up ? s.p || s : s.c.find((c) => this.find(c)) || s; break;
        case 'Enter': this.setZoom(s); break;
        case 'Escape': case 'Backspace': if (this.zoom.p) this.setZoom(this.zoom.p); break;
        case 'Home': this.setZoom(this.tree.root); break;
        case '/': owner.focusSearch(); break;
        case 'r': owner.setMode(owner.mode === 'reverse' ? 'flame' : 'reverse'); return e.preventDefault();
        case 's': owner.sandwichOf(s.n); return e.preventDefault();
        default: handled = false;
      }
      if (!handled) return;
      e.preventDefault();
      this.sel = s;
      this.render();
      owner.announce(s, this.tree);
    }
  }

  /* The label that fits in `chars` characters: the whole name, else
   * Class.method, else a cut one. */
  function fit(name, chars) {
    if (chars < 3) return '';
    if (name.length <= chars) return name;
    const parts = name.split('.');
    if (parts.length > 2) {
      const short = parts.slice(-2).join('.');
      if (short.length <= chars) return short;
      return short.slice(0, chars - 1) + '…';
    }
    return name.slice(0, chars - 1) + '…';
  }

  /* ---- the view: toolbar, breadcrumb, canvases, tooltip ---- */

  class FlameView {
    /* opts: {kind, unit, threads, onView(tree, zoomNode, mode), search, onSearch(text)} */
    constructor(parent, opts) {
      this.opts = opts;
      this.mode = 'flame';
      this.box = JP.el('div', { class: 'flame' });
      const searchId = 'flame-search-' + Math.random().toString(36).slice(2, 8);
      this.search = JP.el('input', { type: 'search', id: searchId, placeholder: 'regex, e.g. Checkout|Tax', autocomplete: 'off', spellcheck: 'false' });
      this.search.addEventListener('input', () => {
        clearTimeout(this.st);
        this.st = setTimeout(() => this.applySearch(true), 150);
      });
      this.search.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') this.applySearch(true);
        if (e.key === 'Escape') {
          this.search.value = '';
          this.applySearch(true);
        }
      });
      this.modeButtons = {};
      const mb = (mode, label, title) => {
        const b = JP.el('button', { type: 'button', class: 'mode', text: label, title, 'aria-pressed': 'false', dataset: { mode } });
        b.addEventListener('click', () => (mode === 'sandwich' ? this.sandwichOf(this.pickSandwich()) : this.setMode(mode)));
        this.modeButtons[mode] = b;
        return b;
      };
      this.matchInfo = JP.el('span', { class: 'match-info', role: 'status', 'aria-live': 'polite' });
      this.crumbs = JP.el('nav', { class: 'crumbs', 'aria-label': 'Zoom path' });
      this.live = JP.el('p', { class: 'sr-only', 'aria-live': 'polite' });
      this.tipBox = JP.el('div', { class: 'tip', role: 'tooltip', hidden: true });
      this.stage = JP.el('div', { class: 'flame-stage' });
      this.box.append(
        JP.el('div', { class: 'flame-tools' },
          JP.el('label', { for: searchId, text: 'Search' }), this.search,
          JP.el('span', { class: 'modes', role: 'group', 'aria-label': 'Flame graph mode' },
            mb('flame', 'Flame', 'callees of the root, heaviest first'),
            mb('reverse', 'Reverse', 'callers: each stack from its leaf (key r)'),
            mb('sandwich', 'Sandwich', 'callers above and callees below the selected frame (key s)')),
          this.matchInfo),
        this.crumbs, this.live, this.stage, this.tipBox);
      parent.append(this.box);
      this.onResize = () => this.canvases && this.canvases.forEach((c) => c.render());
      window.addEventListener('resize', this.onResize);
    }

    destroy() {
      window.removeEventListener('resize', this.onResize);
    }

    /* tree: the API's JSON tree (flamegraph or flamegraph/diff). */
    setData(json, threads) {
      const t0 = performance.now();
      this.threads = !!threads;
      this.base = fromJSON(json);
      colourTree(this.base, this.threads);
      this.buildMs = performance.now() - t0;
      if (this.opts.search) this.search.value = this.opts.search;
      if (this.opts.mode === 'reverse') this.setMode('reverse');
      else if (this.opts.sandwich) this.sandwichOf(this.opts.sandwich);
      else this.setMode('flame');
      const ms = performance.now() - t0;
      this.box.dataset.loadMs = ms.toFixed(2);
      JP.lastFlameLoad = { ms, buildMs: this.buildMs, nodes: this.base.count };
    }

    setMode(mode, frame) {
      this.mode = mode;
      for (const [m, b] of Object.entries(this.modeButtons)) b.setAttribute('aria-pressed', String(m === mode));
      JP.clear(this.stage);
      this.canvases = [];
      this.frame = frame || null;
      const common = { owner: this, unit: this.opts.unit };
      if (mode === 'sandwich') {
        const sw = sandwich(this.base, frame);
        colourTree(sw.callers, false);
        colourTree(sw.callees, false);
        this.sw = sw;
        const top = JP.el('div', { class: 'sandwich-part' }, JP.el('h3', { text: 'Callers of ' + frame }));
        const bottom = JP.el('div', { class: 'sandwich-part' }, JP.el('h3', { text: 'Callees of ' + frame }));
        this.stage.append(top, bottom);
        this.canvases.push(new FlameCanvas(top, sw.callers, Object.assign({ up: true, label: 'Callers of ' + frame, role: 'callers' }, common)));
        this.canvases.push(new FlameCanvas(bottom, sw.callees, Object.assign({ up: false, label: 'Callees of ' + frame, role: 'callees' }, common)));
      } else {
        const t = mode === 'reverse' ? (this.rev || (this.rev = reverseTree(this.base))) : this.base;
        if (mode === 'reverse') colourTree(t, false);
        this.canvases.push(new FlameCanvas(this.stage, t, Object.assign({ up: false, label: mode === 'reverse' ? 'Callers (reverse)' : 'Flame graph', role: mode }, common)));
      }
      this.applySearch(false); /* renders every canvas */
      this.zoomed(this.canvases[this.canvases.length - 1]);
      if (this.opts.onMode) this.opts.onMode(mode, frame);
    }

    /* The frame a sandwich is about: the selected one, else a search that
     * names a frame exactly, else the heaviest self frame. */
    pickSandwich() {
      const c = this.canvases && this.canvases[0];
      if (c && c.sel && c.sel.p) return c.sel.n;
      const q = this.search.value.replace(/^\^|\$$/g, '');
      if (q && outermost(this.base, q).length) return q;
      let best = null;
      each(this.base.root, (n) => {
        if (n.p && (!best || n.s > best.s)) best = n;
      });
      return best ? best.n : null;
    }

    sandwichOf(name) {
      if (!name || name === 'all') return;
      this.setMode('sandwich', name);
    }

    focusSearch() {
      this.search.focus();
      this.search.select();
    }

    setSearch(text) {
      this.search.value = text;
      this.applySearch(true);
    }

    applySearch(notify) {
      const q = this.search.value;
      let re = null;
      this.matchInfo.textContent = '';
      this.search.removeAttribute('aria-invalid');
      if (q) {
        try {
          re = new RegExp(q);
        } catch (e) {
          this.search.setAttribute('aria-invalid', 'true');
          this.matchInfo.textContent = 'Invalid regex: ' + e.message;
        }
      }
      for (const c of this.canvases || []) {
        if (!re) {
          c.matches = null;
        } else {
          const m = new Set();
          each(c.tree.root, (n) => {
            if (n.p && re.test(n.n)) m.add(n);
          });
          c.matches = m;
        }
        c.render();
      }
      if (re) this.showShare(re);
      if (notify && this.opts.onSearch) this.opts.onSearch(q);
    }

    /* Share of the zoomed view's weight in stacks through a match, each
     * stack once (a matched node under a matched node is not added again). */
    showShare(re) {
      const c = this.canvases[this.canvases.length - 1];
      const z = c.zoom;
      let sum = 0, frames = 0;
      const st = [z];
      while (st.length) {
        const n = st.pop();
        if (n.p && re.test(n.n)) {
          sum += n.t;
          frames++;
          continue;
        }
        for (const ch of n.c) st.push(ch);
      }
      const share = z.t ? sum / z.t : 0;
      this.matchInfo.dataset.share = share.toFixed(4);
      this.matchInfo.textContent = frames
        ? 'Matched: ' + JP.pct(share) + ' of ' + (z.p ? 'the zoomed frame' : 'all') + ' (' + JP.fmtUnit(sum, this.opts.unit) + ')'
        : 'No frame matches /' + re.source + '/';
    }

    zoomed(c) {
      JP.clear(this.crumbs);
      const path = [];
      for (let n = c.zoom; n; n = n.p) path.unshift(n);
      path.forEach((n, i) => {
        if (i) this.crumbs.append(JP.el('span', { class: 'sep', 'aria-hidden': 'true', text: '›' }));
        const last = i === path.length - 1;
        const b = JP.el('button', { type: 'button', class: 'crumb', text: n.p ? n.n : this.mode === 'sandwich' ? n.n : 'all', 'aria-current': last ? 'true' : null, title: n.n });
        b.addEventListener('click', () => c.setZoom(n));
        this.crumbs.append(b);
      });
      if (this.search.value && c === this.canvases[this.canvases.length - 1]) {
        try {
          this.showShare(new RegExp(this.search.value));
        } catch (e) {
          /* shown by applySearch */
        }
      }
      if (this.opts.onView) this.opts.onView(c.tree, c.zoom, this.mode, this.frame);
    }

    describe(n, tree) {
      const u = this.opts.unit;
      const root = tree.root;
      const lines = [[n.n, '']];
      lines.push(['Total', JP.fmtUnit(n.t, u) + ' (' + JP.pct(root.t ? n.t / root.t : 0) + ')' + (n.ts >= 0 ? ', ' + JP.int(n.ts) + ' ' + (this.opts.sampleWord || 'samples') : '')]);
      lines.push(['Self', JP.fmtUnit(n.s, u) + ' (' + JP.pct(root.t ? n.s / root.t : 0) + ')' + (n.ss >= 0 ? ', ' + JP.int(n.ss) + ' ' + (this.opts.sampleWord || 'samples') : '')]);
      if (tree.diff) {
        const bs = root.bt ? n.bt / root.bt : 0;
        const cs = root.t ? n.t / root.t : 0;
        lines.push(['Baseline', JP.fmtUnit(n.bt, u) + ' (' + JP.pct(bs) + '), self ' + JP.fmtUnit(n.bs, u)]);
        lines.push(['Change', JP.pp(cs - bs) + ' of the total']);
      }
      return lines;
    }

    tip(h) {
      if (!h) {
        this.tipBox.hidden = true;
        return;
      }
      JP.clear(this.tipBox);
      const lines = this.describe(h.n, h.tree);
      this.tipBox.append(JP.el('strong', { text: lines[0][0] }));
      for (const [k, v] of lines.slice(1)) this.tipBox.append(JP.el('div', {}, JP.el('span', { class: 'k', text: k + ': ' }), v));
      this.tipBox.hidden = false;
      const b = this.box.getBoundingClientRect();
      const tw = this.tipBox.offsetWidth, th = this.tipBox.offsetHeight;
      let x = h.x - b.left + 14, y = h.y - b.top + 14;
      if (x + tw > b.width) x = Math.max(0, h.x - b.left - tw - 14);
      if (h.y + th + 20 > window.innerHeight) y = h.y - b.top - th - 14;
      this.tipBox.style.left = x + 'px';
      this.tipBox.style.top = y + 'px';
    }

    announce(n, tree) {
      this.live.textContent = this.describe(n, tree).map((l) => l.filter(Boolean).join(': ')).join('. ');
    }
  }

  /* Top table rows of a subtree: per frame self, and total counted once
   * per stack (a recursive frame is not added again below itself). */
  JP.topOf = function (zoom) {
    const rows = new Map();
    const onPath = new Map();
    const st = [[zoom, false]];
    while (st.length) {
      const [n, exit] = st.pop();
      if (n.p === null) {
        if (!exit) {
          st.push([n, true]);
          for (const c of n.c) st.push([c, false]);
        }
        continue;
      }
      if (exit) {
        onPath.set(n.n, onPath.get(n.n) - 1);
        continue;
      }
      let r = rows.get(n.n);
      if (!r) rows.set(n.n, (r = { name: n.n, self: 0, total: 0, self_samples: n.ss >= 0 ? 0 : null, total_samples: n.ts >= 0 ? 0 : null, base_self: 0, base_total: 0 }));
      r.self += n.s;
      if (n.ss >= 0) r.self_samples += n.ss;
      if (n.bs >= 0) r.base_self += n.bs;
      if (!onPath.get(n.n)) {
        r.total += n.t;
        if (n.ts >= 0) r.total_samples += n.ts;
        if (n.bt >= 0) r.base_total += n.bt;
      }
      onPath.set(n.n, (onPath.get(n.n) || 0) + 1);
      st.push([n, true]);
      for (const c of n.c) st.push([c, false]);
    }
    return [...rows.values()];
  };

  JP.FlameView = FlameView;
  JP.flameInternals = { fromJSON, reverseTree, sandwich, fit };
})();
