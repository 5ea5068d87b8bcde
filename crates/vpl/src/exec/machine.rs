//! The interpreter: four invocations at a time (the lanes of a 2×2
//! fragment quad, or the quad's four vertices) on a stack of four-wide
//! words (word `i` of every lane side by side), reused across quads (no
//! allocation once it has grown to the deepest frame chain).
//!
//! The lanes start in lock step: one dispatch per operation computes all
//! four lanes, and a texture call is served at once for the whole quad
//! (the caller's `serve`, which alone knows the sampling state). When a
//! branch's condition differs between lanes the run stops with
//! [`Event::Diverged`]; each lane then gets its own copy of the frame
//! chain and runs alone on its column of the stack ([`One`]), stopping
//! at three events: the entry function returned, the invocation
//! discarded, or a texture sample is needed (the caller pairs the lanes'
//! n-th samples for the implicit derivatives, writes the results and
//! resumes). Both modes are one interpreter, instantiated for [`All`]
//! and [`One`] lanes.

use super::program::{Access, Arith, Compare, CompiledStage, Kind, Op, Part, Space};

/// Invocations a machine runs.
pub(crate) const LANES: usize = 4;

/// One word of each lane.
pub(crate) type Word4 = [u32; LANES];

/// Why [`Machine::run`] stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Event {
    /// The entry function returned normally (in lock step: every lane).
    Done,
    /// The invocation discarded (in lock step: every lane).
    Discarded,
    /// The invocation ran [`STEP_LIMIT`] operations without finishing.
    StepLimit,
    /// Lock step only: a branch went different ways in different lanes;
    /// each lane continues alone ([`One`]).
    Diverged,
    /// One lane only: a texture sample is needed: write the vec4 result
    /// at stack word `dst` ([`Machine::write_sample`]) and run again.
    Texture {
        dst: u32,
        sampler: u32,
        u: f32,
        v: f32,
    },
}

/// The most operations one invocation may run (VPL does not reject
/// infinite loops; a GPU would hang or time out, the executor reports).
pub const STEP_LIMIT: u64 = 1 << 26;

/// Which lanes a run computes.
pub(crate) trait Lanes: Copy {
    /// Whether all four lanes run in lock step.
    const LOCKSTEP: bool;
    /// The lanes computed.
    fn range(self) -> std::ops::Range<usize>;
    /// Whose frame chain and step count the run uses.
    fn owner(self) -> usize;
}

/// All four lanes in lock step (lane 0's frame chain is everyone's).
#[derive(Debug, Clone, Copy)]
pub(crate) struct All;

impl Lanes for All {
    const LOCKSTEP: bool = true;
    #[inline(always)]
    fn range(self) -> std::ops::Range<usize> {
        0..LANES
    }
    #[inline(always)]
    fn owner(self) -> usize {
        0
    }
}

/// One lane alone (after divergence).
#[derive(Debug, Clone, Copy)]
pub(crate) struct One(pub usize);

