/* export.js - starts the flame graph of a file written by
 * `jprof-top -b --format html`: the profile is the JSON document of
 * `--format json` in <script id="jprof-data">; the flame graph and the top
 * table are the page's own (flame.js, util.js). Nothing is fetched. */
'use strict';

(function () {
  const JP = window.JP;
  const el = JP.el;
  const data = JSON.parse(document.getElementById('jprof-data').textContent);
  const meta = data.meta || {};
  const kind = meta.kind || 'cpu';
  /* jprof-top: unit is the kind's, value says the measure; jprof-server:
   * unit is the measure's, value_unit the kind's */
  const unit = meta.value ? (meta.value === 'total' ? meta.unit : 'samples') : meta.unit;
  const valueUnit = meta.value_unit || meta.unit;
  const sampleWord = (JP.SAMPLE_WORDS && JP.SAMPLE_WORDS[kind]) || 'samples';

  document.getElementById('export-title').textContent = data.title + ' — ' + kind;
  const head = document.getElementById('export-meta');
  const start = meta.start || meta.first, end = meta.end || meta.last;
  const span = start && end ? ', ' + start + ' – ' + end : '';
  head.append(el('p', { class: 'dim', text:
    kind + ': ' + JP.int(meta.samples) + ' ' + sampleWord + ', ' +
    JP.fmtUnit(meta.total, valueUnit) + ' in all' + span +
    '; widths by ' + (unit === 'samples' ? sampleWord : unit) }));
  if (meta.partial) head.append(JP.notice('partial', 'Partial: the recording is damaged; what was read is shown. ' + (meta.error || '')));
  for (const w of meta.warnings || []) head.append(JP.notice('info', w));
  if (!meta.samples) head.append(JP.notice('empty', 'Empty: no ' + kind + ' data in this profile.'));

  const topBox = document.getElementById('export-top');
  const fv = new JP.FlameView(document.getElementById('export-flame'), {
    kind, unit, sampleWord,
    onView: (tree, zoom, mode, frame) => drawTop(tree, zoom, mode, frame),
  });
  const cols = [
    { key: 'name', label: 'Frame', render: (r) => el('code', { text: r.name }) },
    { key: 'self', label: 'Self', num: true, render: (r) => JP.fmtUnit(r.self, unit) },
    { key: 'self_pct', label: 'Self %', num: true, render: (r) => JP.pct(r.self_pct) },
    { key: 'total', label: 'Total', num: true, render: (r) => JP.fmtUnit(r.total, unit) },
    { key: 'total_pct', label: 'Total %', num: true, render: (r) => JP.pct(r.total_pct) },
  ];
  function drawTop(tree, zoom, mode, frame) {
    JP.clear(topBox);
    const where = mode === 'sandwich' ? 'the sandwich of ' + frame : zoom.p ? zoom.n : mode === 'reverse' ? 'the callers view' : 'the graph';
    topBox.append(el('h3', { text: 'Top frames under ' + where + ' (click a row to search it)' }));
    const all = fv.base.root.t || 1;
    const rows = JP.topOf(zoom).map((r) => Object.assign({}, r, { self_pct: r.self / all, total_pct: r.total / all }));
    const onRow = (r) => fv.setSearch('^' + r.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + '$');
    topBox.append(JP.table({ name: 'top', cols, rows, sort: 'self', desc: true, onRow, max: 100 }));
  }
  fv.setData(data.tree, !!data.threads);
  JP.lastFlame = { view: fv, tree: data.tree }; /* for the browser test */
})();
