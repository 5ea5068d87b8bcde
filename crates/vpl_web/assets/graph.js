// The playground's Graph tab: a material graph editor (plain DOM and SVG,
// no library). The document is the graph JSON format (docs/vpl/graph.md);
// every edit posts it to /api/graph (the real graph compiler, VPL reader
// and verifier, GLSL ES 3.00 target) and redraws the WebGL 2 preview
// (webgl.js) with the answer. window.vplGraph exposes the state the browser
// tests drive and wait on (`updates` counts finished compile-and-draw
// rounds; `timings` their round-trip milliseconds, `phases` where each
// went; `localPhases` the constant edits drawn without a round, as drafts;
// `editShownAt`, `fullShownAt` and `answeredAt` when the last edit's draft,
// the last full-size preview and the last answer were shown).
'use strict';

const G = {
  updates: 0,
  doc: null,
  catalogue: {},
  examples: [],
  result: null,
  scene: null,
  lastImage: null,
  selected: null, // {node: id} | {edge: index}
  undo: [],
  redo: [],
  inflight: false,
  dirty: false,
  timings: [],
  phases: [],
  localPhases: [],
  // Edits so far, the last one that was not only a constant's value, and
  // the edit whose compiled answer the preview scene comes from.
  revision: 0,
  structural: 0,
  sceneRevision: -1,
  drawnKey: null,
  drag: null,
  sliding: null,
};
window.vplGraph = G;

const $ = (id) => document.getElementById(id);
const SVG = 'http://www.w3.org/2000/svg';

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) e.appendChild(c);
  return e;
}

// ---- The document and its edits ------------------------------------------

function snapshot() { return JSON.stringify(G.doc); }

// Applies `change` to the document with an undo step; redraws the board
// and recompiles unless told otherwise.
function edit(change, options) {
  const o = Object.assign({ render: true, compile: true, undo: true, valueOnly: false }, options || {});
  G.revision++;
  if (!o.valueOnly) G.structural = G.revision;
  if (o.undo) {
    G.undo.push(snapshot());
    if (G.undo.length > 200) G.undo.shift();
    G.redo = [];
  }
  change(G.doc);
  if (o.render) render();
  if (o.compile) compile();
}
G.edit = edit;

function restore(text) {
  G.doc = JSON.parse(text);
  G.structural = ++G.revision;
  if (G.selected && G.selected.node && !node(G.selected.node)) G.selected = null;
  if (G.selected && G.selected.edge !== undefined) G.selected = null;
  render();
  compile();
}

function undo() {
  if (!G.undo.length) return;
  G.redo.push(snapshot());
  restore(G.undo.pop());
}

function redo() {
  if (!G.redo.length) return;
  G.undo.push(snapshot());
  restore(G.redo.pop());
}
G.undoEdit = undo;
G.redoEdit = redo;

function node(id) { return G.doc.nodes.find((n) => n.id === id); }

function freshId(kind) {
  let n = 1;
  while (node(kind + n)) n++;
  return kind + n;
}

function addNode(kind, x, y) {
  const spec = G.catalogue[kind];
  if (!spec) return null;
  const id = freshId(kind);
  edit((d) => {
    const n = Object.assign({ id, kind }, JSON.parse(JSON.stringify(spec.defaults)));
    if (kind === 'call' && d.functions && d.functions.length) n.function = d.functions[0].name;
    n.position = [Math.round(x), Math.round(y)];
    d.nodes.push(n);
  });
  G.selected = { node: id };
  render();
  return id;
}
G.addNode = addNode;

function connect(from, to) {
  edit((d) => {
    d.edges = d.edges.filter((e) => e.to !== to);
    d.edges.push({ from, to });
  });
}
G.connect = connect;

function deleteSelected() {
  const s = G.selected;
  if (!s) return;
  if (s.node) {
    edit((d) => {
      d.nodes = d.nodes.filter((n) => n.id !== s.node);
      d.edges = d.edges.filter((e) => e.from.split('.')[0] !== s.node && e.to.split('.')[0] !== s.node);
    });
  } else if (s.edge !== undefined) {
    edit((d) => { d.edges.splice(s.edge, 1); });
  }
  G.selected = null;
  render();
}