impl Lanes for One {
    const LOCKSTEP: bool = false;
    #[inline(always)]
    fn range(self) -> std::ops::Range<usize> {
        self.0..self.0 + 1
    }
    #[inline(always)]
    fn owner(self) -> usize {
        self.0
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    function: u32,
    pc: u32,
    base: u32,
    /// First stack word after the frame (where a callee's frame starts).
    top: u32,
    /// Caller-frame destination (absolute stack word) and length.
    result: Option<(u32, u32)>,
}

/// The state of four invocations.
#[derive(Debug, Default)]
pub(crate) struct Machine {
    stack: Vec<Word4>,
    /// Each lane's frame chain; in lock step lane 0's is every lane's.
    frames: [Vec<Frame>; LANES],
    scratch: Vec<u32>,
    steps: [u64; LANES],
    /// The invocations' stage interface words.
    pub io: Vec<Word4>,
}

fn f(word: u32) -> f32 {
    f32::from_bits(word)
}

/// The word offset `access` selects in lane `lane` (dynamic indices are
/// read from that lane's column).
fn resolve(access: &Access, base: u32, stack: &[Word4], lane: usize) -> usize {
    let mut offset = access.offset as usize;
    if access.space == Space::Frame {
        offset += base as usize;
    }
    for d in access.dynamic.iter() {
        let raw = stack[(base + d.index) as usize][lane] as i32;
        // Out-of-range dynamic indices are undefined (section 6.1); the
        // executor clamps them so it never reads outside the storage.
        let index = raw.clamp(0, d.count.saturating_sub(1) as i32) as usize;
        offset += index * d.stride as usize;
    }
    offset
}

/// Copies `len` four-wide words from `src` to `dst` in `words`, as
/// `copy_within` would (overlap allowed), without a `memmove` call for
/// the few words an operation moves.
#[inline(always)]
fn copy_words(words: &mut [Word4], src: usize, dst: usize, len: usize) {
    if dst <= src {
        for i in 0..len {
            words[dst + i] = words[src + i];
        }
    } else {
        for i in (0..len).rev() {
            words[dst + i] = words[src + i];
        }
    }
}

/// Copies `len` words of lane `lane` from `src` to `dst` in `words`,
/// as `copy_within` would (overlap allowed).
fn copy_lane(words: &mut [Word4], src: usize, dst: usize, len: usize, lane: usize) {
    if dst <= src {
        for i in 0..len {
            words[dst + i][lane] = words[src + i][lane];
        }
    } else {
        for i in (0..len).rev() {
            words[dst + i][lane] = words[src + i][lane];
        }
    }
}

impl Machine {
    /// Starts four invocations of `stage`'s entry, in lock step, with
    /// zeroed IO words.
    pub(crate) fn start(&mut self, stage: &CompiledStage) {
        for frames in &mut self.frames {
            frames.clear();
        }
        self.steps = [0; LANES];
        self.io.clear();
        self.io.resize(stage.io_words as usize, [0; LANES]);
        self.push_frame(All, stage, stage.entry, None);
    }

    /// Pushes a frame of `function` for `lanes`: registers zeroed,
    /// constants copied in.
    fn push_frame<'s, L: Lanes>(
        &mut self,
        lanes: L,
        stage: &'s CompiledStage,
        function: u32,
        result: Option<(u32, u32)>,
    ) -> (u32, &'s [Op]) {
        let f = &stage.functions[function as usize];
        let frames = &mut self.frames[lanes.owner()];
        let base = frames.last().map_or(0, |frame| frame.top) as usize;
        let top = base + f.frame_words as usize;
        if self.stack.len() < top {
            self.stack.resize(top, [0; LANES]);
        }
        let words = &mut self.stack[base..top];
        if L::LOCKSTEP {
            words.fill([0; LANES]);
            for (word, c) in words.iter_mut().zip(&f.constants) {
                *word = [*c; LANES];
            }
        } else {
            let lane = lanes.owner();
            for word in words.iter_mut() {
                word[lane] = 0;
            }
            for (word, c) in words.iter_mut().zip(&f.constants) {
                word[lane] = *c;
            }
        }
        frames.push(Frame {
            function,
            pc: 0,
            base: base as u32,
            top: top as u32,
            result,
        });
        (base as u32, &f.ops)
    }

    /// Writes lane `lane`'s texture result at `dst` (from [`Event::Texture`]).
    pub(crate) fn write_sample(&mut self, lane: usize, dst: u32, rgba: [f32; 4]) {
        for (i, c) in rgba.iter().enumerate() {
            self.stack[dst as usize + i][lane] = c.to_bits();
        }
    }

