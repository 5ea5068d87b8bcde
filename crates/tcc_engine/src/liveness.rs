//! Local-variable liveness, used to clear dead locals before a checkpoint
//! (facts note (c)) so that checkpoints do not carry values the program can
//! no longer read.
//!
//! Backward data flow over each function's control-flow graph, in which
//! every instruction of a `PushTry`'s protected range also leads to its
//! catch target (it may throw there). The range runs from the `PushTry` to
//! its matching `PopTry` in instruction order, or to the end of the
//! function when there is none. Handlers active when a checkpoint is taken
//! are added by the caller ([`Liveness::is_live_with`]), which covers code
//! that jumps back across a `PushTry`. This matches the reference engine;
//! the earlier rule (whatever is live at any catch target of the function
//! is live everywhere) kept values no throw could reach.

use tcc_ir::{Function, Instruction};

/// Analyses above this many bit-words are skipped (every local counts as live).
const MAX_WORDS: usize = 1 << 22;
/// Fixpoint rounds before giving up (every local counts as live).
const MAX_ROUNDS: usize = 64;

/// Live-in sets of one function, or `None` when the analysis was skipped.
#[derive(Debug, Clone)]
pub struct Liveness {
    words: usize,
    live_in: Option<Vec<u64>>,
}

impl Liveness {
    /// Analyses `f`.
    pub fn analyse(f: &Function) -> Liveness {
        let n = f.instructions.len();
        let words = (f.local_count as usize).div_ceil(64);
        if words == 0 || n == 0 || n.saturating_mul(words) > MAX_WORDS {
            return Liveness {
                words,
                live_in: None,
            };
        }
        // Catch targets each pc may throw to (protected ranges in order).
        let mut handlers: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut open: Vec<(usize, usize)> = Vec::new();
        for (pc, ins) in f.instructions.iter().enumerate() {
            match ins {
                Instruction::PushTry { catch, .. } => open.push((pc, *catch as usize)),
                Instruction::PopTry => {
                    if let Some((start, catch)) = open.pop() {
                        for h in &mut handlers[start..=pc] {
                            h.push(catch);
                        }
                    }
                }
                _ => {}
            }
        }
        for (start, catch) in open {
            for h in &mut handlers[start..] {
                h.push(catch);
            }
        }
        let mut live = vec![0u64; n * words];
        let mut out = vec![0u64; words];
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for pc in (0..n).rev() {
                out.fill(0);
                let succ = |t: usize, out: &mut Vec<u64>| {
                    if t < n {
                        for w in 0..words {
                            out[w] |= live[t * words + w];
                        }
                    }
                };
                match &f.instructions[pc] {
                    Instruction::Jump { target } => succ(*target as usize, &mut out),
                    Instruction::JumpIfTrue { target } | Instruction::JumpIfFalse { target } => {
                        succ(*target as usize, &mut out);
                        succ(pc + 1, &mut out);
                    }
                    Instruction::Return | Instruction::Throw => {}
                    _ => succ(pc + 1, &mut out),
                }
                for &c in &handlers[pc] {
                    succ(c, &mut out);
                }
                match f.instructions[pc] {
                    Instruction::LoadLocal { local } => {
                        let l = local as usize;
                        if l / 64 < words {
                            out[l / 64] |= 1 << (l % 64);
                        }
                    }
                    Instruction::StoreLocal { local } => {
                        let l = local as usize;
                        if l / 64 < words {
                            out[l / 64] &= !(1 << (l % 64));
                        }
                    }
                    _ => {}
                }
                let slot = &mut live[pc * words..(pc + 1) * words];
                if slot != out.as_slice() {
                    slot.copy_from_slice(&out);
                    changed = true;
                }
            }
            if !changed {
                return Liveness {
                    words,
                    live_in: Some(live),
                };
            }
        }
        Liveness {
            words,
            live_in: None,
        }
    }

    /// Whether `local` may be read at or after `pc` (before it is
    /// overwritten), or at one of `catches` (the catch targets of the
    /// frame's active handlers).
    pub fn is_live_with(&self, pc: u32, catches: &[u32], local: usize) -> bool {
        self.is_live(pc, local) || catches.iter().any(|&c| self.is_live(c, local))
    }

    /// Whether `local` may be read at or after `pc` (before it is overwritten).
    pub fn is_live(&self, pc: u32, local: usize) -> bool {
        match &self.live_in {
            None => true,
            Some(live) => {
                let idx = pc as usize * self.words + local / 64;
                live.get(idx).is_none_or(|w| w & (1 << (local % 64)) != 0)
            }
        }
    }
}
