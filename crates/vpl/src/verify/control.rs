//! Section 8: terminators (branch conditions, return values, discard only
//! in the fragment stage) and the control-flow graph used by the data-flow
//! analyses of sections 5.2 and 6.3.

use super::context::FnCx;
use super::diagnostic::{Check, Place, Rule, fail};
use crate::ir::{
    Callee, InstructionKind, ScalarKind, StageKind, Terminator, TerminatorKind, TypeInner,
};

impl FnCx<'_> {
    /// Type-checks a terminator (reachable or not).
    pub(crate) fn check_terminator(&self, t: &Terminator, place: Place) -> Check {
        let span = t.span;
        match &t.kind {
            TerminatorKind::Branch { .. } => Ok(()),
            TerminatorKind::BranchIf { condition, .. } => {
                let ty = self.operand(condition, place.operand(0), span)?;
                if !matches!(self.inner(ty), TypeInner::Scalar(ScalarKind::Bool)) {
                    return Err(fail(
                        Rule::ControlFlow,
                        place.operand(0),
                        condition.span.or(span),
                        format!(
                            "a branch condition must be a bool value, not {}",
                            self.describe(ty)
                        ),
                    ));
                }
                Ok(())
            }
            TerminatorKind::Return { value } => {
                let ret = self.function.return_type;
                let void = matches!(self.inner(ret), TypeInner::Void);
                match value {
                    None if void => Ok(()),
                    None => Err(fail(
                        Rule::ControlFlow,
                        place.subject(),
                        span,
                        format!(
                            "function {:?} returns {}, so its return needs a value of that type",
                            self.function.name,
                            self.describe(ret)
                        ),
                    )),
                    Some(v) => {
                        let ty = self.operand(v, place.operand(0), span)?;
                        if void {
                            return Err(fail(
                                Rule::ControlFlow,
                                place.operand(0),
                                v.span.or(span),
                                format!(
                                    "function {:?} returns void, so its return takes no value",
                                    self.function.name
                                ),
                            ));
                        }
                        if ty != ret {
                            return Err(fail(
                                Rule::ControlFlow,
                                place.operand(0),
                                v.span.or(span),
                                format!(
                                    "return value has type {}, but function {:?} returns {} (no implicit conversion)",
                                    self.describe(ty),
                                    self.function.name,
                                    self.describe(ret)
                                ),
                            ));
                        }
                        Ok(())
                    }
                }
            }
            TerminatorKind::Discard => {
                if self.stage.kind != StageKind::Fragment {
                    return Err(fail(
                        Rule::ControlFlow,
                        place.subject(),
                        span,
                        "discard is only allowed in the fragment stage",
                    ));
                }
                Ok(())
            }
        }
    }
}

/// The control-flow graph of one verified-so-far function, with the
/// executable prefix of each block (a call to a helper without a normal
/// return cuts the rest of the block and its successors).
#[derive(Debug)]
pub(crate) struct Cfg {
    /// Successors of each block (none when cut, returning or discarding).
    pub succ: Vec<[u32; 2]>,
    /// Number of valid entries in `succ`.
    pub nsucc: Vec<u8>,
    /// Executable instruction count of each block.
    pub prefix: Vec<usize>,
    /// Whether the block's continuation is cut by a non-returning call.
    pub cut: Vec<bool>,
    /// Blocks reachable from the entry block, in reverse post-order.
    pub rpo: Vec<u32>,
    /// Position of each block in `rpo` (`u32::MAX`: unreachable).
    pub rpo_index: Vec<u32>,
}

