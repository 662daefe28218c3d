/* app.js - the jprof page's shell: the state in the URL query (the
 * contract other tools link to), the token form (sessionStorage only), the
 * service / pod / range pickers, the view tabs, and back/forward.
 *
 * URL parameters: namespace, service, pod, kind (cpu|wall|alloc|lock|park|io),
 * from, to (the API's time syntax), view (overview|cpu|memory|locks|
 * deadlocks|wall|io|status), base_from, base_to, base_pod (the compare
 * baseline: any of them turns comparing on; base_pod= means every pod),
 * and for the flame views search, mode (reverse|sandwich), frame,
 * max_nodes, threads. */
'use strict';

(function () {
  const JP = window.JP;
  const el = JP.el;
  const VIEWS = ['overview', 'cpu', 'memory', 'locks', 'deadlocks', 'wall', 'io', 'status'];
  const VIEW_TITLES = { overview: 'Overview', cpu: 'CPU', memory: 'Memory', locks: 'Locks', deadlocks: 'Deadlocks', wall: 'Wall', io: 'I/O', status: 'Status' };
  const KIND_VIEW = { cpu: 'cpu', alloc: 'memory', old: 'memory', lock: 'locks', park: 'locks', wall: 'wall', io: 'io' };
  const VIEW_KIND = { cpu: 'cpu', memory: 'alloc', wall: 'wall', io: 'io' };
  const KEYS = ['namespace', 'service', 'pod', 'kind', 'from', 'to', 'view', 'base_from', 'base_to', 'base_pod', 'search', 'mode', 'frame', 'max_nodes', 'threads'];

  let state = null;
  let run = null; /* the running view: {abort, leave[]} */

  function readURL() {
    const q = new URLSearchParams(location.search);
    const s = {};
    for (const k of KEYS) s[k] = q.has(k) ? q.get(k) : null;
    if (!['cpu', 'wall', 'alloc', 'old', 'lock', 'park', 'io'].includes(s.kind)) s.kind = null;
    if (!VIEWS.includes(s.view)) s.view = s.kind ? KIND_VIEW[s.kind] : 'overview';
    if (VIEW_KIND[s.view] && !(s.view === 'memory' && s.kind === 'old')) s.kind = VIEW_KIND[s.view];
    if (s.view === 'locks' && s.kind !== 'park') s.kind = 'lock';
    if (!/^\d+$/.test(s.max_nodes || '')) s.max_nodes = null;
    s.from = s.from || '-1h';
    return s;
  }

  function urlOf(s) {
    const q = new URLSearchParams();
    for (const k of KEYS) {
      const v = s[k];
      if (v === null || v === undefined) continue;
      if (v === '' && k !== 'base_pod') continue;
      q.set(k, v);
    }
    const qs = q.toString();
    return location.pathname + (qs ? '?' + qs : '');
  }

  /* Changes the state; push adds a history entry (back/forward), otherwise
   * the current entry is replaced (typing a search). */
  function set(patch, push) {
    const next = Object.assign({}, state, patch);
    if (patch.view && VIEW_KIND[patch.view]) next.kind = VIEW_KIND[patch.view];
    if (patch.view === 'locks' && next.kind !== 'park') next.kind = 'lock';
    if (patch.view && patch.view !== state.view) {
      next.search = null;
      next.mode = null;
      next.frame = null;
    }
    const reload = KEYS.some((k) => !['search', 'mode', 'frame'].includes(k) && next[k] !== state[k]);
    state = next;
    const url = urlOf(state);
    if (push && reload) history.pushState(null, '', url);
    else history.replaceState(null, '', url);
    if (reload) render();
  }

  /* ---- header ---- */

  function tokenStatus() {
    const st = document.getElementById('token-state');
    const has = !!JP.token.get();
    st.textContent = has ? 'Token set for this browser tab (session only).' : 'No token: enter a read token.';
    document.getElementById('token-forget').hidden = !has;
  }

  function setupToken() {
    const form = document.getElementById('token-form');
    const input = document.getElementById('token');
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const t = input.value.trim();
      input.value = '';
      if (!t) return;
      JP.token.set(t);
      tokenStatus();
      render();
    });
    document.getElementById('token-forget').addEventListener('click', () => {
      JP.token.set('');
      tokenStatus();
      render();
    });
    tokenStatus();
  }

  function setupRange() {
    const form = document.getElementById('range-form');
    const from = document.getElementById('from');
    const to = document.getElementById('to');
    const preset = document.getElementById('preset');
    preset.addEventListener('change', () => {
      if (!preset.value) return;
      set({ from: preset.value, to: null }, true);
    });
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      set({ from: from.value.trim() || '-1h', to: to.value.trim() || null }, true);
    });
  }

  async function fillServices(signal) {
    const sel = document.getElementById('service');
    const podSel = document.getElementById('pod');
    const r = await JP.api('services', { from: state.from, to: state.to, namespace: undefined }, signal);
    JP.clear(sel);
    sel.append(el('option', { value: '', text: r.ok ? '— choose a service —' : '— services unavailable —' }));
    let services = r.ok ? r.data.services || [] : [];
    if (!r.ok && r.status === 403 && state.namespace) {
      /* a token scoped to some namespaces: ask for the one in the URL */
      const r2 = await JP.api('services', { namespace: state.namespace, from: state.from, to: state.to }, signal);
      services = r2.ok ? r2.data.services || [] : [];
    }
    const key = (ns, svc) => ns + '/' + svc;
    for (const sv of services) sel.append(el('option', { value: key(sv.namespace, sv.service), text: sv.namespace + ' / ' + sv.service }));
    if (state.service && !services.some((sv) => sv.service === state.service && sv.namespace === state.namespace)) {
      sel.append(el('option', { value: key(state.namespace, state.service), text: state.namespace + ' / ' + state.service + ' (no data in range)' }));
    }
    sel.value = state.service ? key(state.namespace, state.service) : '';
    JP.clear(podSel);
    podSel.append(el('option', { value: '', text: 'all pods' }));
    const sv = services.find((x) => x.service === state.service && x.namespace === state.namespace);
    const pods = sv ? [...new Set(sv.targets.map((t) => t.target.pod).filter(Boolean))].sort() : [];
    if (state.pod && !pods.includes(state.pod)) pods.push(state.pod);
    for (const p of pods) podSel.append(el('option', { value: p, text: p }));
    podSel.value = state.pod || '';
    podSel.disabled = !state.service;
  }

  function setupPickers() {
    document.getElementById('service').addEventListener('change', (e) => {
      const v = e.target.value;
      if (!v) return set({ namespace: null, service: null, pod: null }, true);
      const i = v.indexOf('/');
      set({ namespace: v.slice(0, i), service: v.slice(i + 1), pod: null, base_pod: null }, true);
    });
    document.getElementById('pod').addEventListener('change', (e) => set({ pod: e.target.value || null }, true));
  }

  function drawTabs() {
    const nav = document.getElementById('tabs');
    JP.clear(nav);
    for (const v of VIEWS) {
      const s = Object.assign({}, state, { view: v, kind: VIEW_KIND[v] || (v === 'locks' ? 'lock' : null), search: null, mode: null, frame: null });
      const a = el('a', { href: urlOf(s), class: 'tab', text: VIEW_TITLES[v], 'aria-current': v === state.view ? 'page' : null, dataset: { view: v } });
      a.addEventListener('click', (e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
        e.preventDefault();
        set({ view: v }, true);
      });
      nav.append(a);
    }
  }

  function drawHeader() {
    document.getElementById('from').value = state.from || '';
    document.getElementById('to').value = state.to || '';
    const preset = document.getElementById('preset');
    preset.value = [...preset.options].some((o) => o.value === state.from) && !state.to ? state.from : '';
    drawTabs();
    const who = state.service ? state.service + (state.pod ? ' / ' + state.pod : '') : 'all services';
    document.title = 'jprof — ' + VIEW_TITLES[state.view] + ' — ' + who;
  }

  /* ---- rendering a view ---- */

  async function render() {
    if (run) {
      run.abort.abort();
      run.leave.forEach((f) => f());
    }
    const out = document.getElementById('view');
    JP.clear(out);
    const auth = document.getElementById('auth-banner');
    JP.clear(auth);
    drawHeader();
    const me = { abort: new AbortController(), leave: [] };
    run = me;
    const ctx = {
      s: Object.assign({}, state),
      out,
      signal: me.abort.signal,
      set,
      onLeave: (f) => me.leave.push(f),
      failed: (r) => {
        if (r.status === 401 && run === me && !auth.firstChild) {
          auth.append(JP.notice('auth', 'Unauthorized: the server did not accept ' + (JP.token.get() ? 'this token' : 'a request without a token') + '. Enter a read token above.'));
          document.getElementById('token').focus();
        }
      },
    };
    out.dataset.view = state.view;
    out.dataset.state = 'loading';
    fillServices(me.abort.signal);
    try {
      await JP.views[state.view](ctx);
    } catch (e) {
      if (run === me) out.append(JP.notice('error', 'The page failed: ' + e.message));
      console.error(e);
    }
    if (run === me) out.dataset.state = 'done';
  }

  function boot() {
    state = readURL();
    history.replaceState(null, '', urlOf(state));
    setupToken();
    setupRange();
    setupPickers();
    window.addEventListener('popstate', () => {
      state = readURL();
      render();
    });
    render();
  }

  JP.app = { get state() { return state; }, set, urlOf: () => urlOf(state) };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
