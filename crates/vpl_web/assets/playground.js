// The VPL playground: the editor posts its text to /api/compile (the real
// reader, verifier and backends), shows the diagnostics with their
// positions highlighted, the generated code of two targets side by side,
// and draws the GLSL ES 3.00 output with WebGL 2 (webgl.js), with a slider
// per uniform component. window.vplPlayground exposes the state the
// browser tests wait on (`updates` counts finished compile-and-draw rounds).
'use strict';

const state = {
  updates: 0,
  result: null,
  scene: null,
  previewError: null,
  request: 0,
  timer: null,
  programs: [],
  // Where the editor's text came from: { label, source, file }.
  origin: null,
};
window.vplPlayground = state;

const $ = (id) => document.getElementById(id);

function escapeHtml(s) {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

// The UTF-16 index of (line, column), both counted in code points from 1.
function indexOf(text, line, column) {
  let index = 0;
  for (let l = 1; l < line; l++) {
    const next = text.indexOf('\n', index);
    if (next < 0) return text.length;
    index = next + 1;
  }
  let c = 1;
  while (c < column && index < text.length && text[index] !== '\n') {
    const code = text.codePointAt(index);
    index += code > 0xffff ? 2 : 1;
    c++;
  }
  return index;
}

// The end of the token that starts at `start` (at least one character).
function tokenEnd(text, start) {
  let end = start;
  if (text[end] === '"') {
    end++;
    while (end < text.length && text[end] !== '"' && text[end] !== '\n') end++;
    return Math.min(text.length, end + 1);
  }
  while (end < text.length && !/[\s()]/.test(text[end])) end++;
  return Math.max(end, Math.min(text.length, start + 1));
}

function drawEditor(diagnostics) {
  const text = $('source').value;
  const lines = text.split('\n').length;
  const bad = new Set(diagnostics.filter((d) => d.line).map((d) => d.line));
  let gutter = '';
  for (let l = 1; l <= lines; l++) {
    gutter += '<span data-line="' + l + '"' + (bad.has(l) ? ' class="error"' : '') + '>' + l + '</span>';
  }
  $('gutter').innerHTML = gutter;
  const marks = diagnostics
    .filter((d) => d.line)
    .map((d) => {
      const start = indexOf(text, d.line, d.column || 1);
      return { start, end: tokenEnd(text, start), line: d.line, column: d.column || 1 };
    })
    .sort((a, b) => a.start - b.start);
  let html = '';
  let at = 0;
  for (const m of marks) {
    if (m.start < at) continue;
    html += escapeHtml(text.slice(at, m.start));
    const inner = text.slice(m.start, m.end) || ' ';
    html += '<mark data-line="' + m.line + '" data-column="' + m.column + '">' + escapeHtml(inner) + '</mark>';
    at = m.end;
  }
  html += escapeHtml(text.slice(at)) + '\n';
  $('backdrop').innerHTML = html;
  syncScroll();
}

function syncScroll() {
  $('backdrop').scrollTop = $('source').scrollTop;
  $('backdrop').scrollLeft = $('source').scrollLeft;
  $('gutter').scrollTop = $('source').scrollTop;
}

function drawDiagnostics(diagnostics) {
  const list = $('diagnostics');
  list.innerHTML = '';
  if (diagnostics.length === 0) {
    const li = document.createElement('li');
    li.className = 'ok';
    li.textContent = 'valid: no diagnostics';
    list.appendChild(li);
  }
  for (const d of diagnostics) {
    const li = document.createElement('li');
    li.className = 'diagnostic ' + (d.kind === 'target' ? 'target' : 'error');
    li.dataset.kind = d.kind;
    if (d.code) li.dataset.code = d.code;
    if (d.line) {
      li.dataset.line = d.line;
      li.dataset.column = d.column;
    }
    const where = d.line ? d.label + ':' + d.line + ':' + d.column : d.label;
    li.textContent = where + ': ' + d.kind + (d.code ? '[' + d.code + ']' : '') + ': ' + d.message;
    li.addEventListener('click', () => {
      if (!d.line) return;
      const source = $('source');
      const start = indexOf(source.value, d.line, d.column || 1);
      source.focus();
      source.setSelectionRange(start, tokenEnd(source.value, start));
    });
    list.appendChild(li);
  }
}

function drawCode() {
  const result = state.result;
  for (const side of ['left', 'right']) {
    const pre = $('code-' + side);
    const name = $('target-' + side).value;
    const target = result && result.targets.find((t) => t.name === name);
    pre.dataset.target = name;
    if (!target) {
      pre.textContent = result && result.ok === false ? '(the module is invalid)' : '';
    } else if (!target.ok) {
      const d = target.diagnostic;
      pre.textContent = 'refused: ' + (d.code ? '[' + d.code + '] ' : '') + d.message +
        (d.line ? '\n  at line ' + d.line + ', column ' + d.column : '');
    } else {
      pre.textContent = target.files.map((f) => '// ── ' + f.name + '\n' + f.text).join('\n') +
        '\n// ── reflection\n' + target.reflection;
    }
  }
}

function drawControls(controls) {
  const box = $('controls');
  box.innerHTML = '';
  for (const c of controls) {
    c.values.forEach((v, i) => {
      const label = document.createElement('label');
      const name = c.values.length > 1 ? c.path + '[' + 'xyzw'[i] + ']' : c.path;
      const input = document.createElement('input');
      input.type = 'range';
      input.min = c.min;
      input.max = c.max;
      input.step = c.step;
      input.value = v;
      input.dataset.path = c.path;
      input.dataset.component = i;
      const out = document.createElement('output');
      out.textContent = ' ' + v;
      input.addEventListener('input', () => {
        out.textContent = ' ' + input.value;
        setUniform(c.path, i, Number(input.value));
      });
      label.append(name, out, input);
      box.appendChild(label);
    });
  }
}

// Sets one component of a uniform leaf in the current scene and redraws.
function setUniform(path, component, value) {
  if (!state.scene) return;
  for (const block of state.scene.blocks) {
    for (const leaf of block.leaves) {
      if (leaf.path === path) leaf.values[component] = value;
    }
  }
  drawPreview();
}
state.setUniform = setUniform;

function drawPreview() {
  if (!state.scene) return;
  try {
    state.lastImage = vplRender($('preview'), state.scene);
    $('preview-status').textContent = state.previewError ? '' : 'GLSL ES 3.00 on WebGL 2';
  } catch (e) {
    $('preview-status').textContent = String(e.message || e);
  }
}

async function compileNow() {
  const request = ++state.request;
  const source = $('source').value;
  let result;
  try {
    const response = await fetch('/api/compile', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ source, label: currentLabel() }),
    });
    result = await response.json();
  } catch (e) {
    $('status').textContent = 'server unreachable: ' + e;
    $('status').className = 'error';
    return;
  }
  if (request !== state.request) return; // a newer edit is on its way
  state.result = result;
  const diagnostics = result.diagnostics || [];
  drawEditor(diagnostics);
  drawDiagnostics(diagnostics);
  drawCode();
  const invalid = result.ok === false;
  $('status').textContent = invalid ? 'invalid' : diagnostics.length ? 'valid; some targets refuse it' : 'valid';
  $('status').className = invalid ? 'error' : '';
  if (result.preview) {
    state.scene = result.preview.scene;
    state.previewError = null;
    drawControls(result.preview.controls);
    drawPreview();
  } else {
    // The sliders belonged to the last program that drew: they no longer apply.
    state.scene = null;
    $('controls').innerHTML = '';
    // Keep the last image; say why it is stale.
    state.previewError = invalid ? 'the module is invalid' : result.preview_error;
    $('preview-status').textContent = 'preview not updated: ' + state.previewError;
  }
  state.updates++;
}
state.compileNow = compileNow;