function duplicateSelected() {
  const s = G.selected;
  if (!s || !s.node) return;
  const original = node(s.node);
  if (!original) return;
  const id = freshId(original.kind);
  edit((d) => {
    const copy = JSON.parse(JSON.stringify(original));
    copy.id = id;
    const [x, y] = original.position || [40, 40];
    copy.position = [x + 30, y + 30];
    d.nodes.push(copy);
    // The copy reads the same inputs as the original.
    for (const e of d.edges.slice()) {
      const [target, socket] = e.to.split('.');
      if (target === original.id) d.edges.push({ from: e.from, to: id + '.' + socket });
    }
  });
  G.selected = { node: id };
  render();
}

// ---- Sockets ---------------------------------------------------------------

function inputsOf(n) {
  if (n.kind === 'call') {
    const f = (G.doc.functions || []).find((g) => g.name === n.function);
    return f ? f.inputs.map((i) => i.name) : [];
  }
  return (G.catalogue[n.kind] || { inputs: [] }).inputs;
}

function outputsOf(n) { return (G.catalogue[n.kind] || { outputs: [] }).outputs; }

function endpoint(spec, output) {
  const [id, socket] = spec.split('.');
  const n = node(id);
  if (!n) return null;
  const names = output ? outputsOf(n) : inputsOf(n);
  return { id, socket: socket || names[0] };
}

// ---- Drawing ---------------------------------------------------------------

function layout() {
  // Nodes without a position: columns by depth, rows in file order.
  const depth = {};
  const incoming = {};
  for (const e of G.doc.edges) {
    const t = e.to.split('.')[0];
    (incoming[t] = incoming[t] || []).push(e.from.split('.')[0]);
  }
  const visit = (id, guard) => {
    if (depth[id] !== undefined) return depth[id];
    if (guard > 500) return 0;
    const d = Math.max(-1, ...(incoming[id] || []).map((p) => visit(p, guard + 1))) + 1;
    depth[id] = d;
    return d;
  };
  const rows = {};
  for (const n of G.doc.nodes) {
    if (n.position) continue;
    const d = visit(n.id, 0);
    rows[d] = (rows[d] || 0) + 1;
    n.position = [30 + 190 * d, 20 + 120 * (rows[d] - 1)];
  }
}

const TYPES = ['float', 'float2', 'float3', 'float4', 'int', 'int2', 'int3', 'int4', 'bool'];

function componentsOf(type) {
  const m = /^(float|int|bool)([234])?$/.exec(type || '');
  return m ? Number(m[2] || 1) : 1;
}

function hex(values) {
  return '#' + values.slice(0, 3).map((v) => {
    const c = Math.max(0, Math.min(255, Math.round(Number(v) * 255)));
    return c.toString(16).padStart(2, '0');
  }).join('');
}

// A parameter editor row.
function param(label, input) {
  return el('div', { class: 'param' }, el('span', { text: label + ' ' }), input);
}

function textParam(n, key) {
  const input = el('input', { type: 'text', value: n[key] === undefined ? '' : String(n[key]), 'data-param': key });
  input.addEventListener('change', () => edit(() => {
    if (key === 'index' || key === 'location') {
      if (input.value === '') delete n[key]; else n[key] = Number(input.value);
    } else n[key] = input.value;
  }));
  return param(key, input);
}

function selectParam(n, key, options) {
  const s = el('select', { 'data-param': key });
  for (const o of options) s.appendChild(el('option', { value: o, text: o }));
  s.value = n[key] || options[0];
  s.addEventListener('change', () => edit(() => { n[key] = s.value; }));
  return param(key, s);
}