impl Cfg {
    /// Builds the graph; `returns[f]` says whether stage function `f` can
    /// return normally (callees are summarised before their callers).
    pub(crate) fn build(cx: &FnCx<'_>, returns: &[bool]) -> Cfg {
        let f = cx.function;
        let n = f.blocks.len();
        let mut succ = vec![[0u32; 2]; n];
        let mut nsucc = vec![0u8; n];
        let mut prefix = vec![0usize; n];
        let mut cut = vec![false; n];
        for (bh, block) in f.blocks.iter() {
            let b = bh.index();
            let stop = block.instructions.iter().position(|i| {
                matches!(
                    i.kind,
                    InstructionKind::Call { callee: Callee::Function(c), .. }
                        if !returns.get(c.index()).copied().unwrap_or(true)
                )
            });
            match stop {
                Some(p) => {
                    prefix[b] = p + 1;
                    cut[b] = true;
                }
                None => {
                    prefix[b] = block.instructions.len();
                    if let Some(t) = &block.terminator {
                        match t.kind {
                            TerminatorKind::Branch { target } => {
                                succ[b][0] = target.raw();
                                nsucc[b] = 1;
                            }
                            TerminatorKind::BranchIf {
                                if_true, if_false, ..
                            } => {
                                succ[b] = [if_true.raw(), if_false.raw()];
                                nsucc[b] = 2;
                            }
                            TerminatorKind::Return { .. } | TerminatorKind::Discard => {}
                        }
                    }
                }
            }
        }
        // Iterative DFS post-order from the entry block.
        let mut visited = vec![false; n];
        let mut post = Vec::with_capacity(n);
        if n > 0 {
            let mut stack: Vec<(u32, u8)> = vec![(0, 0)];
            visited[0] = true;
            while let Some(&mut (b, ref mut next)) = stack.last_mut() {
                let bi = b as usize;
                if *next < nsucc[bi] {
                    let s = succ[bi][*next as usize];
                    *next += 1;
                    if !visited[s as usize] {
                        visited[s as usize] = true;
                        stack.push((s, 0));
                    }
                } else {
                    post.push(b);
                    stack.pop();
                }
            }
        }
        post.reverse();
        let mut rpo_index = vec![u32::MAX; n];
        for (i, &b) in post.iter().enumerate() {
            rpo_index[b as usize] = i as u32;
        }
        Cfg {
            succ,
            nsucc,
            prefix,
            cut,
            rpo: post,
            rpo_index,
        }
    }

    /// The successors of block `b`.
    pub(crate) fn successors(&self, b: usize) -> &[u32] {
        &self.succ[b][..self.nsucc[b] as usize]
    }

    /// Whether block `b` is reachable from the entry block.
    pub(crate) fn reachable(&self, b: usize) -> bool {
        self.rpo_index[b] != u32::MAX
    }
}

/// A must-analysis state domain: meet is intersection, `None` is ⊤ (not
/// reached yet).
pub(crate) trait MustState: Clone {
    /// `self ∩= other`; returns whether `self` changed.
    fn meet(&mut self, other: &Self) -> bool;
}

/// Solves a forward must-analysis to its greatest fixed point with
/// reverse-post-order sweeps; returns the in-state of every block
/// (`None`: unreachable). All VPL availability transfer functions only add
/// facts, so a reducible graph settles after one sweep plus a confirming
/// one, whatever its loop nesting depth.
pub(crate) fn solve<S: MustState>(
    cfg: &Cfg,
    entry: S,
    mut transfer: impl FnMut(usize, &mut S),
) -> Vec<Option<S>> {
    let n = cfg.succ.len();
    let mut ins: Vec<Option<S>> = vec![None; n];
    if cfg.rpo.is_empty() {
        return ins;
    }
    ins[0] = Some(entry);
    loop {
        let mut again = false;
        for (pos, &b) in cfg.rpo.iter().enumerate() {
            let b = b as usize;
            let Some(mut state) = ins[b].clone() else {
                continue;
            };
            transfer(b, &mut state);
            for &s in cfg.successors(b) {
                let s = s as usize;
                let changed = match &mut ins[s] {
                    slot @ None => {
                        *slot = Some(state.clone());
                        true
                    }
                    Some(existing) => existing.meet(&state),
                };
                if changed && cfg.rpo_index[s] as usize <= pos {
                    again = true;
                }
            }
        }
        if !again {
            return ins;
        }
    }
}