function scheduleCompile() {
  clearTimeout(state.timer);
  state.timer = setTimeout(compileNow, 200);
}

// The name diagnostics give the editor's text: the built-in's file while the text is the
// built-in's own, the opened file's name while it came from a file, else `untitled.vpl`
// (pasted or edited code is no longer the built-in).
function currentLabel() {
  const text = $('source').value;
  if (state.origin && state.origin.source === text) return state.origin.label;
  if (state.origin && state.origin.file) return state.origin.label;
  return 'untitled.vpl';
}

function showLabel() {
  $('label').textContent = currentLabel();
}

function loadProgram(name) {
  const p = state.programs.find((q) => q.name === name);
  if (!p) return;
  $('source').value = p.source;
  state.origin = { label: p.name + '.vpl', source: p.source, file: false };
  showLabel();
  compileNow();
}
state.loadProgram = loadProgram;

// Opens a .vpl file from disk into the editor; its name labels the diagnostics.
function openFile(file) {
  const reader = new FileReader();
  reader.onload = () => {
    const text = String(reader.result);
    $('source').value = text;
    state.origin = { label: file.name, source: text, file: true };
    $('program').value = '';
    showLabel();
    compileNow();
  };
  reader.onerror = () => {
    $('status').textContent = 'cannot read ' + file.name + ': ' + reader.error;
    $('status').className = 'error';
  };
  reader.readAsText(file);
}
state.openFile = openFile;
state.currentLabel = currentLabel;

async function init() {
  for (const side of ['left', 'right']) {
    const select = $('target-' + side);
    for (const name of ['glsl-420', 'glsl-es-300', 'spirv', 'wgsl', 'msl', 'hlsl']) {
      const o = document.createElement('option');
      o.value = o.textContent = name;
      select.appendChild(o);
    }
    select.value = side === 'left' ? 'glsl-420' : 'glsl-es-300';
    select.addEventListener('change', drawCode);
  }
  const source = $('source');
  source.addEventListener('input', () => {
    drawEditor([]);
    showLabel();
    scheduleCompile();
  });
  $('open').addEventListener('change', (e) => {
    const file = e.target.files && e.target.files[0];
    if (file) openFile(file);
  });
  source.addEventListener('scroll', syncScroll);
  source.addEventListener('keydown', (e) => {
    if (e.key === 'Tab') {
      e.preventDefault();
      source.setRangeText('  ', source.selectionStart, source.selectionEnd, 'end');
      scheduleCompile();
    }
  });
  const response = await fetch('/api/programs');
  state.programs = await response.json();
  const select = $('program');
  for (const p of state.programs) {
    const o = document.createElement('option');
    o.value = o.textContent = p.name;
    select.appendChild(o);
  }
  select.addEventListener('change', () => loadProgram(select.value));
  const wanted = new URLSearchParams(location.search).get('program');
  const first = state.programs.find((p) => p.name === wanted) || state.programs[0];
  select.value = first.name;
  loadProgram(first.name);
}

init();