    /// Runs `lanes` until the next event. The current frame's
    /// operations, program counter and base live in locals; they are
    /// written back to the frame only when it stops running (call,
    /// return, event). In lock step a texture call is answered by
    /// `serve` (the four lanes' sampler words and coordinates; the four
    /// RGBA results).
    pub(crate) fn run<L: Lanes, S>(
        &mut self,
        lanes: L,
        stage: &CompiledStage,
        uniforms: &[u32],
        serve: &mut S,
    ) -> Event
    where
        S: FnMut(&Word4, &[[f32; 2]; LANES]) -> [[f32; 4]; LANES],
    {
        let owner = lanes.owner();
        let Some(&frame) = self.frames[owner].last() else {
            return Event::Done;
        };
        let mut ops: &[Op] = &stage.functions[frame.function as usize].ops;
        let mut pc = frame.pc as usize;
        let mut base = frame.base;
        let mut steps = self.steps[owner];
        let event = loop {
            steps += 1;
            if steps > STEP_LIMIT {
                break Event::StepLimit;
            }
            let op = &ops[pc];
            pc += 1;
            let b = base as usize;
            let stack = &mut self.stack;
            match op {
                Op::Copy { dst, src, len } => {
                    let (d, s) = (b + *dst as usize, b + *src as usize);
                    if L::LOCKSTEP {
                        copy_words(stack, s, d, *len as usize);
                    } else {
                        copy_lane(stack, s, d, *len as usize, owner);
                    }
                }
                Op::Load { dst, from } => {
                    let d = b + *dst as usize;
                    let n = from.len as usize;
                    if L::LOCKSTEP && from.dynamic.is_empty() {
                        let at = resolve(from, base, stack, 0);
                        match from.space {
                            Space::Frame => copy_words(stack, at, d, n),
                            Space::Uniform => {
                                for (word, u) in stack[d..d + n].iter_mut().zip(&uniforms[at..]) {
                                    *word = [*u; LANES];
                                }
                            }
                            Space::Io => {
                                for (word, io) in stack[d..d + n].iter_mut().zip(&self.io[at..]) {
                                    *word = *io;
                                }
                            }
                        }
                    } else {
                        for l in lanes.range() {
                            let at = resolve(from, base, stack, l);
                            match from.space {
                                Space::Frame => copy_lane(stack, at, d, n, l),
                                Space::Uniform => {
                                    for i in 0..n {
                                        stack[d + i][l] = uniforms[at + i];
                                    }
                                }
                                Space::Io => {
                                    for i in 0..n {
                                        stack[d + i][l] = self.io[at + i][l];
                                    }
                                }
                            }
                        }
                    }
                }
                Op::Store { to, src } => {
                    let s = b + *src as usize;
                    let n = to.len as usize;
                    if L::LOCKSTEP && to.dynamic.is_empty() {
                        let at = resolve(to, base, stack, 0);
                        match to.space {
                            Space::Frame => copy_words(stack, s, at, n),
                            Space::Io => {
                                for (io, word) in self.io[at..at + n].iter_mut().zip(&stack[s..]) {
                                    *io = *word;
                                }
                            }
                            // The verifier rejects uniform stores.
                            Space::Uniform => {}
                        }
                    } else {
                        for l in lanes.range() {
                            let at = resolve(to, base, stack, l);
                            match to.space {
                                Space::Frame => copy_lane(stack, s, at, n, l),
                                Space::Io => {
                                    for i in 0..n {
                                        self.io[at + i][l] = stack[s + i][l];
                                    }
                                }
                                Space::Uniform => {}
                            }
                        }
                    }
                }
                Op::Arith {
                    op,
                    kind,
                    dst,
                    a,
                    b: rhs,
                    len,
                    a_step,
                    b_step,
                } => {
                    let (d, a, r) = (b + *dst as usize, b + *a as usize, b + *rhs as usize);
                    for i in 0..*len as usize {
                        let x = stack[a + i * *a_step as usize];
                        let y = stack[r + i * *b_step as usize];
                        let out = &mut stack[d + i];
                        arith_lanes(*op, *kind, &x, &y, out, lanes.range());
                    }
                }
                Op::Compare {
                    op,
                    kind,
                    dst,
                    a,
                    b: rhs,
                } => {
                    let x = stack[b + *a as usize];
                    let y = stack[b + *rhs as usize];
                    let out = &mut stack[b + *dst as usize];
                    for l in lanes.range() {
                        out[l] = u32::from(compare(*op, *kind, x[l], y[l]));
                    }
                }
                Op::MatMul {
                    dst,
                    a,
                    b: rhs,
                    rows,
                    inner,
                    columns,
                } => {
                    let (a, r, d) = (b + *a as usize, b + *rhs as usize, b + *dst as usize);
                    let (rows, inner, columns) =
                        (*rows as usize, *inner as usize, *columns as usize);
                    for l in lanes.range() {
                        self.scratch.clear();
                        for c in 0..columns {
                            for row in 0..rows {
                                let mut sum = 0.0f32;
                                for k in 0..inner {
                                    sum += f(stack[a + k * rows + row][l])
                                        * f(stack[r + c * inner + k][l]);
                                }
                                self.scratch.push(sum.to_bits());
                            }
                        }
                        for (i, word) in self.scratch.iter().enumerate() {
                            stack[d + i][l] = *word;
                        }
                    }
                }
                Op::Construct { dst, len, parts } => {
                    let d = b + *dst as usize;
                    for l in lanes.range() {
                        self.scratch.clear();
                        for part in parts.iter() {
                            match *part {
                                Part::Words { src, len } => {
                                    let s = b + src as usize;
                                    self.scratch.extend(
                                        stack[s..s + len as usize].iter().map(|word| word[l]),
                                    );
                                }
                                Part::IntToFloat { src } => {
                                    let v = stack[b + src as usize][l] as i32;
                                    self.scratch.push((v as f32).to_bits());
                                }
                                Part::Fill {
                                    src,
                                    count,
                                    convert,
                                } => {
                                    let v = scalar(stack[b + src as usize][l], convert);
                                    self.scratch.extend(std::iter::repeat_n(v, count as usize));
                                }
                                Part::Diagonal {
                                    src,
                                    rows,
                                    columns,
                                    convert,
                                } => {
                                    let v = scalar(stack[b + src as usize][l], convert);
                                    for c in 0..columns {
                                        for r in 0..rows {
                                            self.scratch.push(if r == c { v } else { 0 });
                                        }
                                    }
                                }
                            }
                        }
                        let n = (*len as usize).min(self.scratch.len());
                        for (i, word) in self.scratch[..n].iter().enumerate() {
                            stack[d + i][l] = *word;
                        }
                    }
                }
                Op::Swizzle {
                    dst,
                    src,
                    pattern,
                    len,
                } => {
                    let s = b + *src as usize;
                    let mut out = [[0u32; LANES]; 4];
                    for (o, p) in out.iter_mut().zip(pattern).take(*len as usize) {
                        *o = stack[s + *p as usize];
                    }
                    let d = b + *dst as usize;
                    let n = *len as usize;
                    if L::LOCKSTEP {
                        stack[d..d + n].copy_from_slice(&out[..n]);
                    } else {
                        for (i, word) in out[..n].iter().enumerate() {
                            stack[d + i][owner] = word[owner];
                        }
                    }
                }
                Op::Call {
                    function: callee,
                    arguments,
                    result,
                } => {
                    let result = result.map(|(dst, len)| (base + dst, len));
                    let caller_base = b;
                    if let Some(frame) = self.frames[owner].last_mut() {
                        frame.pc = pc as u32;
                    }
                    let (callee_base, callee_ops) = self.push_frame(lanes, stage, *callee, result);
                    let parameters = &stage.functions[*callee as usize].parameters;
                    for &(src, slot, len) in arguments.iter() {
                        let s = caller_base + src as usize;
                        let d = callee_base as usize + parameters[slot as usize] as usize;
                        if L::LOCKSTEP {
                            copy_words(&mut self.stack, s, d, len as usize);
                        } else {
                            copy_lane(&mut self.stack, s, d, len as usize, owner);
                        }
                    }
                    ops = callee_ops;
                    pc = 0;
                    base = callee_base;
                }
                Op::Texture {
                    dst,
                    sampler,
                    coordinate,
                } => {
                    let c = b + *coordinate as usize;
                    if L::LOCKSTEP {
                        let (u, v) = (stack[c], stack[c + 1]);
                        let mut coordinates = [[0.0f32; 2]; LANES];
                        for (l, uv) in coordinates.iter_mut().enumerate() {
                            *uv = [f(u[l]), f(v[l])];
                        }
                        let samplers = stack[b + *sampler as usize];
                        let rgba = serve(&samplers, &coordinates);
                        let d = b + *dst as usize;
                        for (i, word) in stack[d..d + 4].iter_mut().enumerate() {
                            for (l, lane) in word.iter_mut().enumerate() {
                                *lane = rgba[l][i].to_bits();
                            }
                        }
                    } else {
                        break Event::Texture {
                            dst: base + dst,
                            sampler: stack[b + *sampler as usize][owner],
                            u: f(stack[c][owner]),
                            v: f(stack[c + 1][owner]),
                        };
                    }
                }
                Op::Jump { target } => pc = *target as usize,
                Op::JumpIf {
                    condition,
                    if_true,
                    if_false,
                } => {
                    let word = stack[b + *condition as usize];
                    let taken = word[owner] != 0;
                    if L::LOCKSTEP && word.iter().any(|w| (*w != 0) != taken) {
                        // Each lane continues alone with its own copy of
                        // the frame chain, at its own target.
                        let (shared, rest) = self.frames.split_at_mut(1);
                        for (l, frames) in rest.iter_mut().enumerate() {
                            frames.clear();
                            frames.extend_from_slice(&shared[0]);
                            if let Some(frame) = frames.last_mut() {
                                let lane_taken = word[l + 1] != 0;
                                frame.pc = if lane_taken { *if_true } else { *if_false };
                            }
                        }
                        if let Some(frame) = shared[0].last_mut() {
                            frame.pc = if taken { *if_true } else { *if_false };
                        }
                        self.steps = [steps; LANES];
                        return Event::Diverged;
                    }
                    pc = if taken { *if_true } else { *if_false } as usize;
                }
                Op::Return { value } => {
                    let frames = &mut self.frames[owner];
                    let Some(done) = frames.pop() else {
                        break Event::Done;
                    };
                    if let (Some((src, len)), Some((dst, _))) = (value, done.result) {
                        let s = b + *src as usize;
                        if L::LOCKSTEP {
                            copy_words(stack, s, dst as usize, *len as usize);
                        } else {
                            copy_lane(stack, s, dst as usize, *len as usize, owner);
                        }
                    }
                    let Some(&caller) = frames.last() else {
                        self.steps[owner] = steps;
                        return Event::Done;
                    };
                    ops = &stage.functions[caller.function as usize].ops;
                    pc = caller.pc as usize;
                    base = caller.base;
                }
                Op::Discard => {
                    self.frames[owner].clear();
                    self.steps[owner] = steps;
                    return Event::Discarded;
                }
            }
        };
        // Stopped inside the running frame: keep where to resume.
        if let Some(frame) = self.frames[owner].last_mut() {
            frame.pc = pc as u32;
        }
        self.steps[owner] = steps;
        event
    }
}

