// The WebGL 2 renderer for VPL's GLSL ES 3.00 target. A "scene" (built by
// crates/vpl_web/src/scene.rs) carries both shaders, the uniform blocks
// with their std140 leaves, the samplers with their textures, the vertex
// attributes and the framebuffer size. vplRender draws one full-screen
// quad (a triangle strip: bottom-left, bottom-right, top-left, top-right)
// into an RGBA8 framebuffer and reads the pixels back, rows top-down.
'use strict';

function vplDecodeBase64(text) {
  const s = atob(text);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}

function vplEncodeBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}

function vplShader(gl, type, code, what) {
  const shader = gl.createShader(type);
  gl.shaderSource(shader, code);
  gl.compileShader(shader);
  if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) {
    const log = gl.getShaderInfoLog(shader);
    gl.deleteShader(shader);
    throw new Error('webgl-compile: the ' + what + ' shader does not compile: ' + log);
  }
  return shader;
}

// Writes the leaf values of one block into a std140 byte image.
function vplBlockImage(block) {
  const bytes = new ArrayBuffer(Math.max(16, block.size));
  const f = new Float32Array(bytes);
  const i = new Int32Array(bytes);
  for (const leaf of block.leaves) {
    const values = leaf.values || [];
    for (let c = 0; c < leaf.columns; c++) {
      for (let r = 0; r < leaf.rows; r++) {
        const v = values[c * leaf.rows + r];
        if (v === undefined) continue;
        const at = (leaf.offset + c * leaf.column_stride + r * 4) / 4;
        if (leaf.kind === 'float') f[at] = v; else i[at] = v;
      }
    }
  }
  return new Uint8Array(bytes);
}

function vplGlEnum(gl, name) {
  switch (name) {
    case 'repeat': return gl.REPEAT;
    case 'clamp_to_edge': return gl.CLAMP_TO_EDGE;
    case 'nearest': return gl.NEAREST;
    case 'linear': return gl.LINEAR;
    case 'nearest_mipmap_nearest': return gl.NEAREST_MIPMAP_NEAREST;
    default: throw new Error('webgl-scene: unknown sampler state ' + name);
  }
}

// The linked program of `scene`'s two shaders on `gl`: the canvas keeps the
// last one, so a scene with the same shader sources (an edit that changed
// only uniform values, textures or nothing the shaders spell) is drawn
// without compiling and linking again. Returns [program, reused].
function vplProgram(canvas, gl, scene) {
  const cached = canvas.vplProgramCache;
  if (cached && cached.gl === gl && cached.vertex === scene.vertex && cached.fragment === scene.fragment) {
    return [cached.program, true];
  }
  if (cached) {
    if (cached.gl === gl) gl.deleteProgram(cached.program);
    canvas.vplProgramCache = null;
  }
  const program = gl.createProgram();
  const shaders = [];
  try {
    const vs = vplShader(gl, gl.VERTEX_SHADER, scene.vertex, 'vertex');
    shaders.push(vs);
    const fs = vplShader(gl, gl.FRAGMENT_SHADER, scene.fragment, 'fragment');
    shaders.push(fs);
    gl.attachShader(program, vs);
    gl.attachShader(program, fs);
    gl.linkProgram(program);
    if (!gl.getProgramParameter(program, gl.LINK_STATUS)) {
      throw new Error('webgl-link: the program does not link: ' + gl.getProgramInfoLog(program));
    }
  } catch (e) {
    shaders.forEach((sh) => gl.deleteShader(sh));
    gl.deleteProgram(program);
    throw e;
  }
  // A linked program keeps its code; the shader objects can go.
  shaders.forEach((sh) => { gl.detachShader(program, sh); gl.deleteShader(sh); });
  canvas.vplProgramCache = { gl, vertex: scene.vertex, fragment: scene.fragment, program };
  return [program, false];
}

