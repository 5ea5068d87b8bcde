//! Local-variable liveness, used to clear dead locals before a checkpoint
//! (facts note (c)) so that checkpoints do not carry values the program can
//! no longer read.
//!
//! Backward data flow over each function's control-flow graph. `Throw` can
//! reach any `PushTry` catch target, so whatever is live at a catch target
//! is treated as live everywhere in that function (conservative).

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
        let catches: Vec<usize> = f
            .instructions
            .iter()
            .filter_map(|i| match i {
                Instruction::PushTry { catch, .. } => Some(*catch as usize),
                _ => None,
            })
            .filter(|&c| c < n)
            .collect();
        let mut live = vec![0u64; n * words];
        let mut catch_live = vec![0u64; words];
        let mut out = vec![0u64; words];
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for pc in (0..n).rev() {
                out.copy_from_slice(&catch_live);
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
            let mut new_catch = vec![0u64; words];
            for &c in &catches {
                for w in 0..words {
                    new_catch[w] |= live[c * words + w];
                }
            }
            if new_catch != catch_live {
                catch_live = new_catch;
                changed = true;
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

    /// Whether `local` may be read after `pc` (before it is overwritten).
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
