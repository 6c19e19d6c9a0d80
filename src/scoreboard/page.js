// The scoreboard's script. Every string of the data (case names, runtime messages, paths)
// reaches the page through textContent or setAttribute, never as markup.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('data').textContent);
  var CATS = data.legend.map(function (l) { return l.id; });
  var GLYPH = {};
  data.legend.forEach(function (l) { GLYPH[l.id] = l.glyph; });
  var MAX_ROWS = 500;
  var state = {
    op: '',
    trait: '',
    verdicts: new Set(CATS),
    runtimes: new Set(data.runtimes.map(function (_, i) { return i; })),
    cell: null // {grid: 'ops' | 'traits', key, rt}
  };

  // An element with attributes (set as attributes) and children (strings become text nodes).
  function el(tag, attrs) {
    var e = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, String(attrs[k]));
      });
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return e;
  }
  function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
  function opOf(v) { return v.replace(/-\d+$/, ''); }
  function ms(n) { return n >= 1000 ? (n / 1000).toFixed(1) + ' s' : n + ' ms'; }
  function swatch(cat) {
    return el('span', { 'class': 'swatch ' + cat, 'aria-hidden': 'true' }, GLYPH[cat]);
  }
  function emptyCounts() { var c = {}; CATS.forEach(function (k) { c[k] = 0; }); return c; }
  function total(c) { return CATS.reduce(function (s, k) { return s + c[k]; }, 0); }
  function describe(c) {
    return CATS.filter(function (k) { return c[k] > 0; })
      .map(function (k) { return GLYPH[k] + ' ' + c[k] + ' ' + k; }).join(', ');
  }

  // ---- header, legend, notes
  document.getElementById('title').textContent = data.tool.name + ' ' + data.tool.version +
    (data.kind === 'hunt' ? ': hunt scoreboard' : ': scoreboard');
  document.getElementById('meta').textContent = (data.kind === 'hunt' ? 'Hunt output: ' : 'Paths: ') +
    data.paths.join(', ') + ' · wall time ' + ms(data.wall_ms);
  (function runtimesTable() {
    var t = document.getElementById('runtimes');
    var head = el('tr', null, el('th', { scope: 'col' }, 'Runtime'), el('th', { scope: 'col' }, 'Version'));
    CATS.forEach(function (k) { head.appendChild(el('th', { scope: 'col' }, GLYPH[k] + ' ' + k)); });
    head.appendChild(el('th', { scope: 'col' }, 'total'));
    head.appendChild(el('th', { scope: 'col' }, 'time'));
    t.tHead.appendChild(head);
    data.runtimes.forEach(function (r) {
      var tr = el('tr', null, el('th', { scope: 'row' }, r.name), el('td', null, r.version || '—'));
      CATS.forEach(function (k) { tr.appendChild(el('td', { 'class': 'n' }, String(r.totals[k]))); });
      tr.appendChild(el('td', { 'class': 'n' }, String(total(r.totals))));
      tr.appendChild(el('td', { 'class': 'n' }, ms(r.duration_ms)));
      t.tBodies[0].appendChild(tr);
    });
  })();
  data.legend.forEach(function (l) {
    document.getElementById('legend').appendChild(
      el('li', null, swatch(l.id), el('strong', null, l.id), ' ' + l.maps));
  });
  document.getElementById('notes').textContent = data.notes.join(' ');

  // ---- findings (a hunt)
  function safeHref(h) { return /^[a-z][a-z0-9+.-]*:/i.test(h) ? null : h; }
  if (data.findings) {
    var fs = document.getElementById('findings');
    document.getElementById('findings-section').hidden = false;
    if (data.findings.length === 0) fs.appendChild(el('p', null, 'No findings.'));
    var classes = [];
    data.findings.forEach(function (f) { if (classes.indexOf(f.class) < 0) classes.push(f.class); });
    classes.forEach(function (cls) {
      var of = data.findings.filter(function (f) { return f.class === cls; });
      fs.appendChild(el('h3', { 'class': 'sev' }, of[0].title + ' (' + of.length + ')'));
      of.forEach(function (f) {
        var link = safeHref(f.report);
        fs.appendChild(el('article', { 'class': 'finding ' + cls, 'data-case': f.case },
          el('div', null, el('strong', null, f.operators), ' on ' + f.dtypes.join(', ') +
            ' · seen ' + f.seen + (f.seen === 1 ? ' time' : ' times') +
            (f.diagnosis && f.diagnosis !== 'none' ? ' · diagnosis: ' + f.diagnosis : '')),
          el('div', null, 'Minimal case: ', el('code', null, f.case), ' · ',
            el('a', { href: link }, 'REPORT.md')),
          el('div', { 'class': 'cols' },
            el('div', null, el('strong', null, 'Expected'), el('pre', null, f.expected || '—')),
            el('div', null, el('strong', null, 'Actual'), el('pre', null, f.actual || '—'))),
          el('div', null, el('strong', null, 'Runtime message'), el('pre', null, f.reason || '—'))));
      });
    });
  }

  // ---- filters
  function option(value, text) { return el('option', { value: value }, text); }
  var fOp = document.getElementById('f-op');
  var fTrait = document.getElementById('f-trait');
  fOp.appendChild(option('', 'all'));
  var ops = [];
  data.ops.forEach(function (r) { var o = opOf(r.key); if (ops.indexOf(o) < 0) ops.push(o); });
  ops.forEach(function (o) { fOp.appendChild(option(o, o)); });
  fTrait.appendChild(option('', 'all'));
  data.traits.forEach(function (r) { fTrait.appendChild(option(r.key, r.key)); });
  var fVerdicts = document.getElementById('f-verdicts');
  CATS.forEach(function (k) {
    fVerdicts.appendChild(el('label', null,
      el('input', { type: 'checkbox', value: k, checked: '', 'data-filter': 'verdict' }), ' ' + GLYPH[k] + ' ' + k));
  });
  var fRuntimes = document.getElementById('f-runtimes');
  data.runtimes.forEach(function (r, i) {
    fRuntimes.appendChild(el('label', null,
      el('input', { type: 'checkbox', value: String(i), checked: '', 'data-filter': 'runtime' }), ' ' + r.name));
  });
  function readFilters() {
    state.op = fOp.value;
    state.trait = fTrait.value;
    state.verdicts = new Set();
    state.runtimes = new Set();
    document.querySelectorAll('input[data-filter]').forEach(function (i) {
      if (!i.checked) return;
      if (i.getAttribute('data-filter') === 'verdict') state.verdicts.add(i.value);
      else state.runtimes.add(Number(i.value));
    });
  }
  function writeFilters() {
    fOp.value = state.op;
    fTrait.value = state.trait;
    document.querySelectorAll('input[data-filter]').forEach(function (i) {
      i.checked = i.getAttribute('data-filter') === 'verdict' ? state.verdicts.has(i.value)
        : state.runtimes.has(Number(i.value));
    });
  }
  document.getElementById('filters').addEventListener('change', function () {
    readFilters();
    render();
    writeHash();
  });

  // ---- grids
  function caseShown(c) {
    if (state.op && !c.ops.some(function (o) { return opOf(o) === state.op; })) return false;
    if (state.trait && c.traits.indexOf(state.trait) < 0) return false;
    return true;
  }
  function rowShown(grid, key) {
    if (grid === 'ops') return !state.op || opOf(key) === state.op;
    return !state.trait || key === state.trait;
  }
  function keysOf(grid, c) { return grid === 'ops' ? c.ops : c.traits; }
  function verdictShown(v) { return v && state.verdicts.has(v.cat); }
  function aggregate(grid) {
    var rows = new Map();
    data[grid].forEach(function (r) {
      if (rowShown(grid, r.key)) rows.set(r.key, data.runtimes.map(emptyCounts));
    });
    data.cases.forEach(function (c) {
      if (!caseShown(c)) return;
      var seen = new Set();
      keysOf(grid, c).forEach(function (k) {
        if (seen.has(k) || !rows.has(k)) return;
        seen.add(k);
        var cells = rows.get(k);
        c.results.forEach(function (v, i) { if (verdictShown(v)) cells[i][v.cat]++; });
      });
    });
    return rows;
  }
  function cellButton(grid, key, i, counts) {
    var n = total(counts);
    var name = data.runtimes[i].name;
    var text = counts.passed + '/' + n;
    var label = key + ' on ' + name + ': ' + counts.passed + ' of ' + n + ' passed (' + describe(counts) + ')';
    var bar = el('span', { 'class': 'bar' });
    CATS.forEach(function (k) {
      if (counts[k] > 0) {
        var s = el('span', { 'class': k });
        s.style.width = (100 * counts[k] / n) + '%';
        bar.appendChild(s);
      }
    });
    var pressed = state.cell && state.cell.grid === grid && state.cell.key === key && state.cell.rt === i;
    var b = el('button', {
      type: 'button', 'class': 'cell', title: label, 'aria-label': label,
      'aria-pressed': pressed ? 'true' : 'false', 'data-grid': grid, 'data-key': key, 'data-rt': name
    }, bar, el('span', { 'class': 'count' }, text));
    b.addEventListener('click', function () { openCell(grid, key, i, true); });
    return b;
  }
  function renderGrid(grid) {
    var table = document.getElementById('grid-' + grid);
    clear(table);
    var shown = data.runtimes.map(function (_, i) { return i; }).filter(function (i) { return state.runtimes.has(i); });
    var head = el('tr', null, el('th', { scope: 'col' }, grid === 'ops' ? 'operator version' : 'trait'));
    shown.forEach(function (i) {
      head.appendChild(el('th', { scope: 'col', title: data.runtimes[i].name }, data.runtimes[i].name));
    });
    table.appendChild(el('thead', null, head));
    var body = el('tbody');
    var rows = aggregate(grid);
    var any = false;
    rows.forEach(function (cells, key) {
      if (!shown.some(function (i) { return total(cells[i]) > 0; })) return;
      any = true;
      var tr = el('tr', null, el('th', { scope: 'row' }, key));
      shown.forEach(function (i) {
        tr.appendChild(el('td', null, total(cells[i]) > 0 ? cellButton(grid, key, i, cells[i])
          : el('span', { 'class': 'none', 'aria-label': 'no cases' }, '—')));
      });
      body.appendChild(tr);
    });
    if (!any) {
      body.appendChild(el('tr', null, el('td', { colspan: shown.length + 1 },
        grid === 'traits' && data.traits.length === 0 ? 'No traits recorded.' : 'No cases under these filters.')));
    }
    table.appendChild(body);
  }

  // ---- the cases of a cell
  var panel = document.getElementById('panel');
  function verdictCell(v) {
    if (!v) return el('td', { 'class': 'verdict' }, '—');
    return el('td', { 'class': 'verdict ' + 'v-' + v.cat, 'data-cat': v.cat }, swatch(v.cat), v.label);
  }
  function copyButton(text) {
    var b = el('button', { type: 'button', 'aria-label': 'Copy the rerun command' }, 'Copy');
    b.addEventListener('click', function () {
      function done() { b.textContent = 'Copied'; }
      function fallback() {
        var t = el('textarea');
        t.value = text;
        document.body.appendChild(t);
        t.select();
        try { document.execCommand('copy'); done(); } catch (e) { /* nothing to copy with */ }
        document.body.removeChild(t);
      }
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, fallback);
      } else {
        fallback();
      }
    });
    return b;
  }
  function openCell(grid, key, rt, focus) {
    state.cell = { grid: grid, key: key, rt: rt };
    render();
    writeHash();
    if (focus) document.getElementById('panel-title').focus();
  }
  function renderPanel() {
    var cell = state.cell;
    if (!cell || !state.runtimes.has(cell.rt) || !rowShown(cell.grid, cell.key)) {
      panel.hidden = true;
      return;
    }
    var shown = data.runtimes.map(function (_, i) { return i; }).filter(function (i) { return state.runtimes.has(i); });
    var list = data.cases.filter(function (c) {
      return caseShown(c) && keysOf(cell.grid, c).indexOf(cell.key) >= 0 && verdictShown(c.results[cell.rt]);
    });
    // What did not pass first (failed, refused, crashed, other), then by name.
    function rank(c) { var k = c.results[cell.rt].cat; return k === 'passed' ? CATS.length : CATS.indexOf(k); }
    list.sort(function (a, b) {
      return rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    });
    var rtName = data.runtimes[cell.rt].name;
    document.getElementById('panel-title').textContent = (cell.grid === 'ops' ? '' : 'trait ') + cell.key +
      ' · ' + rtName + ': ' + list.length + (list.length === 1 ? ' case' : ' cases');
    var table = document.getElementById('cases');
    clear(table.tHead);
    clear(table.tBodies[0]);
    var head = el('tr', null, el('th', { scope: 'col' }, 'Case'));
    shown.forEach(function (i) { head.appendChild(el('th', { scope: 'col' }, data.runtimes[i].name)); });
    head.appendChild(el('th', { scope: 'col' }, 'Diagnosis'));
    head.appendChild(el('th', { scope: 'col' }, 'Message (' + rtName + ')'));
    head.appendChild(el('th', { scope: 'col' }, 'Rerun'));
    table.tHead.appendChild(head);
    list.slice(0, MAX_ROWS).forEach(function (c) {
      var v = c.results[cell.rt];
      var tr = el('tr', { 'data-case': c.name }, el('td', { 'class': 'name' }, c.name));
      shown.forEach(function (i) { tr.appendChild(verdictCell(c.results[i])); });
      tr.appendChild(el('td', null, v.diagnosis || ''));
      tr.appendChild(el('td', { 'class': 'msg' }, v.reason || ''));
      tr.appendChild(el('td', null, c.rerun ? el('div', { 'class': 'rerun' }, el('code', null, c.rerun), copyButton(c.rerun)) : ''));
      table.tBodies[0].appendChild(tr);
    });
    if (list.length > MAX_ROWS) {
      table.tBodies[0].appendChild(el('tr', null, el('td', { colspan: shown.length + 4 },
        'The first ' + MAX_ROWS + ' of ' + list.length + ' cases are shown: narrow the filters for the rest.')));
    }
    panel.hidden = false;
  }
  document.getElementById('panel-close').addEventListener('click', function () {
    var was = state.cell;
    state.cell = null;
    render();
    writeHash();
    if (was) {
      var b = null;
      var cells = document.querySelectorAll('#grid-' + was.grid + ' .cell');
      for (var i = 0; i < cells.length; i++) {
        if (cells[i].getAttribute('data-key') === was.key &&
            cells[i].getAttribute('data-rt') === data.runtimes[was.rt].name) { b = cells[i]; break; }
      }
      if (b) b.focus();
    }
  });
  document.addEventListener('keydown', function (e) {
    if (e.key === 'Escape' && state.cell) document.getElementById('panel-close').click();
  });

  // ---- the URL fragment: #cell=Gather-13/onnxruntime&op=Gather&trait=duplicates&verdict=failed,refused&rt=a,b
  function writeHash() {
    var parts = [];
    if (state.cell) {
      parts.push((state.cell.grid === 'ops' ? 'cell=' : 'trait-cell=') + encodeURIComponent(state.cell.key) + '/' +
        encodeURIComponent(data.runtimes[state.cell.rt].name));
    }
    if (state.op) parts.push('op=' + encodeURIComponent(state.op));
    if (state.trait) parts.push('trait=' + encodeURIComponent(state.trait));
    if (state.verdicts.size !== CATS.length) {
      parts.push('verdict=' + CATS.filter(function (k) { return state.verdicts.has(k); }).join(','));
    }
    if (state.runtimes.size !== data.runtimes.length) {
      parts.push('rt=' + data.runtimes.filter(function (_, i) { return state.runtimes.has(i); })
        .map(function (r) { return encodeURIComponent(r.name); }).join(','));
    }
    var hash = parts.length ? '#' + parts.join('&') : '';
    if (location.hash !== hash) history.replaceState(null, '', hash || location.pathname + location.search);
  }
  function dec(s) { try { return decodeURIComponent(s); } catch (e) { return s; } }
  function runtimeIndex(name) {
    for (var i = 0; i < data.runtimes.length; i++) if (data.runtimes[i].name === name) return i;
    return -1;
  }
  function readHash() {
    state.op = '';
    state.trait = '';
    state.verdicts = new Set(CATS);
    state.runtimes = new Set(data.runtimes.map(function (_, i) { return i; }));
    state.cell = null;
    location.hash.replace(/^#/, '').split('&').forEach(function (p) {
      var eq = p.indexOf('=');
      if (eq < 0) return;
      var k = p.slice(0, eq), v = p.slice(eq + 1);
      if (k === 'cell' || k === 'trait-cell') {
        var slash = v.indexOf('/');
        if (slash < 0) return;
        var rt = runtimeIndex(dec(v.slice(slash + 1)));
        if (rt >= 0) state.cell = { grid: k === 'cell' ? 'ops' : 'traits', key: dec(v.slice(0, slash)), rt: rt };
      } else if (k === 'op') {
        state.op = dec(v);
      } else if (k === 'trait') {
        state.trait = dec(v);
      } else if (k === 'verdict') {
        state.verdicts = new Set(v.split(',').filter(function (c) { return CATS.indexOf(c) >= 0; }));
      } else if (k === 'rt') {
        state.runtimes = new Set(v.split(',').map(function (n) { return runtimeIndex(dec(n)); })
          .filter(function (i) { return i >= 0; }));
      }
    });
    if (ops.indexOf(state.op) < 0) state.op = '';
    if (!data.traits.some(function (r) { return r.key === state.trait; })) state.trait = '';
  }
  window.addEventListener('hashchange', function () { readHash(); writeFilters(); render(); });

  // ---- theme: the system's, until the toggle picks one (kept in localStorage when it may be)
  var themeButton = document.getElementById('theme');
  function dark() {
    var t = document.documentElement.getAttribute('data-theme');
    if (t) return t === 'dark';
    return window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
  }
  function showTheme() {
    themeButton.setAttribute('aria-pressed', dark() ? 'true' : 'false');
    themeButton.textContent = dark() ? 'Light theme' : 'Dark theme';
  }
  try {
    var saved = localStorage.getItem('onnx-idx-check-theme');
    if (saved === 'dark' || saved === 'light') document.documentElement.setAttribute('data-theme', saved);
  } catch (e) { /* no storage for file:// here */ }
  themeButton.addEventListener('click', function () {
    var t = dark() ? 'light' : 'dark';
    document.documentElement.setAttribute('data-theme', t);
    try { localStorage.setItem('onnx-idx-check-theme', t); } catch (e) { /* not kept */ }
    showTheme();
  });
  showTheme();

  function render() {
    renderGrid('ops');
    renderGrid('traits');
    renderPanel();
  }
  readHash();
  writeFilters();
  render();
  document.documentElement.setAttribute('data-ready', 'true');
})();