// The RGBA8 framebuffer of `canvas` for draws of `width`×`height` with the
// primary output at `location`: kept on the canvas between draws and made
// again only when one of the three changes. Returns `{fbo, attachment}`,
// bound as the framebuffer.
function vplTarget(canvas, gl, width, height, location) {
  const kept = canvas.vplTarget;
  if (kept && kept.gl === gl && kept.width === width && kept.height === height &&
      kept.location === location) {
    gl.bindFramebuffer(gl.FRAMEBUFFER, kept.fbo);
    return kept;
  }
  if (kept && kept.gl === gl) {
    gl.deleteFramebuffer(kept.fbo);
    gl.deleteRenderbuffer(kept.rbo);
  }
  canvas.vplTarget = null;
  // WebGL 2 requires draw buffer i to be COLOR_ATTACHMENTi: attach at the
  // primary output's location.
  const max = gl.getParameter(gl.MAX_DRAW_BUFFERS);
  if (location >= max) {
    throw new Error('webgl-draw: primary output location ' + location +
      ' is beyond the ' + max + ' draw buffers of this context');
  }
  const fbo = gl.createFramebuffer();
  const rbo = gl.createRenderbuffer();
  gl.bindRenderbuffer(gl.RENDERBUFFER, rbo);
  gl.renderbufferStorage(gl.RENDERBUFFER, gl.RGBA8, width, height);
  gl.bindFramebuffer(gl.FRAMEBUFFER, fbo);
  const attachment = gl.COLOR_ATTACHMENT0 + location;
  gl.framebufferRenderbuffer(gl.FRAMEBUFFER, attachment, gl.RENDERBUFFER, rbo);
  const buffers = [];
  for (let l = 0; l < location; l++) buffers.push(gl.NONE);
  buffers.push(attachment);
  gl.drawBuffers(buffers);
  gl.readBuffer(attachment);
  const status = gl.checkFramebufferStatus(gl.FRAMEBUFFER);
  if (status !== gl.FRAMEBUFFER_COMPLETE) {
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.deleteFramebuffer(fbo);
    gl.deleteRenderbuffer(rbo);
    throw new Error('webgl-draw: framebuffer incomplete: 0x' + status.toString(16));
  }
  canvas.vplTarget = { gl, width, height, location, fbo, rbo, attachment };
  return canvas.vplTarget;
}