// Sliders (and a colour picker for float3/float4) of a constant.
function constantEditor(n, box) {
  // Changing the type keeps the first value for every component.
  const type = el('select', { 'data-param': 'type' });
  for (const o of TYPES) type.appendChild(el('option', { value: o, text: o }));
  type.value = n.type || 'float';
  type.addEventListener('change', () => edit(() => {
    const first = Array.isArray(n.value) ? n.value[0] : n.value;
    const kind = type.value.replace(/[234]$/, '');
    n.type = type.value;
    n.value = kind === 'bool' ? Boolean(first) : (kind === 'int' ? Math.round(Number(first) || 0) : Number(first) || 0);
  }));
  box.appendChild(param('type', type));
  const count = componentsOf(n.type);
  const kind = (n.type || 'float').replace(/[234]$/, '');
  let values = Array.isArray(n.value) ? n.value.slice() : Array(count).fill(n.value);
  while (values.length < count) values.push(values[values.length - 1] ?? 0);
  values = values.slice(0, count);
  const [min, max] = n.range || (kind === 'int' ? [-16, 16] : [0, 1]);
  const sliders = [];
  const set = (i, v) => {
    values[i] = kind === 'bool' ? Boolean(v) : Number(v);
    const value = count === 1 ? values[0] : values.slice();
    edit(() => { n.value = value; }, { render: false, undo: G.sliding !== n.id, valueOnly: true, compile: false });
    G.sliding = n.id;
    valueEdited();
  };
  values.forEach((v, i) => {
    let input;
    if (kind === 'bool') {
      input = el('input', { type: 'checkbox', 'data-component': String(i) });
      input.checked = Boolean(v);
      input.addEventListener('change', () => { G.sliding = null; set(i, input.checked); valueSettled(); });
    } else {
      input = el('input', { type: 'range', min: String(min), max: String(max),
        step: kind === 'int' ? '1' : String((max - min) / 100), value: String(v), 'data-component': String(i) });
      input.addEventListener('input', () => set(i, input.value));
      input.addEventListener('change', () => { G.sliding = null; valueSettled(); });
    }
    sliders.push(input);
    box.appendChild(param('xyzw'[i], input));
  });
  if (kind === 'float' && count >= 3) {
    const picker = el('input', { type: 'color', value: hex(values), 'data-color': '1' });
    picker.addEventListener('input', () => {
      const h = picker.value;
      for (let i = 0; i < 3; i++) {
        values[i] = parseInt(h.substr(1 + 2 * i, 2), 16) / 255;
        sliders[i].value = String(values[i]);
      }
      edit(() => { n.value = values.slice(); }, { render: false, undo: G.sliding !== n.id, valueOnly: true, compile: false });
      G.sliding = n.id;
      valueEdited();
    });
    picker.addEventListener('change', () => { G.sliding = null; valueSettled(); });
    box.appendChild(param('colour', picker));
  }
}

function paramsEditor(n, box) {
  switch (n.kind) {
    case 'constant': constantEditor(n, box); break;
    case 'uniform': box.appendChild(textParam(n, 'name')); box.appendChild(textParam(n, 'type')); break;
    case 'texture_sample':
      box.appendChild(textParam(n, 'name'));
      box.appendChild(selectParam(n, 'wrap', ['repeat', 'clamp_to_edge']));
      box.appendChild(selectParam(n, 'min_filter', ['linear', 'nearest', 'nearest_mipmap_nearest']));
      box.appendChild(selectParam(n, 'mag_filter', ['linear', 'nearest']));
      break;
    case 'swizzle': box.appendChild(textParam(n, 'pattern')); break;
    case 'compare':
      box.appendChild(selectParam(n, 'op', ['less', 'less_equal', 'greater', 'greater_equal', 'equal', 'not_equal']));
      break;
    case 'combine': case 'convert': box.appendChild(selectParam(n, 'type', TYPES)); break;
    case 'member': box.appendChild(textParam(n, 'field')); break;
    case 'index': box.appendChild(textParam(n, 'index')); break;
    case 'parameter': box.appendChild(textParam(n, 'name')); break;
    case 'call':
      box.appendChild(selectParam(n, 'function', (G.doc.functions || []).map((f) => f.name)));
      break;
    case 'fragment_output':
      box.appendChild(textParam(n, 'name'));
      box.appendChild(textParam(n, 'location'));
      break;
    default: break;
  }
}