fn scalar(word: u32, convert: bool) -> u32 {
    if convert {
        (word as i32 as f32).to_bits()
    } else {
        word
    }
}

/// One arithmetic operation on the words of `lanes` (the operator chosen
/// once for all of them).
#[inline(always)]
fn arith_lanes(
    op: Arith,
    kind: Kind,
    x: &Word4,
    y: &Word4,
    out: &mut Word4,
    lanes: std::ops::Range<usize>,
) {
    macro_rules! each {
        ($e:expr) => {
            for l in lanes {
                out[l] = $e(x[l], y[l]);
            }
        };
    }
    match (kind, op) {
        (Kind::Float, Arith::Add) => each!(|x, y| (f(x) + f(y)).to_bits()),
        (Kind::Float, Arith::Subtract) => each!(|x, y| (f(x) - f(y)).to_bits()),
        (Kind::Float, Arith::Multiply) => each!(|x, y| (f(x) * f(y)).to_bits()),
        (Kind::Float, Arith::Divide) => each!(|x, y| (f(x) / f(y)).to_bits()),
        _ => each!(|x, y| arith(op, kind, x, y)),
    }
}

/// One arithmetic operation on two words (section 4.1).
pub(crate) fn arith(op: Arith, kind: Kind, x: u32, y: u32) -> u32 {
    match kind {
        Kind::Float => {
            let (x, y) = (f(x), f(y));
            let r = match op {
                Arith::Add => x + y,
                Arith::Subtract => x - y,
                Arith::Multiply => x * y,
                Arith::Divide => x / y,
            };
            r.to_bits()
        }
        _ => {
            let (x, y) = (x as i32, y as i32);
            let r = match op {
                Arith::Add => x.wrapping_add(y),
                Arith::Subtract => x.wrapping_sub(y),
                Arith::Multiply => x.wrapping_mul(y),
                // Division by zero is undefined (4.1): the executor answers
                // -1 (all bits set, as unsigned hardware division does);
                // MIN / -1 wraps to MIN.
                Arith::Divide => {
                    if y == 0 {
                        -1
                    } else {
                        x.wrapping_div(y)
                    }
                }
            };
            r as u32
        }
    }
}

/// One scalar comparison (section 7.1).
pub(crate) fn compare(op: Compare, kind: Kind, x: u32, y: u32) -> bool {
    match kind {
        Kind::Float => {
            let (x, y) = (f(x), f(y));
            match op {
                Compare::Equal => x == y,
                Compare::NotEqual => x != y,
                Compare::Less => x < y,
                Compare::LessEqual => x <= y,
                Compare::Greater => x > y,
                Compare::GreaterEqual => x >= y,
            }
        }
        Kind::Int => {
            let (x, y) = (x as i32, y as i32);
            match op {
                Compare::Equal => x == y,
                Compare::NotEqual => x != y,
                Compare::Less => x < y,
                Compare::LessEqual => x <= y,
                Compare::Greater => x > y,
                Compare::GreaterEqual => x >= y,
            }
        }
        Kind::Bool => match op {
            Compare::Equal => x == y,
            _ => x != y,
        },
    }
}