// Renders `scene` on the WebGL 2 context of `canvas` (created with
// preserveDrawingBuffer so the canvas also shows the result). When
// `timing` is an object, it receives the milliseconds of the phases:
// `link` (shader compile and link; 0 when the canvas's program is reused,
// `reused` true), `draw` (state, uploads, draw and readback) and `image`
// (flipping the rows; the base64 `rgba` is made when first read).
// `scale` (an integer ≥ 1, default 1) draws a draft: the framebuffer is the
// scene's size divided by it (rounded up), the canvas shows it scaled up to
// the scene's size, and the image returned has the draft's size.
function vplRender(canvas, scene, timing, scale) {
  const t0 = performance.now();
  if (canvas.width !== scene.width) canvas.width = scene.width;
  if (canvas.height !== scene.height) canvas.height = scene.height;
  const divisor = Number.isInteger(scale) && scale > 1 ? scale : 1;
  const width = Math.max(1, Math.ceil(scene.width / divisor));
  const height = Math.max(1, Math.ceil(scene.height / divisor));
  const gl = canvas.getContext('webgl2', {
    preserveDrawingBuffer: true, antialias: false, premultipliedAlpha: false, alpha: true,
  });
  if (!gl) throw new Error('webgl-unavailable: this browser has no WebGL 2 context');
  const made = { buffers: [], textures: [] };
  const [program, reused] = vplProgram(canvas, gl, scene);
  const t1 = performance.now();
  try {
    // Draw into an RGBA8 renderbuffer, as the native drivers do; the
    // canvas keeps it for the next draw of the same size and location.
    const { fbo, attachment } = vplTarget(canvas, gl, width, height, scene.output_location);
    gl.viewport(0, 0, width, height);
    gl.disable(gl.DEPTH_TEST);
    gl.disable(gl.BLEND);
    gl.disable(gl.CULL_FACE);
    gl.clearColor(scene.clear[0], scene.clear[1], scene.clear[2], scene.clear[3]);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.useProgram(program);

    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    for (const a of scene.attributes) {
      if (a.constant) {
        gl.disableVertexAttribArray(a.location);
        gl.vertexAttrib4f(a.location, a.constant[0], a.constant[1], a.constant[2], a.constant[3]);
        continue;
      }
      const data = new Float32Array(16);
      a.per_vertex.forEach((v, k) => data.set(v, k * 4));
      const b = gl.createBuffer();
      made.buffers.push(b);
      gl.bindBuffer(gl.ARRAY_BUFFER, b);
      gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
      gl.enableVertexAttribArray(a.location);
      gl.vertexAttribPointer(a.location, 4, gl.FLOAT, false, 16, 0);
    }

    for (const block of scene.blocks) {
      const index = gl.getUniformBlockIndex(program, block.name);
      if (index === gl.INVALID_INDEX) continue; // optimized away by the driver
      gl.uniformBlockBinding(program, index, block.binding);
      const image = vplBlockImage(block);
      const driverSize = gl.getActiveUniformBlockParameter(program, index, gl.UNIFORM_BLOCK_DATA_SIZE);
      let data = image;
      if (driverSize > image.length) {
        data = new Uint8Array(driverSize);
        data.set(image);
      }
      const b = gl.createBuffer();
      made.buffers.push(b);
      gl.bindBuffer(gl.UNIFORM_BUFFER, b);
      gl.bufferData(gl.UNIFORM_BUFFER, data, gl.STATIC_DRAW);
      gl.bindBufferBase(gl.UNIFORM_BUFFER, block.binding, b);
    }

    for (const s of scene.samplers) {
      const location = gl.getUniformLocation(program, s.name);
      const t = s.texture;
      const texture = gl.createTexture();
      made.textures.push(texture);
      gl.activeTexture(gl.TEXTURE0 + s.unit);
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
      t.levels.forEach((level, n) => {
        const w = Math.max(1, t.width >> n);
        const h = Math.max(1, t.height >> n);
        gl.texImage2D(gl.TEXTURE_2D, n, gl.RGBA8, w, h, 0, gl.RGBA, gl.UNSIGNED_BYTE,
          vplDecodeBase64(level));
      });
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_BASE_LEVEL, 0);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAX_LEVEL, Math.max(0, t.levels.length - 1));
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, vplGlEnum(gl, t.wrap));
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, vplGlEnum(gl, t.wrap));
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, vplGlEnum(gl, t.min_filter));
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, vplGlEnum(gl, t.mag_filter));
      if (location !== null) gl.uniform1i(location, s.unit);
    }

    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    const pixels = new Uint8Array(width * height * 4);
    gl.pixelStorei(gl.PACK_ALIGNMENT, 1);
    gl.readPixels(0, 0, width, height, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    const error = gl.getError();
    // Show the result on the canvas itself too (a draft scaled up).
    gl.bindFramebuffer(gl.READ_FRAMEBUFFER, fbo);
    gl.bindFramebuffer(gl.DRAW_FRAMEBUFFER, null);
    gl.blitFramebuffer(0, 0, width, height, 0, 0, scene.width, scene.height,
      gl.COLOR_BUFFER_BIT, divisor === 1 ? gl.NEAREST : gl.LINEAR);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.deleteVertexArray(vao);
    if (error !== gl.NO_ERROR) throw new Error('webgl-draw: GL error 0x' + error.toString(16));
    const t2 = performance.now();
    // GL rows are bottom-up; images are top-down.
    const row = width * 4;
    const flipped = new Uint8Array(pixels.length);
    for (let y = 0; y < height; y++) {
      flipped.set(pixels.subarray((height - 1 - y) * row, (height - y) * row), y * row);
    }
    // The base64 text (what the tests read) is made on first access, so a
    // preview nobody reads does not pay for it.
    let rgba = null;
    const image = { width, height };
    // The rows themselves, for scripts (not serialized: not enumerable).
    Object.defineProperty(image, 'pixels', { value: flipped, enumerable: false });
    Object.defineProperty(image, 'rgba', {
      enumerable: true,
      get() {
        if (rgba === null) rgba = vplEncodeBase64(flipped);
        return rgba;
      },
    });
    if (timing) {
      timing.link = t1 - t0;
      timing.reused = reused;
      timing.draw = t2 - t1;
      timing.image = performance.now() - t2;
    }
    return image;
  } finally {
    gl.useProgram(null);
    made.buffers.forEach((b) => gl.deleteBuffer(b));
    made.textures.forEach((t) => gl.deleteTexture(t));
  }
}