function nodeElement(n) {
  const box = el('div', { class: 'node', 'data-node': n.id });
  box.style.left = n.position[0] + 'px';
  box.style.top = n.position[1] + 'px';
  if (G.selected && G.selected.node === n.id) box.classList.add('selected');
  const title = el('div', { class: 'title', text: n.id + ' : ' + n.kind });
  title.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    G.selected = { node: n.id };
    G.drag = { type: 'move', id: n.id, x: e.clientX, y: e.clientY, start: n.position.slice(), before: snapshot() };
    highlightSelection();
  });
  box.appendChild(title);
  const ins = inputsOf(n);
  const outs = outputsOf(n);
  for (let i = 0; i < Math.max(ins.length, outs.length); i++) {
    const row = el('div', { class: 'row' });
    const left = el('span');
    if (ins[i] !== undefined) {
      left.appendChild(el('span', { class: 'socket in', 'data-node': n.id, 'data-socket': ins[i] }));
      left.appendChild(document.createTextNode(' ' + ins[i]));
    }
    const right = el('span');
    if (outs[i] !== undefined) {
      right.appendChild(document.createTextNode(outs[i] + ' '));
      const s = el('span', { class: 'socket out', 'data-node': n.id, 'data-socket': outs[i] });
      s.addEventListener('pointerdown', (e) => {
        e.preventDefault();
        e.stopPropagation();
        G.drag = { type: 'wire', from: n.id + '.' + outs[i] };
      });
      right.appendChild(s);
    }
    row.appendChild(left);
    row.appendChild(right);
    box.appendChild(row);
  }
  paramsEditor(n, box);
  box.addEventListener('pointerdown', () => { G.selected = { node: n.id }; highlightSelection(); });
  return box;
}

function socketPoint(id, socket, output) {
  const s = document.querySelector(`.socket.${output ? 'out' : 'in'}[data-node="${CSS.escape(id)}"][data-socket="${CSS.escape(socket)}"]`);
  if (!s) return null;
  const inner = $('board-inner').getBoundingClientRect();
  const r = s.getBoundingClientRect();
  return [r.left + r.width / 2 - inner.left, r.top + r.height / 2 - inner.top];
}

function curve(a, b) {
  const dx = Math.max(40, Math.abs(b[0] - a[0]) / 2);
  return `M${a[0]},${a[1]} C${a[0] + dx},${a[1]} ${b[0] - dx},${b[1]} ${b[0]},${b[1]}`;
}

function drawWires() {
  const svg = $('wires');
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  G.doc.edges.forEach((e, i) => {
    const from = endpoint(e.from, true);
    const to = endpoint(e.to, false);
    if (!from || !to) return;
    const a = socketPoint(from.id, from.socket, true);
    const b = socketPoint(to.id, to.socket, false);
    if (!a || !b) return;
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('d', curve(a, b));
    p.setAttribute('data-edge', String(i));
    if (G.selected && G.selected.edge === i) p.setAttribute('class', 'selected');
    p.addEventListener('pointerdown', (ev) => {
      ev.stopPropagation();
      G.selected = { edge: i };
      highlightSelection();
    });
    svg.appendChild(p);
  });
}

function highlightSelection() {
  document.querySelectorAll('.node').forEach((b) => {
    b.classList.toggle('selected', Boolean(G.selected && G.selected.node === b.dataset.node));
  });
  document.querySelectorAll('#wires path').forEach((p) => {
    p.classList.toggle('selected', Boolean(G.selected && G.selected.edge === Number(p.dataset.edge)));
  });
}

function render() {
  layout();
  const inner = $('board-inner');
  inner.querySelectorAll('.node').forEach((n) => n.remove());
  for (const n of G.doc.nodes) inner.appendChild(nodeElement(n));
  drawWires();
  markErrors();
}

// ---- Compilation and preview -------------------------------------------------

