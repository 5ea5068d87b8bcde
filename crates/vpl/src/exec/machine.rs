//! The interpreter: one invocation of a compiled stage at a time, on a
//! word stack that is reused across invocations (no allocation once it
//! has grown to the deepest frame chain).
//!
//! Running stops at three events: the entry function returned, the
//! invocation discarded, or a texture sample is needed. The caller
//! samples (it alone knows the other lanes of a fragment quad, which the
//! implicit derivatives need), writes the result and resumes.

use super::program::{Access, Arith, Compare, CompiledStage, Kind, Op, Part, Space};

/// Why [`Machine::run`] stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Event {
    /// The entry function returned normally.
    Done,
    /// The invocation discarded.
    Discarded,
    /// The invocation ran [`STEP_LIMIT`] operations without finishing.
    StepLimit,
    /// A texture sample is needed: write the vec4 result at stack word
    /// `dst` ([`Machine::write_sample`]) and run again.
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

#[derive(Debug, Clone, Copy)]
struct Frame {
    function: u32,
    pc: u32,
    base: u32,
    /// Caller-frame destination (absolute stack word) and length.
    result: Option<(u32, u32)>,
}

/// The state of one invocation.
#[derive(Debug, Default)]
pub(crate) struct Machine {
    stack: Vec<u32>,
    frames: Vec<Frame>,
    scratch: Vec<u32>,
    steps: u64,
    /// The invocation's stage interface words.
    pub io: Vec<u32>,
}

fn f(word: u32) -> f32 {
    f32::from_bits(word)
}

fn resolve(access: &Access, base: u32, stack: &[u32]) -> usize {
    let mut offset = access.offset as usize;
    if access.space == Space::Frame {
        offset += base as usize;
    }
    for d in access.dynamic.iter() {
        let raw = stack[(base + d.index) as usize] as i32;
        // Out-of-range dynamic indices are undefined (section 6.1); the
        // executor clamps them so it never reads outside the storage.
        let index = raw.clamp(0, d.count.saturating_sub(1) as i32) as usize;
        offset += index * d.stride as usize;
    }
    offset
}

impl Machine {
    /// Starts an invocation of `stage`'s entry with zeroed IO words.
    pub(crate) fn start(&mut self, stage: &CompiledStage) {
        self.stack.clear();
        self.frames.clear();
        self.steps = 0;
        self.io.clear();
        self.io.resize(stage.io_words as usize, 0);
        self.push_frame(stage, stage.entry, None);
    }

    fn push_frame(&mut self, stage: &CompiledStage, function: u32, result: Option<(u32, u32)>) {
        let f = &stage.functions[function as usize];
        let base = self.stack.len();
        self.stack.resize(base + f.frame_words as usize, 0);
        self.stack[base..base + f.constants.len()].copy_from_slice(&f.constants);
        self.frames.push(Frame {
            function,
            pc: 0,
            base: base as u32,
            result,
        });
    }

    /// Writes a texture result at `dst` (from [`Event::Texture`]).
    pub(crate) fn write_sample(&mut self, dst: u32, rgba: [f32; 4]) {
        for (i, c) in rgba.iter().enumerate() {
            self.stack[dst as usize + i] = c.to_bits();
        }
    }

    /// Stores the running function's program counter in its frame.
    fn save_pc(&mut self, pc: usize) {
        if let Some(frame) = self.frames.last_mut() {
            frame.pc = pc as u32;
        }
    }

