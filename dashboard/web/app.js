// tailforge dashboard: draws the store's JSON endpoints (/v1/status, /v1/taxonomy, /v1/tails,
// /v1/coverage, /v1/models, /v1/samples) as pages. Plain DOM and SVG, no framework. Everything read from the
// store is inserted as text (sample code and diagnostics may be written by a model), never as
// HTML; only highlight.js's escaped output goes through innerHTML.
'use strict';

(function () {
  const SVG_NS = 'http://www.w3.org/2000/svg';
  const PALETTE = ['#1f5fa8', '#c4461c', '#2b8a3e', '#7b3fa0', '#b8860b', '#0f7c8c', '#a3324f', '#5a5a5a'];
  const TRACKS = ['cuda2hip', 'sass2rdna3', 'ptx2cuda', 'c2x86', 'kernelopt'];
  const ORIGINS = ['template', 'llm', 'synthesized', 'imported', 'mutated'];

  // ---- errors: counted on <body data-errors> and shown, so that a test and a user both see them
  let errorCount = 0;
  function reportError(message) {
    errorCount += 1;
    document.body.dataset.errors = String(errorCount);
    const box = document.getElementById('errors');
    box.hidden = false;
    box.append(el('p', {}, message));
  }
  window.addEventListener('error', (event) => reportError('script error: ' + event.message));
  window.addEventListener('unhandledrejection', (event) =>
    reportError('script error: ' + ((event.reason && event.reason.message) || event.reason)));

  // ---- DOM helpers
  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(node, child);
      else node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    return append(node, children);
  }
  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined) continue;
      if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, String(value));
    }
    return append(node, children);
  }

  // ---- formatting
  const fmtInt = (n) => Number(n).toLocaleString('en-US');
  const fmtPct = (x) => (x === null || x === undefined ? '–' : (100 * x).toFixed(1) + '%');
  const fmtNum = (x, digits) => (x === null || x === undefined ? '–' : Number(x).toFixed(digits));
  function fmtTime(ms) {
    if (!ms) return '–';
    return new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  }
  const shortId = (id) => String(id).slice(0, 12);
  // Axis labels: month-day hour:minute, UTC.
  const fmtAxisTime = (ms) => new Date(ms).toISOString().slice(5, 16).replace('T', ' ');
  // A retrain event's reason is JSON ({conditions: [...], ...}); its conditions read as one line.
  function retrainReason(text) {
    let reason;
    try {
      reason = JSON.parse(text);
    } catch (error) {
      return String(text);
    }
    if (!reason || !Array.isArray(reason.conditions)) return String(text).slice(0, 200);
    return reason.conditions.map((c) => {
      const subject = c.category || c.model || '';
      const gain = c.gain !== undefined ? ` (gain ${c.gain} of ${c.threshold} needed)` : '';
      const tails = Array.isArray(c.tails) ? ': ' + c.tails.map((t) => `${t.dimension}/${t.name}`).join(', ') : '';
      return `${c.condition} ${subject}${gain}${tails}`.trim();
    }).join('; ');
  }
  function fmtDelta(x) {
    if (x === null || x === undefined) return '–';
    const text = (x > 0 ? '+' : '') + (100 * x).toFixed(1) + ' pts';
    return el('span', {class: x > 0 ? 'up' : x < 0 ? 'down' : ''}, text);
  }
  function fmtValue(value) {
    if (typeof value === 'number') return Number.isInteger(value) ? fmtInt(value) : fmtNum(value, 3);
    if (value === null || value === undefined) return '–';
    if (typeof value === 'object') return JSON.stringify(value);
    return String(value);
  }

  // ---- API
  class ApiError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }
  async function api(path) {
    const response = await fetch(path, {headers: {Accept: 'application/json'}});
    let body;
    try {
      body = await response.json();
    } catch (error) {
      throw new ApiError(response.status, path + ': the answer is not JSON');
    }
    if (!response.ok) throw new ApiError(response.status, (body && body.error) || path + ': HTTP ' + response.status);
    return body;
  }
  function query(params) {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== '' && value !== undefined) search.set(key, value);
    const text = search.toString();
    return text ? '?' + text : '';
  }

  // ---- building blocks
  function table(caption, headers, rows, attrs) {
    return el('div', {class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': caption},
      el('table', attrs || {},
        el('caption', {}, caption),
        el('thead', {}, el('tr', {}, headers.map((h) => el('th', {scope: 'col'}, h)))),
        el('tbody', {}, rows.map((cells) => el('tr', {}, cells.map((c, i) =>
          i === 0 ? el('th', {scope: 'row'}, c) : el('td', {}, c)))))));
  }
  function card(label, value, attrs) {
    return el('div', Object.assign({class: 'card'}, attrs || {}), el('div', {class: 'card-label'}, label),
      el('div', {class: 'card-value'}, value));
  }
  function note(text) {
    return el('p', {class: 'note'}, text);
  }

  // A line chart of one or more series of {x, y} points, with optional vertical marks (retrain
  // events). Every point is an SVG circle carrying data-series, data-x and data-y, and the same
  // numbers are in a table below the chart.
  function lineChart(options) {
    const width = 760, height = 280, left = 64, right = 16, top = 16, bottom = 40;
    const series = options.series.filter((s) => s.points.length > 0);
    const xs = series.flatMap((s) => s.points.map((p) => p.x)).concat((options.marks || []).map((m) => m.x));
    const ys = series.flatMap((s) => s.points.map((p) => p.y));
    const figure = el('figure', {class: 'chart', 'data-chart': options.id});
    figure.append(el('figcaption', {id: options.id + '-caption'}, options.title));
    if (series.length === 0) {
      figure.append(note(options.empty || 'No data yet.'));
      return figure;
    }
    let xMin = Math.min(...xs), xMax = Math.max(...xs);
    if (xMin === xMax) { xMin -= 1; xMax += 1; }
    const yMax = Math.max(options.yMax || 0, ...ys) || 1;
    const sx = (x) => left + (x - xMin) / (xMax - xMin) * (width - left - right);
    const sy = (y) => top + (1 - y / yMax) * (height - top - bottom);
    const formatX = options.formatX || ((x) => String(x));
    const formatAxis = options.formatAxis || formatX;
    const formatY = options.formatY || fmtValue;
    const chart = svg('svg', {viewBox: `0 0 ${width} ${height}`, role: 'img',
      'aria-labelledby': options.id + '-caption', class: 'plot'});
    for (let i = 0; i <= 4; i++) {
      const y = yMax * i / 4;
      chart.append(svg('line', {x1: left, x2: width - right, y1: sy(y), y2: sy(y), class: 'grid'}),
        svg('text', {x: left - 6, y: sy(y) + 4, class: 'tick', 'text-anchor': 'end'}, formatY(y)));
    }
    const ticks = options.xTicks || 4;
    for (let i = 0; i <= ticks; i++) {
      const x = xMin + (xMax - xMin) * i / ticks;
      chart.append(svg('text', {x: sx(x), y: height - bottom + 18, class: 'tick',
        'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle'}, formatAxis(x)));
    }
    chart.append(svg('line', {x1: left, x2: width - right, y1: sy(0), y2: sy(0), class: 'axis'}));
    for (const mark of options.marks || []) {
      chart.append(svg('line', {x1: sx(mark.x), x2: sx(mark.x), y1: top, y2: height - bottom, class: 'mark',
        'data-x': mark.x}, svg('title', {}, mark.label)));
    }
    series.forEach((s, index) => {
      const color = PALETTE[index % PALETTE.length];
      chart.append(svg('polyline', {points: s.points.map((p) => `${sx(p.x)},${sy(p.y)}`).join(' '),
        fill: 'none', stroke: color, 'stroke-width': 2}));
      for (const p of s.points) {
        chart.append(svg('circle', {cx: sx(p.x), cy: sy(p.y), r: 3, fill: color, class: 'point',
          'data-series': s.name, 'data-x': p.x, 'data-y': p.y},
        svg('title', {}, `${s.name}: ${formatY(p.y)} at ${formatX(p.x)}`)));
      }
    });
    figure.append(chart);
    figure.append(el('ul', {class: 'legend'}, series.map((s, index) =>
      el('li', {}, el('span', {class: 'swatch', 'data-color': index % PALETTE.length}), s.name)),
    (options.marks || []).length ? el('li', {}, el('span', {class: 'swatch mark-swatch'}), options.marksName || 'events') : null));
    const rows = [];
    for (const s of series) for (const p of s.points) rows.push([s.name, formatX(p.x), formatY(p.y)]);
    figure.append(el('details', {}, el('summary', {}, 'Data table'),
      table(options.title, [options.seriesLabel || 'series', options.xLabel || 'x', options.yLabel || 'y'], rows)));
    return figure;
  }

  // Horizontal bars with an optional target tick per bar.
  function barChart(options) {
    const figure = el('figure', {class: 'chart', 'data-chart': options.id});
    figure.append(el('figcaption', {id: options.id + '-caption'}, options.title));
    if (options.bars.length === 0) {
      figure.append(note(options.empty || 'No data yet.'));
      return figure;
    }
    const width = 760, rowHeight = 22, labelWidth = 220, right = 70;
    const height = options.bars.length * rowHeight + 8;
    const max = Math.max(...options.bars.map((b) => Math.max(b.value, b.target || 0))) || 1;
    const sx = (v) => labelWidth + v / max * (width - labelWidth - right);
    const chart = svg('svg', {viewBox: `0 0 ${width} ${height}`, role: 'img',
      'aria-labelledby': options.id + '-caption', class: 'plot'});
    options.bars.forEach((bar, i) => {
      const y = 4 + i * rowHeight;
      chart.append(svg('text', {x: labelWidth - 6, y: y + 14, class: 'tick', 'text-anchor': 'end'}, bar.label),
        svg('rect', {x: labelWidth, y: y + 2, width: Math.max(1, sx(bar.value) - labelWidth), height: rowHeight - 6,
          class: 'bar' + (bar.low ? ' low' : ''), 'data-label': bar.label, 'data-value': bar.value},
        svg('title', {}, `${bar.label}: ${options.format(bar.value)}`)),
        svg('text', {x: sx(bar.value) + 4, y: y + 14, class: 'tick'}, options.format(bar.value)));
      if (bar.target !== undefined) {
        chart.append(svg('line', {x1: sx(bar.target), x2: sx(bar.target), y1: y, y2: y + rowHeight - 2, class: 'target'},
          svg('title', {}, `target ${options.format(bar.target)}`)));
      }
    });
    figure.append(chart);
    figure.append(el('details', {}, el('summary', {}, 'Data table'),
      table(options.title, [options.labelName || 'name', 'value', 'target'],
        options.bars.map((b) => [b.label, options.format(b.value), b.target === undefined ? '–' : options.format(b.target)]))));
    return figure;
  }

  // ---- pages
  const pages = {};

  pages.overview = async function (main) {
    const status = await api('/v1/status');
    main.append(el('h1', {tabindex: -1}, 'Overview'));
    const queued = (status.jobs_by_state.pending || 0) + (status.jobs_by_state.leased || 0);
    const cycle = status.last_cycle;
    main.append(el('div', {class: 'cards'},
      card('Samples', fmtInt(status.samples), {'data-stat': 'samples', 'data-value': status.samples}),
      card('Verified', fmtInt(status.verified), {'data-stat': 'verified', 'data-value': status.verified}),
      card('Verified / min', fmtNum(status.verified_per_min, 1),
        {'data-stat': 'verified_per_min', 'data-value': status.verified_per_min}),
      card('Queue depth', fmtInt(queued), {'data-stat': 'queue', 'data-value': queued}),
      card('Newest cycle', cycle ? `#${cycle.id} ${cycle.state}` : 'none',
        {'data-stat': 'cycle', 'data-value': cycle ? cycle.id : ''}),
      card('Retrain events', fmtInt(status.retrain_events), {'data-stat': 'retrains', 'data-value': status.retrain_events})));
    if (status.daemon && (status.daemon.paused || status.daemon.draining || status.daemon.disk_low)) {
      main.append(note('Daemon: ' + ['paused', 'draining', 'disk_low'].filter((k) => status.daemon[k]).join(', ')));
    }

    // Cumulative verified samples per track and origin, over the growth buckets.
    const bySeries = new Map();
    for (const b of status.growth.buckets) {
      const name = b.track + ' / ' + b.origin;
      if (!bySeries.has(name)) bySeries.set(name, []);
      bySeries.get(name).push(b);
    }
    const series = [...bySeries.entries()].sort().map(([name, buckets]) => {
      let total = 0;
      return {name, points: buckets.map((b) => ({x: b.start_ms + status.growth.bucket_ms, y: (total += b.verified)}))};
    });
    main.append(el('section', {'aria-labelledby': 'growth-h'}, el('h2', {id: 'growth-h'}, 'Growth'),
      lineChart({id: 'growth', title: 'Verified samples over time, by track and origin (cumulative)',
        series, marks: status.retrains.map((r) => ({x: r.created_ms,
          label: `retrain #${r.id} (${r.status})${r.cycle_id ? ' in cycle ' + r.cycle_id : ''}: ${retrainReason(r.reason)}`})),
        marksName: 'retrain events', formatX: fmtTime, formatAxis: fmtAxisTime, formatY: (y) => fmtInt(Math.round(y)),
        seriesLabel: 'track / origin', xLabel: 'bucket end', yLabel: 'verified (cumulative)',
        empty: 'No verified samples yet.'})));

    const counts = (title, map) => table(title, ['name', 'count'],
      Object.entries(map).map(([name, count]) => [name, fmtInt(count)]));
    main.append(el('section', {'aria-labelledby': 'store-h', class: 'columns'},
      el('h2', {id: 'store-h'}, 'Store'),
      counts('Samples by track', status.samples_by_track),
      counts('Samples by origin', status.samples_by_origin),
      counts('Failures by top category', status.failures_by_category),
      counts('Jobs by state', status.jobs_by_state)));
    if (status.workers.length || status.waiting.length) {
      main.append(el('section', {'aria-labelledby': 'workers-h'}, el('h2', {id: 'workers-h'}, 'Workers'),
        status.waiting.length ? table('Jobs no live worker may lease', ['kind', 'jobs', 'why'],
          status.waiting.map((w) => [w.kind, fmtInt(w.count), w.reason]), {'data-table': 'waiting'}) : null,
        table('Workers: the daemon\'s own (local) and tailforge worker processes', ['worker', 'host', 'state', 'done', 'failed', 'runs', 'GPUs'],
          status.workers.map((w) => w.name === 'local'
            ? [w.name, w.host, w.live ? 'the daemon\'s own workers' : 'daemon not running', '–', '–',
              (w.capabilities.stages || []).join(' ') || 'nothing', (w.capabilities.gpus || []).map((g) => g.name).join(', ') || '–']
            : [w.name, w.host, w.live ? (w.job_id ? 'job #' + w.job_id : 'idle') : `gone (${Math.round(w.seen_seconds_ago)} s)`,
            fmtInt(w.jobs_done), fmtInt(w.jobs_failed), (w.capabilities.stages || []).join(' ') || 'nothing',
            (w.capabilities.gpus || []).map((g) => g.name).join(', ') || '–']), {'data-table': 'workers'})));
    }
    if ((status.paused_models || []).length) {
      main.append(el('section', {'aria-labelledby': 'paused-h'}, el('h2', {id: 'paused-h'}, 'Paused evaluations'),
        table('Models whose endpoint failed: their items wait unjudged, never counted as failures',
          ['model', 'track', 'fault', 'faults', 'next try', 'what the server said'],
          status.paused_models.map((p) => [p.model, p.track, p.category, fmtInt(p.faults),
            new Date(p.resume_ms).toLocaleTimeString(), p.message]), {'data-table': 'paused'})));
    }
    if (status.dead_jobs.length) {
      main.append(el('section', {'aria-labelledby': 'dead-h'}, el('h2', {id: 'dead-h'}, 'Dead jobs'),
        table('Jobs that used up their attempts', ['job', 'kind', 'attempts', 'last error'],
          status.dead_jobs.map((j) => ['#' + j.id, j.kind, `${j.attempts}/${j.max_attempts}`, j.last_error || '–']))));
    }
    if (status.retrains.length) {
      main.append(el('section', {'aria-labelledby': 'retrain-h'}, el('h2', {id: 'retrain-h'}, 'Retrain events'),
        table('Retrain events', ['event', 'time', 'cycle', 'status', 'reason', 'model'],
          status.retrains.slice().reverse().map((r) => ['#' + r.id, fmtTime(r.created_ms), r.cycle_id || '–', r.status,
            retrainReason(r.reason), r.model_id || '–']))));
    }
  };

  // Builds the category tree from the report's flat list (paths joined by '.').
  function categoryTree(categories) {
    const root = {path: '', count: 0, children: []};
    const byPath = new Map([['', root]]);
    for (const c of categories) {
      const node = Object.assign({children: []}, c);
      byPath.set(c.path, node);
    }
    for (const c of categories) {
      const dot = c.path.lastIndexOf('.');
      let parent = dot > 0 ? byPath.get(c.path.slice(0, dot)) : root;
      if (!parent) parent = root;
      parent.children.push(byPath.get(c.path));
    }
    root.count = root.children.reduce((sum, n) => sum + n.count, 0);
    return root;
  }

  // An icicle: one row per depth, each category as wide as its share of its parent.
  function icicle(report, onSelect) {
    const root = categoryTree(report.categories);
    const width = 760, rowHeight = 30;
    const depth = report.categories.reduce((d, c) => Math.max(d, c.depth + 1), 1);
    const figure = el('figure', {class: 'chart', 'data-chart': 'icicle'},
      el('figcaption', {id: 'icicle-caption'}, 'Failure categories (width: share of failures; select one for its evidence)'));
    const chart = svg('svg', {viewBox: `0 0 ${width} ${depth * rowHeight}`, role: 'group',
      'aria-labelledby': 'icicle-caption', class: 'plot icicle'});
    const place = (node, x0, x1, level, colorIndex) => {
      let x = x0;
      node.children.sort((a, b) => b.count - a.count);
      node.children.forEach((child, i) => {
        const w = node.count > 0 ? (x1 - x0) * child.count / node.count : 0;
        const color = level === 0 ? i % PALETTE.length : colorIndex;
        const label = `${child.path}: ${fmtInt(child.count)} failures, ${fmtPct(child.share_of_failures)} of all`;
        const group = svg('g', {class: 'node', tabindex: 0, role: 'button', 'aria-label': label,
          'data-path': child.path, 'data-count': child.count,
          onclick: () => onSelect(child.path),
          onkeydown: (event) => {
            if (event.key === 'Enter' || event.key === ' ') {
              event.preventDefault();
              onSelect(child.path);
            }
          }},
        svg('title', {}, label),
        svg('rect', {x: x + 0.5, y: level * rowHeight + 0.5, width: Math.max(0, w - 1), height: rowHeight - 1,
          'data-color': color, 'data-depth': level}));
        const name = child.path.slice(child.path.lastIndexOf('.') + 1);
        if (w > 40) {
          const fits = Math.floor((w - 8) / 7);
          group.append(svg('text', {x: x + 4, y: level * rowHeight + 19, class: 'node-label'},
            name.length > fits ? name.slice(0, Math.max(1, fits - 1)) + '…' : name));
        }
        chart.append(group);
        place(child, x, x + w, level + 1, color);
        x += w;
      });
    };
    place(root, 0, width, 0, 0);
    figure.append(chart);
    return figure;
  }

  const TAXONOMY_FILTERS = [
    {name: 'track', label: 'Track', options: [''].concat(TRACKS)},
    {name: 'stage', label: 'Stage prefix', placeholder: 'amd.assemble'},
    {name: 'origin', label: 'Origin', options: [''].concat(ORIGINS)},
    {name: 'domain', label: 'Domain'},
    {name: 'feature', label: 'Feature tag'},
    {name: 'model', label: 'Model (its evaluation failures)'},
    {name: 'since', label: 'Since', placeholder: '48h, 7d'},
    {name: 'until', label: 'Until', placeholder: '1h'},
    {name: 'trend', label: 'Trend bucket', options: ['hour', 'day']},
    {name: 'compare_since', label: 'Compare: second window since', placeholder: '96h'},
    {name: 'compare_until', label: 'Compare: second window until', placeholder: '48h'},
    {name: 'compare_model', label: 'Compare with model (with Model)'},
  ];

  function filterForm(params, fields, onSubmit, legend) {
    const form = el('form', {class: 'filters', 'aria-label': legend});
    const fieldset = el('fieldset', {}, el('legend', {}, legend));
    for (const field of fields) {
      const id = 'filter-' + field.name;
      let control;
      if (field.options) {
        control = el('select', {id, name: field.name}, field.options.map((o) =>
          el('option', {value: o, selected: (params[field.name] || '') === o}, o === '' ? 'any' : o)));
      } else {
        control = el('input', {id, name: field.name, type: 'text', value: params[field.name] || '',
          placeholder: field.placeholder, autocomplete: 'off'});
      }
      fieldset.append(el('div', {class: 'field'}, el('label', {for: id}, field.label), control));
    }
    fieldset.append(el('div', {class: 'field actions'}, el('button', {type: 'submit'}, 'Apply'),
      el('a', {href: location.hash.split('?')[0]}, 'Clear')));
    form.append(fieldset);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const values = {};
      for (const field of fields) values[field.name] = form.elements[field.name].value.trim();
      onSubmit(values);
    });
    return form;
  }

  pages.taxonomy = async function (main, params) {
    const request = Object.assign({trend: 'hour'}, params, {examples: 3});
    delete request.category;  // the page's own: which category's evidence is open
    const report = await api('/v1/taxonomy' + query(request));
    main.append(el('h1', {tabindex: -1}, 'Failure taxonomy'));
    main.append(filterForm(request, TAXONOMY_FILTERS, (values) => {
      location.hash = '#/taxonomy' + query(values);
    }, 'Filters'));
    const filters = Object.entries(report.filters || {}).map(([k, v]) => `${k}=${v}`).join(', ');
    main.append(el('div', {class: 'cards'},
      card('Failures', fmtInt(report.total), {'data-stat': 'total', 'data-value': report.total}),
      card('Failed samples', fmtInt(report.failed_samples), {'data-stat': 'failed_samples', 'data-value': report.failed_samples}),
      card('Source', report.source)));
    main.append(note(report.counting + (filters ? `. Filters: ${filters}.` : '')));

    const detail = el('section', {id: 'category-detail', 'aria-live': 'polite', 'aria-labelledby': 'detail-h'},
      el('h2', {id: 'detail-h'}, 'Evidence'), note('Select a category to see its evidence lines and example samples.'));
    // The open category is part of the address, so that it can be linked and reloaded.
    const categoryLink = (path) => '#/taxonomy' + query(Object.assign({}, params, {category: path}));
    const select = (path) => {
      if (params.category !== path) history.replaceState(null, '', categoryLink(path));
      params.category = path;
      const category = report.categories.find((c) => c.path === path);
      const examples = Object.entries(report.examples || {})
        .filter(([name]) => name === path || name.startsWith(path + '.'))
        .flatMap(([name, list]) => list.map((e) => Object.assign({category: name}, e)));
      detail.replaceChildren(el('h2', {id: 'detail-h'}, 'Evidence: ' + path),
        category ? el('p', {}, `${fmtInt(category.count)} failures, ${fmtPct(category.share_of_failures)} of all, ` +
          `${fmtPct(category.share_of_parent)} of its parent.` + (category.description ? ' ' + category.description : '')) : null,
        category && category.stages ? table('Failures by stage', ['stage', 'failures'],
          Object.entries(category.stages).map(([stage, n]) => [stage, fmtInt(n)])) : null,
        examples.length ? table('Example samples', ['sample', 'category', 'stage', 'evidence line', 'time'],
          examples.map((e) => [el('a', {href: '#/sample/' + e.sample_id}, shortId(e.sample_id)), e.category, e.stage,
            el('code', {class: 'evidence'}, e.message), fmtTime(e.created_ms)]), {'data-examples': path})
          : note('No examples stored for this category.'));
      detail.scrollIntoView({block: 'nearest'});
    };
    main.append(el('section', {'aria-labelledby': 'tree-h'}, el('h2', {id: 'tree-h'}, 'Categories'),
      report.categories.length ? icicle(report, select) : note('No failures match.'),
      report.categories.length ? el('details', {}, el('summary', {}, 'Category table'),
        table('Categories', ['category', 'failures', 'share of failures', 'share of parent'],
          report.categories.map((c) => [el('a', {class: 'indent', 'data-depth': c.depth, href: categoryLink(c.path)}, c.path),
            fmtInt(c.count),
            fmtPct(c.share_of_failures), fmtPct(c.share_of_parent)]))) : null));
    main.append(detail);

    if (report.trend) {
      const byCategory = new Map();
      for (const p of report.trend.points) {
        if (!byCategory.has(p.top_category)) byCategory.set(p.top_category, []);
        byCategory.get(p.top_category).push({x: p.bucket_ms, y: p.count});
      }
      main.append(el('section', {'aria-labelledby': 'trend-h'}, el('h2', {id: 'trend-h'}, 'Trend'),
        lineChart({id: 'trend', title: `Failures per ${report.trend.bucket}, by top category`,
          series: [...byCategory.entries()].sort().map(([name, points]) => ({name, points})),
          formatX: fmtTime, formatAxis: fmtAxisTime, formatY: (y) => fmtInt(Math.round(y)), seriesLabel: 'category',
          xLabel: 'bucket start',
          yLabel: 'failures', empty: 'No failures in this window.'})));
    }
    if (report.comparison) {
      const c = report.comparison;
      main.append(el('section', {'aria-labelledby': 'compare-h'}, el('h2', {id: 'compare-h'}, 'Window comparison'),
        note(`A: ${c.a} (${fmtInt(c.total_a)} failures); B: ${c.b} (${fmtInt(c.total_b)} failures)`),
        table('Categories in two windows', ['category', 'A', 'B', 'delta', 'share A', 'share B'],
          c.rows.map((r) => [r.path, fmtInt(r.count_a), fmtInt(r.count_b), (r.delta > 0 ? '+' : '') + fmtInt(r.delta),
            fmtPct(r.share_a), fmtPct(r.share_b)]), {'data-compare': 'windows'})));
    }
    if (report.model_comparison) {
      const c = report.model_comparison;
      main.append(el('section', {'aria-labelledby': 'mcompare-h'}, el('h2', {id: 'mcompare-h'}, 'Model comparison'),
        note(`${c.model_a}: ${fmtPct(c.accuracy_a)} on ${fmtInt(c.common_items)} common items; ` +
          `${c.model_b}: ${fmtPct(c.accuracy_b)}`),
        table('Failure rates of two models', ['category', c.model_a, c.model_b, 'delta', 'rate A', 'rate B'],
          c.rows.map((r) => [r.path, fmtInt(r.count_a), fmtInt(r.count_b), (r.delta > 0 ? '+' : '') + fmtInt(r.delta),
            fmtPct(r.rate_a), fmtPct(r.rate_b)]), {'data-compare': 'models'})));
    }
    if (report.uncategorized_clusters && report.uncategorized_clusters.length) {
      main.append(el('section', {'aria-labelledby': 'unc-h'}, el('h2', {id: 'unc-h'}, 'Uncategorized messages'),
        table('Clusters of uncategorized messages', ['message', 'count', 'category', 'example'],
          report.uncategorized_clusters.map((c) => [el('code', {}, c.normalized), fmtInt(c.count), c.category,
            el('a', {href: '#/sample/' + c.example_sample_id}, shortId(c.example_sample_id))]))));
    }
    if (params.category) select(params.category);
  };

  pages.tails = async function (main, params) {
    main.append(el('h1', {tabindex: -1}, 'Tails'));
    let view;
    try {
      view = await api('/v1/tails' + query({track: params.track || '', cycle: params.cycle || ''}));
    } catch (error) {
      if (error.status !== 404) throw error;
      main.append(note(error.message + '.'));
      return;
    }
    if (view.entries) {
      main.append(note(`The tail list of cycle ${view.cycle_id}: what the corpus, the pipeline or the model under test ` +
        'leaves weak, ranked by score, with the numbers that put each entry there.'));
      main.append(table(`Tail list of cycle ${view.cycle_id}`, ['rank', 'tail', 'signal', 'score', 'numbers'],
        view.entries.map((e) => ['#' + e.rank, `${e.dimension}/${e.name}`, e.signal, fmtNum(e.score, 3),
          el('dl', {class: 'numbers'}, Object.entries(e.numbers).map(([k, v]) => [el('dt', {}, k), el('dd', {}, fmtValue(v))]))]),
        {'data-tails': view.cycle_id}));
      const top = view.entries.slice(0, 5);
      const series = await Promise.all(top.map((e) =>
        api('/v1/tails' + query({cycle: view.cycle_id, track: params.track || '', series: `${e.dimension}/${e.name}`}))));
      main.append(el('section', {'aria-labelledby': 'share-h'}, el('h2', {id: 'share-h'}, 'Share of the top tails'),
        lineChart({id: 'tail-share', title: 'Share of the verified corpus after each cycle (top tails)',
          series: series.map((s) => ({name: `${s.series.dimension}/${s.series.name}`,
            points: s.series.points.map((p) => ({x: p.cycle_id, y: p.share}))})),
          formatX: (x) => 'cycle ' + Math.round(x), formatY: fmtPct, seriesLabel: 'tail', xLabel: 'cycle',
          yLabel: 'share', xTicks: 4})));
    } else {
      main.append(note('No cycle has a tail list yet.'));
    }
    const features = (view.distribution && view.distribution.features) || [];
    main.append(el('section', {'aria-labelledby': 'dist-h'}, el('h2', {id: 'dist-h'}, 'Feature tags of the verified corpus'),
      barChart({id: 'features', title: 'Share of verified samples per feature tag (tick: target share)',
        bars: features.map((f) => ({label: f.name, value: f.share, target: f.target_share, low: f.below_target})),
        format: fmtPct, empty: 'No verified samples yet.'})));
  };

  pages.coverage = async function (main, params) {
    const track = params.track || '';
    const family = params.family || '';
    const report = await api('/v1/coverage' + query({track, family, names: '1'}));
    main.append(el('h1', {tabindex: -1}, 'CUDA API coverage'));
    const prior = report.prior || {};
    main.append(note(`The CUDA API names the ${fmtInt(report.verified_total)} verified ${report.track} samples use, ` +
      `against the usage prior: ${prior.from_imported_trees ? 'the imported trees' : 'the shipped prior'} ` +
      `(${(prior.trees || []).join(', ')}; ${fmtInt(prior.api_files)} files using the API). A family or name below its ` +
      'target share is an API tail the loop steers toward.'));
    main.append(el('div', {class: 'cards'},
      card('names used in two or more prior files', `${fmtInt(report.covered_shared)} of ${fmtInt(report.shared_names)} ` +
        `(${fmtPct(report.shared_coverage)})`, {'data-coverage': 'shared'}),
      card('uses of prior names', fmtPct(report.use_coverage), {'data-coverage': 'uses'}),
      card('target names covered', `${fmtInt(report.covered_targets)} of ${fmtInt(report.target_names)}`)));
    main.append(el('section', {'aria-labelledby': 'families-h'}, el('h2', {id: 'families-h'}, 'Families'),
      barChart({id: 'api-families', title: 'Share of verified samples using each API family (tick: target share)',
        bars: report.families.map((f) => ({label: f.name, value: f.share, target: f.target_share, low: f.below_target})),
        format: fmtPct, labelName: 'family'}),
      table('API families', ['family', 'names', 'targets', 'covered', 'verified', 'share', 'target'],
        report.families.map((f) => [el('a', {href: '#/coverage' + query({track, family: f.name})}, f.name),
          fmtInt(f.names), fmtInt(f.target_names), fmtInt(f.covered_targets), fmtInt(f.verified), fmtPct(f.share),
          fmtPct(f.target_share) + (f.below_target ? ' (below)' : '')]), {'data-api-families': report.track})));
    const names = (report.names || []).filter((n) => !family || n.family === family)
      .filter((n) => family || (n.target_share > 0 && n.share < n.target_share))
      .sort((a, b) => b.target_share - a.target_share).slice(0, family ? 1000 : 40);
    main.append(el('section', {'aria-labelledby': 'names-h'},
      el('h2', {id: 'names-h'}, family ? `Names of ${family}` : 'Names furthest below their target'),
      table(family ? `Names of ${family}` : 'Names below target', ['name', 'family', 'prior files', 'target', 'verified', 'share'],
        names.map((n) => [n.name, n.family, fmtInt(n.prior_files), fmtPct(n.target_share), fmtInt(n.verified),
          fmtPct(n.share)]), {'data-api-names': family || 'below-target'})));
  };

  pages.models = async function (main, params) {
    const track = params.track || 'cuda2hip';
    const report = await api('/v1/models' + query({track}));
    main.append(el('h1', {tabindex: -1}, 'Models'));
    main.append(filterForm({track}, [{name: 'track', label: 'Track', options: TRACKS}],
      (values) => { location.hash = '#/models' + query(values); }, 'Track'));
    const set = report.evaluation_set || {};
    main.append(note(`Evaluation set of ${report.track}: ${fmtInt(set.items || 0)} items (version ${set.version || '–'}).`));
    const near = set.training_row_similarity || [];
    if (near.length) {
      main.append(table(`Training rows near evaluation items: exact similarity on each written snapshot ` +
        `(near-duplicate at ${set.near_duplicate_threshold})`,
      ['evaluation set', 'snapshots', 'largest similarity', 'items at or above'],
      near.map((l) => [`v${l.version}`, fmtInt(l.snapshots),
        l.largest_similarity == null ? 'below 0.5' : l.largest_similarity.toFixed(3),
        fmtInt(l.items_with_near_duplicate)]), {'data-item-leakage': report.track}));
    }
    if (!report.models.length) {
      main.append(note('No model versions are registered for this track.'));
      return;
    }
    main.append(barChart({id: 'accuracy', title: 'Accuracy on the evaluation set, per version',
      bars: report.models.map((m) => ({label: m.name, value: (m.evaluation && m.evaluation.accuracy) || 0})),
      format: fmtPct}));
    main.append(table('Model versions', ['version', 'parent', 'kind', 'snapshot', 'accuracy', 'on its tails',
      'delta to parent', 'active'],
    report.models.map((m) => {
      const e = m.evaluation || {};
      const pc = m.parent_comparison;
      return [m.name, m.parent || '–', m.kind,
        m.snapshot ? `${shortId(m.snapshot.hash)} (${fmtInt(m.snapshot.train_samples)} samples)` : '–',
        e.evaluated ? `${fmtPct(e.accuracy)} (${fmtInt(e.ok)}/${fmtInt(e.evaluated)})` : 'not evaluated',
        (m.retrained_for || []).length ? el('ul', {class: 'plain'}, m.retrained_for.map((t) =>
          el('li', {}, `${t.dimension}/${t.name}: ${fmtPct(t.accuracy)} vs ${fmtPct(t.parent_accuracy)}`))) : '–',
        pc ? fmtDelta(pc.delta) : '–', m.active ? 'yes' : 'no'];
    }), {'data-models': report.track}));
    const timedKernels = report.models.filter((m) => m.kernels);
    if (timedKernels.length) {
      const ratio = (v) => v == null ? 'not timed' : v.toFixed(2);
      main.append(table('Kernel speed on the evaluation tasks, per version (fast_p: share of tasks with a right ' +
        'kernel over p times the reference; only timed runs count, and timing needs an NVIDIA GPU)',
      ['version', 'right', 'fast_1', 'fast_2', 'mean speedup', 'roofline fraction', 'tasks timed'],
      timedKernels.map((m) => {
        const k = m.kernels;
        return [m.name, `${fmtInt(k.right)}/${fmtInt(k.measured)}`, k.fast_1 == null ? 'not timed' : fmtPct(k.fast_1),
          k.fast_2 == null ? 'not timed' : fmtPct(k.fast_2), k.mean_speedup == null ? 'not timed' : `${ratio(k.mean_speedup)}x`,
          ratio(k.roofline_fraction), `${fmtInt(k.timed_tasks)} of ${fmtInt(k.tasks)}`];
      }), {'data-kernel-speed': report.track}));
    }
    const familyNames = [...new Set(report.models.flatMap((m) => Object.keys(m.api_families || {})))].sort();
    if (familyNames.length) {
      const shown = report.models.slice(-4);
      main.append(table('Accuracy per CUDA API family (an item counts for every family its code uses)',
        ['family'].concat(shown.map((m) => m.name)),
        familyNames.map((f) => [f].concat(shown.map((m) => {
          const a = (m.api_families || {})[f];
          return a ? `${fmtPct(a.accuracy)} (${fmtInt(a.ok)}/${fmtInt(a.items)})` : '–';
        }))), {'data-family-accuracy': report.track}));
    }
  };

  // ---- sample page
  const PANES = [
    {title: 'CUDA', match: (s) => s.language === 'cuda' ? {text: s.text} : null, lang: 'cpp'},
    {title: 'C', match: (s) => s.language === 'c' ? {text: s.text} : null, lang: 'cpp'},
    {title: 'HIP', kinds: ['hip'], lang: 'cpp'},
    {title: 'PTX', kinds: ['ptx'], lang: 'asm'},
    {title: 'Rolled-PTX', kinds: ['rolled_ptx'], lang: 'asm'},
    {title: 'SASS', kinds: ['sass'], lang: 'asm'},
    {title: 'RDNA3', kinds: ['rdna3_asm'], lang: 'asm'},
    {title: 'x86', kinds: ['x86_asm'], lang: 'x86asm'},
  ];
  const HIGHLIGHT_LIMIT = 200000;

  // Assembly listings (PTX, SASS, RDNA3) get a small tokenizer of their own: comments,
  // directives, registers, numbers. Tokens are inserted as text nodes.
  function highlightAssembly(code, text) {
    const pattern = /(\/\/[^\n]*|;[^\n]*|#[^\n]*)|(^\s*\.[A-Za-z_][\w.]*|\s\.[A-Za-z_][\w.]*)|(%[A-Za-z_][\w.]*|\b[vs]\[\d+(?::\d+)?\]|\b[vsR]\d+\b|\bUR\d+\b|\bP\d\b)|(\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\b)/gm;
    let last = 0;
    for (const m of text.matchAll(pattern)) {
      if (m.index > last) code.append(text.slice(last, m.index));
      const kind = m[1] ? 'hljs-comment' : m[2] ? 'hljs-meta' : m[3] ? 'hljs-variable' : 'hljs-number';
      code.append(el('span', {class: kind}, m[0]));
      last = m.index + m[0].length;
    }
    if (last < text.length) code.append(text.slice(last));
  }
  function codeBlock(text, lang, label) {
    const code = el('code', {class: 'code'});
    if (text.length > HIGHLIGHT_LIMIT) {
      code.append(text);
    } else if (lang === 'asm') {
      highlightAssembly(code, text);
    } else if (window.hljs && window.hljs.getLanguage && window.hljs.getLanguage(lang)) {
      // highlight.js escapes the text it returns; its signature changed in version 11.
      const major = parseInt(window.hljs.versionString || '9', 10);
      // Debian's version 9 logs an end-of-life notice on first use unless told not to.
      if (major < 11 && window.hljs.configure) window.hljs.configure({hideUpgradeWarningAcceptNoSupportOrSecurityUpdates: true});
      const result = major < 11 ? window.hljs.highlight(lang, text, true)
        : window.hljs.highlight(text, {language: lang, ignoreIllegals: true});
      code.innerHTML = result.value;
      code.classList.add('hljs');
    } else {
      code.append(text);
    }
    return el('pre', {tabindex: 0, 'aria-label': label}, code);
  }

  function lineageGraph(sampleId, lineage) {
    const edges = lineage.ancestors.concat(lineage.descendants);
    const level = new Map([[sampleId, 0]]);
    // Ancestors above (negative levels), descendants below; edges come ordered by distance.
    let changed = true;
    for (let round = 0; changed && round < 40; round++) {
      changed = false;
      for (const e of lineage.ancestors) {
        if (level.has(e.child) && !level.has(e.parent)) { level.set(e.parent, level.get(e.child) - 1); changed = true; }
      }
      for (const e of lineage.descendants) {
        if (level.has(e.parent) && !level.has(e.child)) { level.set(e.child, level.get(e.parent) + 1); changed = true; }
      }
    }
    const rows = new Map();
    for (const [id, l] of level) {
      if (!rows.has(l)) rows.set(l, []);
      rows.get(l).push(id);
    }
    const levels = [...rows.keys()].sort((a, b) => a - b);
    const width = 760, rowHeight = 70, boxW = 120, boxH = 26;
    const position = new Map();
    levels.forEach((l, row) => {
      const ids = rows.get(l);
      ids.forEach((id, i) => {
        position.set(id, {x: (i + 1) * width / (ids.length + 1), y: 20 + row * rowHeight});
      });
    });
    const figure = el('figure', {class: 'chart', 'data-chart': 'lineage'},
      el('figcaption', {id: 'lineage-caption'}, `Lineage: ${lineage.ancestors.length} ancestor edges, ` +
        `${lineage.descendants.length} descendant edges`));
    const chart = svg('svg', {viewBox: `0 0 ${width} ${levels.length * rowHeight}`, role: 'group',
      'aria-labelledby': 'lineage-caption', class: 'plot lineage'});
    for (const e of edges) {
      const a = position.get(e.parent), b = position.get(e.child);
      if (!a || !b) continue;
      chart.append(svg('line', {x1: a.x, y1: a.y + boxH, x2: b.x, y2: b.y, class: 'edge'},
        svg('title', {}, `${e.relation}: ${typeof e.reason === 'string' ? e.reason : JSON.stringify(e.reason)}`)),
      svg('text', {x: (a.x + b.x) / 2 + 4, y: (a.y + boxH + b.y) / 2 + 4, class: 'tick'}, e.relation));
    }
    for (const [id, p] of position) {
      const self = id === sampleId;
      const link = svg('a', {href: '#/sample/' + id, class: 'lineage-node' + (self ? ' self' : ''),
        'aria-label': (self ? 'this sample ' : 'sample ') + id, 'data-sample': id},
      svg('rect', {x: p.x - boxW / 2, y: p.y, width: boxW, height: boxH, rx: 4}),
      svg('text', {x: p.x, y: p.y + 17, 'text-anchor': 'middle'}, shortId(id)));
      chart.append(link);
    }
    figure.append(chart);
    return figure;
  }

  pages.sample = async function (main, params, rest) {
    const id = rest[0] || params.id || '';
    main.append(el('h1', {tabindex: -1}, id ? 'Sample ' + shortId(id) : 'Samples'));
    const form = el('form', {class: 'filters', role: 'search', 'aria-label': 'Find a sample'},
      el('div', {class: 'field'}, el('label', {for: 'sample-id'}, 'Sample id (64 hex digits)'),
        el('input', {id: 'sample-id', name: 'id', type: 'text', value: id, autocomplete: 'off', spellcheck: 'false'})),
      el('div', {class: 'field actions'}, el('button', {type: 'submit'}, 'Show')));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      location.hash = '#/sample/' + form.elements.id.value.trim().toLowerCase();
    });
    main.append(form);
    if (!id) {
      const [newest, failed] = await Promise.all([api('/v1/samples?limit=20'), api('/v1/samples?status=failed&limit=10')]);
      const list = (title, samples) => table(title, ['sample', 'track', 'origin', 'status', 'domain', 'created'],
        samples.map((s) => [el('a', {href: '#/sample/' + s.id}, shortId(s.id)), s.track, s.origin, s.status,
          s.domain || '–', fmtTime(s.created_ms)]));
      main.append(list('Newest samples', newest.samples), list('Newest failed samples', failed.samples));
      return;
    }
    let sample, lineage;
    try {
      [sample, lineage] = await Promise.all([api('/v1/samples/' + encodeURIComponent(id)),
        api('/v1/samples/' + encodeURIComponent(id) + '/lineage')]);
    } catch (error) {
      if (error.status !== 404 && error.status !== 400) throw error;
      main.append(note(error.message + '.'));
      return;
    }
    main.append(el('dl', {class: 'facts'},
      [['id', sample.id], ['track', sample.track], ['origin', sample.origin], ['status', sample.status],
        ['domain', sample.domain || '–'], ['features', (sample.features || []).join(', ') || '–'],
        ['cycle', sample.cycle_id || '–'], ['created', fmtTime(sample.created_ms)]]
        .map(([k, v]) => [el('dt', {}, k), el('dd', {'data-fact': k}, v)])));

    const panes = [];
    for (const pane of PANES) {
      let found = pane.match ? pane.match(sample) : null;
      if (!found && pane.kinds) {
        const artifact = sample.artifacts.find((a) => pane.kinds.includes(a.kind));
        if (artifact) found = {text: artifact.content, stage: artifact.stage};
      }
      if (found) panes.push(el('section', {class: 'pane', 'data-pane': pane.title, 'aria-label': pane.title},
        el('h3', {}, pane.title + (found.stage ? ` (${found.stage})` : '')),
        codeBlock(found.text, pane.lang, pane.title + ' code')));
    }
    main.append(el('section', {'aria-labelledby': 'code-h'}, el('h2', {id: 'code-h'}, 'Code side by side'),
      panes.length ? el('div', {class: 'panes'}, panes) : note('No code stored.')));

    const shownKinds = new Set(PANES.flatMap((p) => p.kinds || []));
    const others = sample.artifacts.filter((a) => !shownKinds.has(a.kind));
    if (others.length) {
      main.append(el('section', {'aria-labelledby': 'other-h'}, el('h2', {id: 'other-h'}, 'Other artifacts'),
        others.map((a) => {
          const details = el('details', {}, el('summary', {}, `${a.stage}: ${a.name} (${a.kind}, ${fmtInt(a.size)} bytes)`));
          details.addEventListener('toggle', () => {
            if (details.open && details.children.length === 1) details.append(codeBlock(a.content, 'asm', a.name));
          });
          return details;
        })));
    }
    main.append(el('section', {'aria-labelledby': 'verdict-h'}, el('h2', {id: 'verdict-h'}, 'Verdicts'),
      sample.verifications.length ? table('Stage verdicts', ['stage', 'verdict', 'seconds', 'reason', 'diagnostics', 'exit', 'cached', 'host'],
        sample.verifications.map((v) => [v.stage, el('span', {class: 'verdict ' + v.status}, v.status), fmtNum(v.seconds, 2),
          v.reason || '–', v.diagnostics ? el('pre', {class: 'diagnostics', tabindex: 0}, v.diagnostics) : '–',
          v.exit_code === null ? '–' : v.exit_code, v.cached ? 'yes' : 'no', v.host || '–']), {'data-verdicts': sample.id})
        : note('Not verified yet.')));
    const reasonText = (r) => (typeof r === 'string' ? r : JSON.stringify(r));
    const edges = lineage.ancestors.map((e) => ['ancestor', e]).concat(lineage.descendants.map((e) => ['descendant', e]));
    main.append(el('section', {'aria-labelledby': 'lineage-h'}, el('h2', {id: 'lineage-h'}, 'Lineage'),
      edges.length ? [lineageGraph(sample.id, lineage),
        table('Lineage edges', ['relation', 'side', 'parent', 'child', 'reason', 'agent'],
          edges.map(([side, e]) => [e.relation, side, el('a', {href: '#/sample/' + e.parent}, shortId(e.parent)),
            el('a', {href: '#/sample/' + e.child}, shortId(e.child)), reasonText(e.reason), e.agent || '–']))]
        : note('No ancestors or descendants.')));
  };

  // ---- routing: #/page/rest?query
  async function render() {
    // Only "#/page..." is a route; "#main" (the skip link) and the like are anchors in the page.
    if (location.hash && !location.hash.startsWith('#/')) return;
    const hash = location.hash.replace(/^#\/?/, '');
    const [path, search] = hash.split('?');
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const name = pages[parts[0]] ? parts[0] : 'overview';
    const params = Object.fromEntries(new URLSearchParams(search || ''));
    document.body.dataset.ready = '0';
    document.body.dataset.page = name;
    for (const link of document.querySelectorAll('nav a')) {
      if (link.dataset.page === name) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    const main = document.getElementById('main');
    main.replaceChildren(el('p', {class: 'note', role: 'status'}, 'Loading…'));
    const content = document.createDocumentFragment();
    try {
      await pages[name](content, params, parts.slice(1));
      main.replaceChildren(content);
    } catch (error) {
      main.replaceChildren(el('h1', {tabindex: -1}, 'Cannot show this page'), el('p', {role: 'alert'}, error.message));
      if (!(error instanceof ApiError)) reportError('script error: ' + error.message);
    }
    document.title = 'tailforge: ' + name;
    // A page wider than the window scrolls sideways as a whole: a layout bug on a phone.
    document.body.dataset.overflowX = String(document.documentElement.scrollWidth > window.innerWidth + 1);
    document.body.dataset.ready = '1';
    const heading = main.querySelector('h1');
    if (heading && rendered > 0) heading.focus();
    rendered += 1;
  }
  let rendered = 0;
  window.addEventListener('hashchange', render);
  document.querySelector('.skip').addEventListener('click', (event) => {
    event.preventDefault();
    document.getElementById('main').focus();
  });
  render();
})();