function markErrors() {
  const list = $('graph-diagnostics');
  list.textContent = '';
  const r = G.result;
  if (!r) return;
  for (const d of r.graph_diagnostics || []) {
    const where = (d.function ? d.function + '/' : '') + (d.node || '') + (d.socket ? '.' + d.socket : '');
    const li = el('li', { text: `${d.code} ${where}: ${d.message}` });
    if (!d.function && d.node) {
      const box = document.querySelector(`.node[data-node="${CSS.escape(d.node)}"]`);
      if (box) {
        box.classList.add('error');
        box.title = d.message;
      }
      if (d.socket) {
        const s = document.querySelector(`.socket[data-node="${CSS.escape(d.node)}"][data-socket="${CSS.escape(d.socket)}"]`);
        if (s) s.classList.add('error');
      }
      li.addEventListener('click', () => { G.selected = { node: d.node }; highlightSelection(); });
    }
    list.appendChild(li);
  }
  for (const d of r.diagnostics || []) list.appendChild(el('li', { text: `${d.code}: ${d.message}` }));
}

function show(result, phases) {
  G.result = result;
  document.querySelectorAll('.node.error').forEach((b) => { b.classList.remove('error'); b.title = ''; });
  document.querySelectorAll('.socket.error').forEach((s) => s.classList.remove('error'));
  markErrors();
  // The text is often unchanged (a node moved, a value set to itself).
  const text = result.vpl || '';
  if ($('vpl').textContent !== text) $('vpl').textContent = text;
  const n = (result.graph_diagnostics || []).length + (result.diagnostics || []).length;
  $('status').textContent = result.ok ? 'valid' : `${n} error(s)`;
  if (result.preview) {
    const scene = result.preview.scene;
    // Edits of constant values made since the graph was posted are set
    // already (and drawn): keep them rather than go back.
    setConstants(scene, result.preview.constants);
    G.scene = scene;
    G.sceneRevision = phases.revision;
    draw(phases);
  } else {
    $('preview-status').textContent = 'preview not updated: ' + (result.preview_error || 'the graph is invalid');
  }
}

// Draws G.scene unless it is exactly what the preview shows (an answer to
// constant edits that were drawn as they were made). `scale` > 1 draws a
// draft at that fraction of the width and height (DRAFT_SCALE while a
// constant is edited); the full size follows with the server's answer.
function draw(phases, scale) {
  const divisor = scale || 1;
  const key = JSON.stringify(G.scene) + (divisor === 1 ? '' : '@' + divisor);
  if (key === G.drawnKey) {
    phases.drawn = false;
    return;
  }
  try {
    G.lastImage = vplRender($('preview'), G.scene, phases, divisor);
    G.drawnKey = key;
    G.shownAt = performance.now();
    if (divisor === 1) G.fullShownAt = G.shownAt;
    phases.drawn = true;
    phases.scale = divisor;
    $('preview-status').textContent = 'GLSL ES 3.00 on WebGL 2';
  } catch (e) {
    G.drawnKey = null;
    $('preview-status').textContent = String(e.message || e);
  }
}

// Sets the leaves of the listed constants (`[{node, type, path}]`, the
// preview build's constants uniform) in `scene` to the document's values;
// a constant that is gone, retyped or out of range is left as compiled.
function setConstants(scene, constants) {
  for (const c of constants || []) {
    const n = node(c.node);
    if (!n || n.kind !== 'constant' || (n.type || 'float') !== c.type) continue;
    const count = componentsOf(c.type);
    const values = (Array.isArray(n.value) ? n.value : Array(count).fill(n.value)).map(Number);
    const integer = c.type.startsWith('int');
    if (values.length !== count || !values.every((v) => Number.isFinite(v) &&
        Math.abs(v) <= 3.4028234663852886e38 && (!integer || Number.isInteger(v)))) continue;
    for (const block of scene.blocks) {
      for (const leaf of block.leaves) {
        if (leaf.path === c.path && leaf.values.length === count) leaf.values = values.slice();
      }
    }
  }
}