    /// Runs until the next event. The current frame's operations, program
    /// counter and base live in locals; they are written back to the
    /// frame only when it stops running (call, return, event).
    pub(crate) fn run(&mut self, stage: &CompiledStage, uniforms: &[u32]) -> Event {
        let Some(&frame) = self.frames.last() else {
            return Event::Done;
        };
        let mut ops: &[Op] = &stage.functions[frame.function as usize].ops;
        let mut pc = frame.pc as usize;
        let mut base = frame.base;
        loop {
            self.steps += 1;
            if self.steps > STEP_LIMIT {
                self.save_pc(pc);
                return Event::StepLimit;
            }
            let op = &ops[pc];
            pc += 1;
            let b = base as usize;
            match op {
                Op::Copy { dst, src, len } => {
                    let (d, s) = (b + *dst as usize, b + *src as usize);
                    self.stack.copy_within(s..s + *len as usize, d);
                }
                Op::Load { dst, from } => {
                    let at = resolve(from, base, &self.stack);
                    let d = b + *dst as usize;
                    let n = from.len as usize;
                    match from.space {
                        Space::Frame => self.stack.copy_within(at..at + n, d),
                        Space::Uniform => {
                            self.stack[d..d + n].copy_from_slice(&uniforms[at..at + n])
                        }
                        Space::Io => self.stack[d..d + n].copy_from_slice(&self.io[at..at + n]),
                    }
                }
                Op::Store { to, src } => {
                    let at = resolve(to, base, &self.stack);
                    let s = b + *src as usize;
                    let n = to.len as usize;
                    match to.space {
                        Space::Frame => self.stack.copy_within(s..s + n, at),
                        Space::Io => self.io[at..at + n].copy_from_slice(&self.stack[s..s + n]),
                        // The verifier rejects uniform stores.
                        Space::Uniform => {}
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
                        let x = self.stack[a + i * *a_step as usize];
                        let y = self.stack[r + i * *b_step as usize];
                        self.stack[d + i] = arith(*op, *kind, x, y);
                    }
                }
                Op::Compare {
                    op,
                    kind,
                    dst,
                    a,
                    b: rhs,
                } => {
                    let x = self.stack[b + *a as usize];
                    let y = self.stack[b + *rhs as usize];
                    self.stack[b + *dst as usize] = u32::from(compare(*op, *kind, x, y));
                }
                Op::MatMul {
                    dst,
                    a,
                    b: rhs,
                    rows,
                    inner,
                    columns,
                } => {
                    let (a, r) = (b + *a as usize, b + *rhs as usize);
                    let (rows, inner, columns) =
                        (*rows as usize, *inner as usize, *columns as usize);
                    self.scratch.clear();
                    for c in 0..columns {
                        for row in 0..rows {
                            let mut sum = 0.0f32;
                            for k in 0..inner {
                                sum += f(self.stack[a + k * rows + row])
                                    * f(self.stack[r + c * inner + k]);
                            }
                            self.scratch.push(sum.to_bits());
                        }
                    }
                    let d = b + *dst as usize;
                    self.stack[d..d + self.scratch.len()].copy_from_slice(&self.scratch);
                }
                Op::Construct { dst, len, parts } => {
                    self.scratch.clear();
                    for part in parts.iter() {
                        match *part {
                            Part::Words { src, len } => {
                                let s = b + src as usize;
                                self.scratch
                                    .extend_from_slice(&self.stack[s..s + len as usize]);
                            }
                            Part::IntToFloat { src } => {
                                let v = self.stack[b + src as usize] as i32;
                                self.scratch.push((v as f32).to_bits());
                            }
                            Part::Fill {
                                src,
                                count,
                                convert,
                            } => {
                                let v = scalar(self.stack[b + src as usize], convert);
                                self.scratch.extend(std::iter::repeat_n(v, count as usize));
                            }
                            Part::Diagonal {
                                src,
                                rows,
                                columns,
                                convert,
                            } => {
                                let v = scalar(self.stack[b + src as usize], convert);
                                for c in 0..columns {
                                    for r in 0..rows {
                                        self.scratch.push(if r == c { v } else { 0 });
                                    }
                                }
                            }
                        }
                    }
                    let d = b + *dst as usize;
                    let n = (*len as usize).min(self.scratch.len());
                    self.stack[d..d + n].copy_from_slice(&self.scratch[..n]);
                }
                Op::Swizzle {
                    dst,
                    src,
                    pattern,
                    len,
                } => {
                    let s = b + *src as usize;
                    let mut out = [0u32; 4];
                    for (o, p) in out.iter_mut().zip(pattern).take(*len as usize) {
                        *o = self.stack[s + *p as usize];
                    }
                    let d = b + *dst as usize;
                    self.stack[d..d + *len as usize].copy_from_slice(&out[..*len as usize]);
                }
                Op::Call {
                    function: callee,
                    arguments,
                    result,
                } => {
                    let result = result.map(|(dst, len)| (base + dst, len));
                    let caller_base = b;
                    self.save_pc(pc);
                    self.push_frame(stage, *callee, result);
                    let callee_function = &stage.functions[*callee as usize];
                    let callee_base = self.stack.len() - callee_function.frame_words as usize;
                    let parameters = &callee_function.parameters;
                    for &(src, slot, len) in arguments.iter() {
                        let s = caller_base + src as usize;
                        let d = callee_base + parameters[slot as usize] as usize;
                        self.stack.copy_within(s..s + len as usize, d);
                    }
                    ops = &callee_function.ops;
                    pc = 0;
                    base = callee_base as u32;
                }
                Op::Texture {
                    dst,
                    sampler,
                    coordinate,
                } => {
                    let c = b + *coordinate as usize;
                    self.save_pc(pc);
                    return Event::Texture {
                        dst: base + dst,
                        sampler: self.stack[b + *sampler as usize],
                        u: f(self.stack[c]),
                        v: f(self.stack[c + 1]),
                    };
                }
                Op::Jump { target } => pc = *target as usize,
                Op::JumpIf {
                    condition,
                    if_true,
                    if_false,
                } => {
                    let taken = self.stack[b + *condition as usize] != 0;
                    pc = if taken { *if_true } else { *if_false } as usize;
                }
                Op::Return { value } => {
                    let Some(done) = self.frames.pop() else {
                        return Event::Done;
                    };
                    if let (Some((src, len)), Some((dst, _))) = (value, done.result) {
                        let s = b + *src as usize;
                        self.stack.copy_within(s..s + *len as usize, dst as usize);
                    }
                    self.stack.truncate(done.base as usize);
                    let Some(&caller) = self.frames.last() else {
                        return Event::Done;
                    };
                    ops = &stage.functions[caller.function as usize].ops;
                    pc = caller.pc as usize;
                    base = caller.base;
                }
                Op::Discard => {
                    self.frames.clear();
                    return Event::Discarded;
                }
            }
        }
    }
}

fn scalar(word: u32, convert: bool) -> u32 {
    if convert {
        (word as i32 as f32).to_bits()
    } else {
        word
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
