//! Sections 5.2, 6.2 and 6.3: definite assignment of registers and output
//! leaves, and helper summaries.
//!
//! Each reachable block's executable prefix is turned into a list of
//! events (register reads and writes, output reads and writes, calls,
//! returns). Both analyses are forward must-analyses (intersection at
//! joins, greatest fixed point over loops) solved by [`super::control::solve`];
//! the states are bitsets over the function's registers (processed in
//! groups of [`REGISTER_GROUP`] to bound memory) and leaf-range sets over
//! the stage's outputs. Checks then run once per reachable block, in list
//! order, against the fixed-point in-states, so the first violation in
//! program order is reported.

use super::context::FnCx;
use super::control::{Cfg, solve};
use super::diagnostic::{Check, Place, Rule, VerifyError, fail};
use super::outputs::{Layout, Leaves, Summary};
use crate::ir::{
    Callee, Handle, InstructionKind, Operand, Reference, SelectorKind, Span, StorageKind,
    TerminatorKind, Value,
};

/// Registers analysed together (bits per block state).
pub const REGISTER_GROUP: usize = 4096;

const NO_OPERAND: u32 = u32::MAX;
const TERMINATOR: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
enum Ev {
    /// A register read (`whole`: through a local storage reference).
    Read {
        reg: u32,
        instr: u32,
        operand: u32,
        span: Option<Span>,
        whole: bool,
    },
    /// A register assignment.
    Write { reg: u32 },
    /// An output read of the leaf ranges `pool[start..end]`.
    OutRead {
        start: u32,
        end: u32,
        instr: u32,
        span: Option<Span>,
    },
    /// An output write establishing `pool[start..end]`.
    OutWrite { start: u32, end: u32 },
    /// A call of a stage function.
    Call {
        callee: u32,
        instr: u32,
        span: Option<Span>,
    },
    /// A normal return.
    Return { span: Option<Span> },
}

fn get(bits: &[u64], i: usize) -> bool {
    bits[i / 64] & (1 << (i % 64)) != 0
}