// An edit of a constant's value (a slider, a colour picker): when the
// preview's scene comes from the document as it now is but for constant
// values, and the constant is one of its uniform leaves, the preview is
// drawn at once with the new value (the program is kept: no compile, no
// link), as a draft of a quarter of the pixels (half the width and the
// height, scaled up on the canvas); the round through the server follows
// for the VPL text, and its answer is drawn at full size.
const DRAFT_SCALE = 2;
function valueEdited() {
  const r = G.result;
  if (G.scene && r && r.ok && r.preview && G.sceneRevision >= G.structural) {
    const started = performance.now();
    const phases = { revision: G.revision };
    setConstants(G.scene, r.preview.constants);
    draw(phases, DRAFT_SCALE);
    if (phases.drawn) {
      // When this edit was first shown, and its draft (what the tests
      // compare with a draft of the server's build).
      G.editShownAt = G.shownAt;
      G.lastDraft = G.lastImage;
    }
    phases.total = performance.now() - started;
    G.localPhases.push(phases);
    if (G.localPhases.length > 200) G.localPhases.shift();
  }
  compile();
}

// The end of a constant's edit (a slider released, a colour chosen, a box
// ticked): a draft on the preview is drawn again at full size at once,
// without waiting for the server's answer (which is then not drawn again
// when it shows the same scene).
function valueSettled() {
  const r = G.result;
  if (G.drawnKey === null || !G.drawnKey.endsWith('@' + DRAFT_SCALE)) return;
  if (G.scene && r && r.ok && r.preview && G.sceneRevision >= G.structural) {
    const started = performance.now();
    const phases = { revision: G.revision, settled: true };
    draw(phases);
    phases.total = performance.now() - started;
    G.localPhases.push(phases);
    if (G.localPhases.length > 200) G.localPhases.shift();
  }
}

async function compile() {
  if (G.inflight) { G.dirty = true; return; }
  G.inflight = true;
  const started = performance.now();
  const revision = G.revision;
  try {
    const body = JSON.stringify(G.doc);
    const response = await fetch('/api/graph', {
      method: 'POST', body, headers: { 'content-type': 'application/json' },
    });
    const answered = performance.now();
    const result = await response.json();
    if (result.error) throw new Error(result.error.message);
    const parsed = performance.now();
    // Where the round went (ms): the request until the answer's headers
    // (`request`, of which the server's own phases from its Server-Timing
    // header: `graph`, `publish`, `preview`, `json`), reading its JSON
    // (`read`), the page (`page`: diagnostics, text), and vplRender's
    // `link`, `draw` and `image`.
    const phases = { request: answered - started, read: parsed - answered, revision };
    for (const m of (response.headers.get('server-timing') || '').split(',')) {
      const [name, dur] = m.trim().split(';dur=');
      if (name && dur !== undefined) phases[name] = Number(dur);
    }
    show(result, phases);
    // When the answer was shown (the end of a round trip; `shownAt` is
    // when the preview last changed).
    G.answeredAt = performance.now();
    phases.total = G.answeredAt - started;
    phases.page = G.answeredAt - parsed - (phases.link || 0) - (phases.draw || 0) - (phases.image || 0);
    G.phases.push(phases);
    if (G.phases.length > 200) G.phases.shift();
    G.timings.push(G.answeredAt - started);
  } catch (e) {
    $('status').textContent = 'error: ' + String(e.message || e);
  } finally {
    G.inflight = false;
    if (G.dirty) {
      G.dirty = false;
      compile();
    } else {
      G.updates++;
    }
  }
}
G.compile = compile;

// ---- Save and load -----------------------------------------------------------

function save() { return JSON.stringify(G.doc, null, 2) + '\n'; }
G.save = save;

function load(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    $('status').textContent = 'not JSON: ' + e.message;
    return false;
  }
  if (!doc || !Array.isArray(doc.nodes)) {
    $('status').textContent = 'not a graph document (no nodes)';
    return false;
  }
  doc.edges = doc.edges || [];
  if (G.doc) {
    G.undo.push(snapshot());
    G.redo = [];
  }
  G.doc = doc;
  G.structural = ++G.revision;
  G.selected = null;
  render();
  compile();
  return true;
}
G.load = load;

// ---- Pointer and keyboard ------------------------------------------------------

function boardPoint(x, y) {
  const inner = $('board-inner').getBoundingClientRect();
  return [x - inner.left, y - inner.top];
}

function onPointerMove(e) {
  const d = G.drag;
  if (!d) return;
  if (d.type === 'move') {
    const n = node(d.id);
    if (!n) return;
    n.position = [Math.max(0, d.start[0] + e.clientX - d.x), Math.max(0, d.start[1] + e.clientY - d.y)];
    const box = document.querySelector(`.node[data-node="${CSS.escape(d.id)}"]`);
    if (box) {
      box.style.left = n.position[0] + 'px';
      box.style.top = n.position[1] + 'px';
    }
    drawWires();
  } else if (d.type === 'wire') {
    const from = endpoint(d.from, true);
    const a = from && socketPoint(from.id, from.socket, true);
    if (!a) return;
    drawWires();
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('d', curve(a, boardPoint(e.clientX, e.clientY)));
    p.setAttribute('class', 'selected');
    $('wires').appendChild(p);
  }
}

function onPointerUp(e) {
  const d = G.drag;
  G.drag = null;
  if (!d) return;
  const target = document.elementFromPoint(e.clientX, e.clientY);
  if (d.type === 'palette') {
    if (target && target.closest('#board')) {
      const [x, y] = boardPoint(e.clientX, e.clientY);
      addNode(d.kind, x, y);
    }
  } else if (d.type === 'wire') {
    if (target && target.classList.contains('socket') && target.classList.contains('in')) {
      connect(d.from, target.dataset.node + '.' + target.dataset.socket);
    } else drawWires();
  } else if (d.type === 'move') {
    // Positions are editor data: an undo step, no recompilation.
    if (snapshot() !== d.before) {
      G.undo.push(d.before);
      G.redo = [];
    }
  }
}

function onKey(e) {
  const tag = (e.target && e.target.tagName) || '';
  if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') return;
  const mod = e.ctrlKey || e.metaKey;
  if (e.key === 'Delete' || e.key === 'Backspace') {
    e.preventDefault();
    deleteSelected();
  } else if (mod && (e.key === 'z' || e.key === 'Z') && !e.shiftKey) {
    e.preventDefault();
    undo();
  } else if (mod && (e.key === 'y' || ((e.key === 'z' || e.key === 'Z') && e.shiftKey))) {
    e.preventDefault();
    redo();
  } else if (mod && (e.key === 'd' || e.key === 'D')) {
    e.preventDefault();
    duplicateSelected();
  }
}

async function init() {
  const [catalogue, examples] = await Promise.all([
    fetch('/api/graph/catalogue').then((r) => r.json()),
    fetch('/api/graph/examples').then((r) => r.json()),
  ]);
  for (const k of catalogue) G.catalogue[k.kind] = k;
  G.examples = examples;
  const palette = $('palette');
  for (const k of catalogue) {
    const item = el('div', { class: 'item', 'data-kind': k.kind, text: k.kind });
    item.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      G.drag = { type: 'palette', kind: k.kind };
    });
    palette.appendChild(item);
  }
  const select = $('example');
  for (const x of examples) select.appendChild(el('option', { value: x.name, text: x.name }));
  select.addEventListener('change', () => {
    const x = examples.find((y) => y.name === select.value);
    if (x) load(x.graph);
  });
  $('save').addEventListener('click', () => {
    const url = URL.createObjectURL(new Blob([save()], { type: 'application/json' }));
    const a = el('a', { href: url, download: (select.value || 'material') + '.json' });
    document.body.appendChild(a);
    a.click();
    a.remove();
    URL.revokeObjectURL(url);
  });
  $('load').addEventListener('change', async () => {
    const f = $('load').files[0];
    if (f) load(await f.text());
  });
  $('board').addEventListener('pointerdown', (e) => {
    if (e.target === $('board') || e.target === $('board-inner') || e.target === $('wires')) {
      G.selected = null;
      highlightSelection();
    }
  });
  document.addEventListener('pointermove', onPointerMove);
  document.addEventListener('pointerup', onPointerUp);
  document.addEventListener('keydown', onKey);
  const wanted = new URLSearchParams(location.search).get('example');
  const first = examples.find((x) => x.name === wanted) || examples[0];
  if (wanted === 'empty' || !first) {
    load('{"version": 1, "nodes": [], "edges": []}');
  } else {
    select.value = first.name;
    load(first.graph);
  }
}

init();