fn set(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

/// In-states of a bitset must-analysis, stored flat (`words` per block).
struct BitStates {
    words: usize,
    bits: Vec<u64>,
    reached: Vec<bool>,
}

impl BitStates {
    /// The in-state of block `b`, if reachable.
    fn get(&self, b: usize) -> Option<&[u64]> {
        self.reached[b].then(|| &self.bits[b * self.words..(b + 1) * self.words])
    }
}

/// [`solve`] for bitsets with flat storage: no allocation per block.
fn solve_bits(cfg: &Cfg, words: usize, mut transfer: impl FnMut(usize, &mut [u64])) -> BitStates {
    let n = cfg.succ.len();
    let mut st = BitStates {
        words,
        bits: vec![0; n * words],
        reached: vec![false; n],
    };
    if cfg.rpo.is_empty() {
        return st;
    }
    st.reached[0] = true;
    let mut state = vec![0u64; words];
    loop {
        let mut again = false;
        for (pos, &b) in cfg.rpo.iter().enumerate() {
            let b = b as usize;
            if !st.reached[b] {
                continue;
            }
            state.copy_from_slice(&st.bits[b * words..(b + 1) * words]);
            transfer(b, &mut state);
            for &s in cfg.successors(b) {
                let s = s as usize;
                let target = &mut st.bits[s * words..(s + 1) * words];
                let changed = if st.reached[s] {
                    let mut changed = false;
                    for (t, v) in target.iter_mut().zip(&state) {
                        let m = *t & *v;
                        changed |= m != *t;
                        *t = m;
                    }
                    changed
                } else {
                    st.reached[s] = true;
                    target.copy_from_slice(&state);
                    true
                };
                if changed && cfg.rpo_index[s] as usize <= pos {
                    again = true;
                }
            }
        }
        if !again {
            return st;
        }
    }
}

/// The result of analysing one function.
pub(crate) struct FunctionFlow {
    pub summary: Summary,
}

struct Events {
    /// Events of all blocks; block `b`'s are `list[start[b]..start[b + 1]]`.
    list: Vec<Ev>,
    start: Vec<u32>,
    pool: Vec<(u64, u64)>,
    /// Register index of each dense number.
    names: Vec<u64>,
}

impl Events {
    fn block(&self, b: usize) -> &[Ev] {
        &self.list[self.start[b] as usize..self.start[b + 1] as usize]
    }
}

/// A located error with its program-order key (block, event).
type Keyed = ((usize, usize), VerifyError);

fn earliest(a: Option<Keyed>, b: Option<Keyed>) -> Option<Keyed> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y.0 < x.0 { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

impl FnCx<'_> {
    fn place(&self, block: usize, instr: u32) -> Place {
        Place {
            stage: self.stage.kind,
            function: self.handle,
            block: Handle::from_index(block as u32),
            instruction: if instr == TERMINATOR {
                None
            } else {
                Some(instr as usize)
            },
        }
    }

    fn events(&self, cfg: &Cfg, layout: &Layout) -> Check<Events> {
        let mut names = vec![0u64; self.regs.len()];
        for decl in self.function.declared_registers() {
            if let InstructionKind::DeclareLocal { register } = decl.kind
                && let Some((d, _)) = self.regs.get(register.index)
            {
                names[d as usize] = register.index;
            }
        }
        let mut ev = Events {
            list: Vec::new(),
            start: Vec::with_capacity(self.function.blocks.len() + 1),
            pool: Vec::new(),
            names,
        };
        // About two events an instruction (a read and a write) and one a
        // terminator, reserved at once rather than grown by copying.
        let instructions: usize = self
            .function
            .blocks
            .iter()
            .map(|(_, b)| b.instructions.len() + 1)
            .sum();
        let mut out = Vec::with_capacity(2 * instructions);
        for (bh, block) in self.function.blocks.iter() {
            let b = bh.index();
            ev.start.push(out.len() as u32);
            if !cfg.reachable(b) {
                continue;
            }
            for (i, ins) in block.instructions[..cfg.prefix[b]].iter().enumerate() {
                let instr = i as u32;
                let place = self.place(b, instr);
                let read = |out: &mut Vec<Ev>, op: &Operand, k: u32| {
                    self.operand_read(out, op, instr, k, ins.span);
                };
                let selectors = |out: &mut Vec<Ev>, r: &Reference| {
                    for s in &r.path {
                        if let SelectorKind::Index(op) = &s.kind
                            && let Value::Register(reg) = op.value
                            && let Some((d, _)) = self.regs.get(reg.index)
                        {
                            out.push(Ev::Read {
                                reg: d,
                                instr,
                                operand: NO_OPERAND,
                                span: op.span.or(s.span).or(ins.span),
                                whole: false,
                            });
                        }
                    }
                };
                let write = |out: &mut Vec<Ev>, r: crate::ir::Register| {
                    if let Some((d, _)) = self.regs.get(r.index) {
                        out.push(Ev::Write { reg: d });
                    }
                };
                match &ins.kind {
                    InstructionKind::DeclareLocal { .. } => {}
                    InstructionKind::Load { result, source } => {
                        selectors(&mut out, source);
                        self.storage_access(
                            &mut out,
                            &mut ev.pool,
                            layout,
                            source,
                            true,
                            instr,
                            ins.span,
                            place,
                        )?;
                        write(&mut out, *result);
                    }
                    InstructionKind::Store { target, value } => {
                        selectors(&mut out, target);
                        read(&mut out, value, 0);
                        self.storage_access(
                            &mut out,
                            &mut ev.pool,
                            layout,
                            target,
                            false,
                            instr,
                            ins.span,
                            place,
                        )?;
                    }
                    InstructionKind::Call {
                        result,
                        callee,
                        arguments,
                    } => {
                        for (k, a) in arguments.iter().enumerate() {
                            read(&mut out, a, k as u32);
                        }
                        if let Callee::Function(c) = callee {
                            out.push(Ev::Call {
                                callee: c.raw(),
                                instr,
                                span: ins.span,
                            });
                        }
                        if let Some(r) = result {
                            write(&mut out, *r);
                        }
                    }
                    // The commonest instruction, read without the generic
                    // operand iterator (same events in the same order).
                    InstructionKind::Binary {
                        result, lhs, rhs, ..
                    } => {
                        self.operand_read(&mut out, lhs, instr, 0, ins.span);
                        self.operand_read(&mut out, rhs, instr, 1, ins.span);
                        write(&mut out, *result);
                    }
                    other => {
                        for (k, op) in other.operands_iter().enumerate() {
                            read(&mut out, op, k as u32);
                        }
                        if let Some(r) = other.result() {
                            write(&mut out, r);
                        }
                    }
                }
            }
            if !cfg.cut[b]
                && let Some(t) = &block.terminator
            {
                let tread = |out: &mut Vec<Ev>, op: &Operand| {
                    if let Value::Register(r) = op.value
                        && let Some((d, _)) = self.regs.get(r.index)
                    {
                        out.push(Ev::Read {
                            reg: d,
                            instr: TERMINATOR,
                            operand: 0,
                            span: op.span.or(t.span),
                            whole: false,
                        });
                    }
                };
                match &t.kind {
                    TerminatorKind::BranchIf { condition, .. } => tread(&mut out, condition),
                    TerminatorKind::Return { value } => {
                        if let Some(v) = value {
                            tread(&mut out, v);
                        }
                        out.push(Ev::Return { span: t.span });
                    }
                    TerminatorKind::Branch { .. } | TerminatorKind::Discard => {}
                }
            }
        }
        ev.start.push(out.len() as u32);
        ev.list = out;
        Ok(ev)
    }

    /// The read event of operand `k` of instruction `instr` (none for a
    /// constant).
    #[inline(always)]
    fn operand_read(
        &self,
        out: &mut Vec<Ev>,
        op: &Operand,
        instr: u32,
        k: u32,
        instruction_span: Option<Span>,
    ) {
        if let Value::Register(r) = op.value
            && let Some((d, _)) = self.regs.get(r.index)
        {
            out.push(Ev::Read {
                reg: d,
                instr,
                operand: k,
                span: op.span.or(instruction_span),
                whole: false,
            });
        }
    }

    /// Events of a load (`read`) or store through `r`.
    #[allow(clippy::too_many_arguments)]
    fn storage_access(
        &self,
        out: &mut Vec<Ev>,
        pool: &mut Vec<(u64, u64)>,
        layout: &Layout,
        r: &Reference,
        read: bool,
        instr: u32,
        span: Option<Span>,
        place: Place,
    ) -> Check {
        match r.storage {
            StorageKind::Local => {
                let Some((d, _)) = self.regs.get(r.slot) else {
                    return Ok(());
                };
                if !read && !r.is_derived() {
                    out.push(Ev::Write { reg: d });
                } else {
                    out.push(Ev::Read {
                        reg: d,
                        instr,
                        operand: NO_OPERAND,
                        span: r.span.or(span),
                        whole: true,
                    });
                }
            }
            StorageKind::StageIo => {
                if let Some(ranges) = layout.select(self.module, self.stage, r, read, place)? {
                    let start = pool.len() as u32;
                    pool.extend(ranges);
                    let end = pool.len() as u32;
                    out.push(if read {
                        Ev::OutRead {
                            start,
                            end,
                            instr,
                            span: r.path.last().and_then(|s| s.span).or(r.span).or(span),
                        }
                    } else {
                        Ev::OutWrite { start, end }
                    });
                }
            }
            StorageKind::Parameter | StorageKind::Uniform => {}
        }
        Ok(())
    }

    /// Checks definite assignment of registers and outputs and computes
    /// the function's helper summary. `entry` selects the entry-function
    /// rules (no caller supplies outputs; every output is complete on each
    /// normal return).
    pub(crate) fn check_flow(
        &self,
        summaries: &[Summary],
        returns: &[bool],
        layout: &Layout,
        entry: bool,
    ) -> Check<FunctionFlow> {
        let cfg = Cfg::build(self, returns);
        let ev = self.events(&cfg, layout)?;
        let n = self.function.blocks.len();
        let mut first: Option<Keyed> = None;

        // Registers, in groups.
        let total = self.regs.len();
        let mut lo = 0;
        // Each block's writes of the group, gathered once: the fixed-point
        // iteration visits a block once per round (twice or more in a
        // loop) and only needs their union.
        let mut writes: Vec<u64> = Vec::new();
        while lo < total {
            let hi = (lo + REGISTER_GROUP).min(total);
            let words = (hi - lo).div_ceil(64);
            writes.clear();
            writes.resize(n * words, 0);
            for (b, block_writes) in writes.chunks_exact_mut(words).enumerate() {
                for e in ev.block(b) {
                    if let Ev::Write { reg } = *e {
                        let r = reg as usize;
                        if (lo..hi).contains(&r) {
                            set(block_writes, r - lo);
                        }
                    }
                }
            }
            let ins = solve_bits(&cfg, words, |b, state| {
                for (s, w) in state.iter_mut().zip(&writes[b * words..(b + 1) * words]) {
                    *s |= *w;
                }
            });
            let mut state = vec![0u64; words];
            'blocks: for b in 0..n {
                let Some(i) = ins.get(b) else { continue };
                state.copy_from_slice(i);
                for (k, e) in ev.block(b).iter().enumerate() {
                    match *e {
                        Ev::Write { reg } if (lo..hi).contains(&(reg as usize)) => {
                            set(&mut state, reg as usize - lo)
                        }
                        Ev::Read {
                            reg,
                            instr,
                            operand,
                            span,
                            whole,
                        } if (lo..hi).contains(&(reg as usize))
                            && !get(&state, reg as usize - lo) =>
                        {
                            let place = self.place(b, instr);
                            let index = ev.names[reg as usize];
                            let (subject, message) = if whole {
                                (
                                    place.subject(),
                                    format!(
                                        "local register r{index} must be wholly assigned on every path before it is loaded or partially stored through a reference (a partial store never initializes a register)"
                                    ),
                                )
                            } else {
                                (
                                    if operand == NO_OPERAND {
                                        place.subject()
                                    } else {
                                        place.operand(operand as usize)
                                    },
                                    format!(
                                        "register r{index} is read before it is definitely assigned on every path from the function's entry"
                                    ),
                                )
                            };
                            let err = fail(Rule::DefiniteAssignment, subject, span, message);
                            first = earliest(first, Some(((b, k), err)));
                            break 'blocks;
                        }
                        _ => {}
                    }
                }
            }
            lo = hi;
        }

        // Outputs. Only blocks with output, call or return events take part
        // in the transfer and the checks; the others leave the state as it
        // is and report nothing.
        let has_output_events: Vec<bool> = (0..n)
            .map(|b| {
                ev.block(b).iter().any(|e| {
                    matches!(
                        e,
                        Ev::OutWrite { .. }
                            | Ev::OutRead { .. }
                            | Ev::Call { .. }
                            | Ev::Return { .. }
                    )
                })
            })
            .collect();
        let ins = solve(&cfg, Leaves::default(), |b, state| {
            if !has_output_events[b] {
                return;
            }
            for e in ev.block(b) {
                match *e {
                    Ev::OutWrite { start, end } => {
                        for &(s, t) in &ev.pool[start as usize..end as usize] {
                            state.insert(s, t);
                        }
                    }
                    Ev::Call { callee, .. } => {
                        if let Some(s) = summaries.get(callee as usize) {
                            state.union(&s.guarantees);
                        }
                    }
                    _ => {}
                }
            }
        });
        let mut summary = Summary::default();
        let mut guarantees: Option<Leaves> = None;
        let mut output_error: Option<Keyed> = None;
        for (b, state) in ins.iter().enumerate().take(n) {
            let Some(state) = state else { continue };
            if !has_output_events[b] {
                continue;
            }
            let mut state = state.clone();
            for (k, e) in ev.block(b).iter().enumerate() {
                let mut report = |missing: &Leaves, err: &dyn Fn(&str) -> VerifyError| {
                    if let Some(&(leaf, _)) = missing.0.first() {
                        if entry && output_error.is_none() {
                            let slot = layout.slot_of(self.stage, leaf);
                            let name = &self.stage.interface[slot].name;
                            output_error = Some(((b, k), err(name)));
                        }
                        summary.prerequisites.union(missing);
                    }
                };
                match *e {
                    Ev::OutWrite { start, end } => {
                        for &(s, t) in &ev.pool[start as usize..end as usize] {
                            state.insert(s, t);
                        }
                    }
                    Ev::OutRead {
                        start,
                        end,
                        instr,
                        span,
                    } => {
                        let missing = state.missing(&ev.pool[start as usize..end as usize]);
                        report(&missing, &|name| {
                            fail(
                                Rule::Output,
                                self.place(b, instr).subject(),
                                span,
                                format!(
                                    "output {name:?} is read before it is definitely assigned on every incoming path (a dynamic index needs every element it may select)"
                                ),
                            )
                        });
                    }
                    Ev::Call {
                        callee,
                        instr,
                        span,
                    } => {
                        if let Some(s) = summaries.get(callee as usize) {
                            let missing = state.missing(&s.prerequisites.0);
                            let callee_name =
                                &self.stage.functions.as_slice()[callee as usize].name;
                            report(&missing, &|name| {
                                fail(
                                    Rule::Output,
                                    self.place(b, instr).subject(),
                                    span,
                                    format!(
                                        "the call to {callee_name:?} reads output {name:?}, which is not definitely assigned before the call"
                                    ),
                                )
                            });
                            state.union(&s.guarantees);
                        }
                    }
                    Ev::Return { span } => {
                        summary.returns = true;
                        guarantees = Some(match guarantees.take() {
                            None => state.clone(),
                            Some(g) => g.intersect(&state),
                        });
                        if entry {
                            let missing = state.missing(&layout.all.0);
                            report(&missing, &|name| {
                                fail(
                                    Rule::Output,
                                    self.place(b, TERMINATOR).subject(),
                                    span,
                                    format!(
                                        "output {name:?} is not fully assigned on this normal return of the entry function"
                                    ),
                                )
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        first = earliest(first, output_error);
        if let Some((_, e)) = first {
            return Err(e);
        }
        summary.guarantees = guarantees.unwrap_or_default();
        Ok(FunctionFlow { summary })
    }
}
