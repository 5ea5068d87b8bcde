//! Pre-decoded fast path for the stepper's hot loop.
//!
//! Each pc gets a [`Fast`] op: either a single simple instruction or a
//! fused run of them (operand loads, a number operator, then an optional
//! store or conditional jump). Fused ops only read their operands before
//! their single write, so executing the run at once is indistinguishable
//! from stepping it; a jump into the middle of a run uses the entry of the
//! pc it lands on. Anything not handled (or operands that are not numbers)
//! falls back to the full stepper, which executes or rejects the
//! instruction with the exact semantics and errors.
//!
//! [`prepare`] then resolves the operand kinds of the commonest shapes
//! ([`Fast::specialize`]: a counter's step, a loop condition, an
//! accumulator), so the hot loop reads no operand tags for them; each
//! resolved form stands for the same instructions, with the same length
//! and the same stack-limit check, as the generic form it replaces.

use crate::lang;
use crate::value::Value;
use tcc_ir::{Constant, Instruction as I};

/// A number operator handled by the fast path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bin {
    /// `+` on numbers.
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `%` (IEEE remainder; Python modulo, division by zero left to the stepper).
    Rem,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl Bin {
    /// Whether the operator is a compare (its result is a boolean).
    pub fn is_compare(self) -> bool {
        matches!(self, Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge)
    }
}

/// An operand load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    /// `LoadLocal`.
    Local(u32),
    /// `LoadConst` of a number.
    Num(f64),
}

/// What happens to an operator's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Pushed.
    Push,
    /// `StoreLocal`.
    Store(u32),
    /// `StoreLocal` then `Jump` (the back edge of a loop body).
    StoreJump(u32, u32),
    /// `JumpIfFalse`.
    JumpIfFalse(u32),
    /// `JumpIfTrue`.
    JumpIfTrue(u32),
}

impl Tail {
    fn len(self) -> u32 {
        match self {
            Tail::Push => 0,
            Tail::StoreJump(..) => 2,
            _ => 1,
        }
    }
}

/// The fast form of the instruction(s) starting at one pc.
#[derive(Debug, Clone, Copy, PartialEq)]
// An explicit tag byte: the hot loop dispatches on it without decoding a niche.
#[repr(u8)]
pub enum Fast {
    /// Use the full stepper.
    Slow,
    /// `Nop`.
    Nop,
    /// `Pop`.
    Pop,
    /// `LoadLocal`.
    LoadLocal(u32),
    /// `StoreLocal`.
    StoreLocal(u32),
    /// `LoadConst` (value from the prepared constants).
    LoadConst,
    /// `Jump`.
    Jump(u32),
    /// `JumpIfTrue` (true) / `JumpIfFalse` (false).
    JumpIf(bool, u32),
    /// Operator on the two values on top of the stack, then the tail.
    Bin(Bin, Tail),
    /// Operator on (stack top, operand), then the tail.
    StackOp(Operand, Bin, Tail),
    /// Operator on two loaded operands, then the tail.
    OpOp(Operand, Operand, Bin, Tail),
    /// A compare of two loaded operands, then `JumpIfTrue` (true) /
    /// `JumpIfFalse` (false) to the target: a loop's condition.
    CmpJump(Operand, Operand, Bin, bool, u32),
    /// `(o1 b1 o2) b2 o3`, then the tail: an operand pair's result
    /// combined with a third operand, without touching the stack between.
    Chain(Operand, Operand, Bin, Operand, Bin, Tail),
    /// `a b3 ((o1 b1 o2) b2 o3)`, then the tail: the accumulate shape
    /// `a = a + expr`, all operands loaded before the single write.
    Accum(Operand, Operand, Operand, Bin, Operand, Bin, Bin, Tail),
    /// `local = local + k` for a number constant `k` (a loop counter's
    /// step): `OpOp(Local(l), Num(k), Add, Store(l))` with the operands
    /// resolved by [`prepare`].
    Inc(u32, f64),
    /// `local = local + k`, then `Jump` to the target (a loop's back edge):
    /// `OpOp(Local(l), Num(k), Add, StoreJump(l, t))`.
    IncJump(u32, f64, u32),
    /// `CmpJump(Local(a), Local(b), op, when, target)` with the operands
    /// resolved.
    CmpJumpLocals(u32, u32, Bin, bool, u32),
    /// `CmpJump(Local(a), Num(k), op, when, target)` with the operands
    /// resolved.
    CmpJumpConst(u32, f64, Bin, bool, u32),
    /// `Accum(Local(l), o1, o2, b1, o3, b2, b3, Store(l))` with `b3`
    /// arithmetic: `l = l b3 ((o1 b1 o2) b2 o3)`, a loop's accumulator
    /// updated in place.
    AccumLocal(u32, Operand, Operand, Bin, Operand, Bin, Bin),
}

impl Fast {
    /// Number of instructions the op stands for.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(self) -> u32 {
        match self {
            Fast::Bin(_, t) => 1 + t.len(),
            Fast::StackOp(_, _, t) => 2 + t.len(),
            Fast::OpOp(_, _, _, t) => 3 + t.len(),
            Fast::CmpJump(..) | Fast::CmpJumpLocals(..) | Fast::CmpJumpConst(..) => 4,
            Fast::Inc(..) => 4,
            Fast::AccumLocal(..) => 8,
            Fast::IncJump(..) => 5,
            Fast::Chain(_, _, _, _, _, t) => 5 + t.len(),
            Fast::Accum(_, _, _, _, _, _, _, t) => 7 + t.len(),
            _ => 1,
        }
    }
}

/// A pc's fast op with the number of instructions it stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FastOp {
    /// The form.
    pub form: Fast,
    /// `form.len()`, stored so the hot loop does not recompute it.
    pub len: u32,
}

/// A function's fast ops, one per pc.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The op at each pc.
    pub ops: Vec<FastOp>,
    /// The function's local count: every local index in `ops` is below it.
    pub local_count: usize,
}

/// Pre-decodes a function for the hot loop. An op that names a local at or
/// above `local_count` (validation rejects such artifacts) becomes
/// [`Fast::Slow`], so the hot loop indexes locals without failing.
pub fn prepare(code: &[I], local_count: u32) -> Prepared {
    let ops = compile(code)
        .into_iter()
        .map(|form| {
            let form = if form.locals_below(local_count) {
                form.specialize()
            } else {
                Fast::Slow
            };
            FastOp {
                form,
                len: form.len(),
            }
        })
        .collect();
    Prepared {
        ops,
        local_count: local_count as usize,
    }
}

impl Fast {
    /// The same op in a form with its operand kinds resolved, when there is
    /// one: the hot loop then loads no operand tags and takes no branch on
    /// them. Same instructions, same length, same checks.
    pub fn specialize(self) -> Fast {
        use Operand::{Local, Num};
        match self {
            Fast::OpOp(Local(l), Num(k), Bin::Add, Tail::Store(s)) if s == l => Fast::Inc(l, k),
            Fast::OpOp(Local(l), Num(k), Bin::Add, Tail::StoreJump(s, t)) if s == l => {
                Fast::IncJump(l, k, t)
            }
            Fast::CmpJump(Local(a), Local(b), op, when, t) => {
                Fast::CmpJumpLocals(a, b, op, when, t)
            }
            Fast::CmpJump(Local(a), Num(k), op, when, t) => Fast::CmpJumpConst(a, k, op, when, t),
            Fast::Accum(Local(a), o1, o2, b1, o3, b2, b3, Tail::Store(s))
                if s == a && !b3.is_compare() =>
            {
                Fast::AccumLocal(a, o1, o2, b1, o3, b2, b3)
            }
            other => other,
        }
    }

    /// Whether every local the op reads or writes is below `count`.
    fn locals_below(self, count: u32) -> bool {
        let op = |o: Operand| match o {
            Operand::Local(l) => l < count,
            Operand::Num(_) => true,
        };
        let tail = |t: Tail| match t {
            Tail::Store(l) | Tail::StoreJump(l, _) => l < count,
            _ => true,
        };
        match self {
            Fast::LoadLocal(l) | Fast::StoreLocal(l) | Fast::Inc(l, _) | Fast::IncJump(l, ..) => {
                l < count
            }
            Fast::CmpJumpLocals(a, b, ..) => a < count && b < count,
            Fast::CmpJumpConst(a, ..) => a < count,
            Fast::AccumLocal(a, o1, o2, _, o3, ..) => a < count && op(o1) && op(o2) && op(o3),
            Fast::Bin(_, t) => tail(t),
            Fast::StackOp(o, _, t) => op(o) && tail(t),
            Fast::OpOp(a, b, _, t) => op(a) && op(b) && tail(t),
            Fast::CmpJump(a, b, ..) => op(a) && op(b),
            Fast::Chain(a, b, _, c, _, t) => op(a) && op(b) && op(c) && tail(t),
            Fast::Accum(a, b, c, _, d, _, _, t) => op(a) && op(b) && op(c) && op(d) && tail(t),
            _ => true,
        }
    }
}

/// An operator's result in the hot loop.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Res {
    /// From an arithmetic operator.
    Num(f64),
    /// From a compare.
    Bool(bool),
}

impl Res {
    /// As a value.
    #[inline(always)]
    pub fn value(self) -> Value {
        match self {
            Res::Num(n) => Value::Number(n),
            Res::Bool(b) => Value::Bool(b),
        }
    }

    /// Truthiness (the same rule as [`lang::truthy`]).
    #[inline(always)]
    pub fn truthy(self) -> bool {
        match self {
            Res::Num(n) => !(n == 0.0 || n.is_nan()),
            Res::Bool(b) => b,
        }
    }
}

/// An operand's number: a constant, or a local holding a number. `None`
/// (any other value, or a local out of range) leaves the op to the stepper.
#[inline(always)]
pub fn num(locals: &[Value], o: Operand) -> Option<f64> {
    match o {
        Operand::Num(n) => Some(n),
        Operand::Local(l) => match locals.get(l as usize) {
            Some(Value::Number(n)) => Some(*n),
            _ => None,
        },
    }
}

/// An arithmetic operator on numbers; `None` leaves the case to the stepper
/// (Python division by zero, or a compare).
#[inline(always)]
pub fn arith(py: bool, op: Bin, a: f64, b: f64) -> Option<f64> {
    Some(match op {
        Bin::Add => a + b,
        Bin::Sub => a - b,
        Bin::Mul => a * b,
        Bin::Rem if py => {
            if b == 0.0 {
                return None;
            }
            lang::py_mod(a, b)
        }
        Bin::Rem => lang::js_rem(a, b),
        Bin::Lt | Bin::Le | Bin::Gt | Bin::Ge => return None,
    })
}

/// A compare on numbers; `None` for an arithmetic operator.
#[inline(always)]
pub fn compare(op: Bin, a: f64, b: f64) -> Option<bool> {
    Some(match op {
        Bin::Lt => a < b,
        Bin::Le => a <= b,
        Bin::Gt => a > b,
        Bin::Ge => a >= b,
        _ => return None,
    })
}

/// Any fast operator on numbers; `None` leaves the case to the stepper.
#[inline(always)]
pub fn apply(py: bool, op: Bin, a: f64, b: f64) -> Option<Res> {
    Some(match op {
        Bin::Lt => Res::Bool(a < b),
        Bin::Le => Res::Bool(a <= b),
        Bin::Gt => Res::Bool(a > b),
        Bin::Ge => Res::Bool(a >= b),
        _ => Res::Num(arith(py, op, a, b)?),
    })
}

fn operand(i: Option<&I>) -> Option<Operand> {
    match i? {
        I::LoadLocal { local } => Some(Operand::Local(*local)),
        I::LoadConst {
            value: Constant::Number(n),
        } => Some(Operand::Num(*n)),
        _ => None,
    }
}

fn bin(i: Option<&I>) -> Option<Bin> {
    Some(match i? {
        I::Add => Bin::Add,
        I::Sub => Bin::Sub,
        I::Mul => Bin::Mul,
        I::Rem => Bin::Rem,
        I::Lt => Bin::Lt,
        I::Le => Bin::Le,
        I::Gt => Bin::Gt,
        I::Ge => Bin::Ge,
        _ => return None,
    })
}

fn tail(i: Option<&I>, next: Option<&I>) -> Tail {
    match i {
        Some(I::StoreLocal { local }) => match next {
            Some(I::Jump { target }) => Tail::StoreJump(*local, *target),
            _ => Tail::Store(*local),
        },
        Some(I::JumpIfFalse { target }) => Tail::JumpIfFalse(*target),
        Some(I::JumpIfTrue { target }) => Tail::JumpIfTrue(*target),
        _ => Tail::Push,
    }
}

/// Pre-decodes a function's instructions.
pub fn compile(code: &[I]) -> Vec<Fast> {
    (0..code.len())
        .map(|pc| {
            let at = |k: usize| code.get(pc + k);
            if let (Some(a), Some(x), Some(y), Some(b1), Some(z), Some(b2), Some(b3)) = (
                operand(at(0)),
                operand(at(1)),
                operand(at(2)),
                bin(at(3)),
                operand(at(4)),
                bin(at(5)),
                bin(at(6)),
            ) && !b1.is_compare()
                && !b2.is_compare()
            {
                return Fast::Accum(a, x, y, b1, z, b2, b3, tail(at(7), at(8)));
            }
            if let (Some(x), Some(y), Some(b1), Some(z), Some(b2)) = (
                operand(at(0)),
                operand(at(1)),
                bin(at(2)),
                operand(at(3)),
                bin(at(4)),
            ) && !b1.is_compare()
            {
                return Fast::Chain(x, y, b1, z, b2, tail(at(5), at(6)));
            }
            if let (Some(x), Some(y), Some(op)) = (operand(at(0)), operand(at(1)), bin(at(2))) {
                return match tail(at(3), at(4)) {
                    Tail::JumpIfFalse(t) if op.is_compare() => Fast::CmpJump(x, y, op, false, t),
                    Tail::JumpIfTrue(t) if op.is_compare() => Fast::CmpJump(x, y, op, true, t),
                    t => Fast::OpOp(x, y, op, t),
                };
            }
            if let (Some(y), Some(op)) = (operand(at(0)), bin(at(1))) {
                return Fast::StackOp(y, op, tail(at(2), at(3)));
            }
            if let Some(op) = bin(at(0)) {
                return Fast::Bin(op, tail(at(1), at(2)));
            }
            match &code[pc] {
                I::Nop => Fast::Nop,
                I::Pop => Fast::Pop,
                I::LoadLocal { local } => Fast::LoadLocal(*local),
                I::StoreLocal { local } => Fast::StoreLocal(*local),
                I::LoadConst { .. } => Fast::LoadConst,
                I::Jump { target } => Fast::Jump(*target),
                I::JumpIfTrue { target } => Fast::JumpIf(true, *target),
                I::JumpIfFalse { target } => Fast::JumpIf(false, *target),
                _ => Fast::Slow,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuses_operand_operator_tail_runs() {
        let code = vec![
            I::LoadLocal { local: 2 },
            I::LoadLocal { local: 0 },
            I::Lt,
            I::JumpIfFalse { target: 9 },
            I::LoadConst {
                value: Constant::Number(7.0),
            },
            I::Rem,
            I::Add,
            I::StoreLocal { local: 1 },
        ];
        let f = compile(&code);
        assert_eq!(
            f[0],
            Fast::CmpJump(Operand::Local(2), Operand::Local(0), Bin::Lt, false, 9)
        );
        assert_eq!(f[0].len(), 4);
        assert_eq!(f[4], Fast::StackOp(Operand::Num(7.0), Bin::Rem, Tail::Push));
        assert_eq!(f[6], Fast::Bin(Bin::Add, Tail::Store(1)));
        assert_eq!(f[3], Fast::JumpIf(false, 9));
    }

    #[test]
    fn fuses_chains_and_accumulates() {
        let l = |local| I::LoadLocal { local };
        let code = vec![
            l(1),
            l(2),
            l(2),
            I::Mul,
            I::LoadConst {
                value: Constant::Number(7.0),
            },
            I::Rem,
            I::Add,
            I::StoreLocal { local: 1 },
        ];
        let f = compile(&code);
        let (one, two, seven) = (Operand::Local(1), Operand::Local(2), Operand::Num(7.0));
        assert_eq!(
            f[0],
            Fast::Accum(
                one,
                two,
                two,
                Bin::Mul,
                seven,
                Bin::Rem,
                Bin::Add,
                Tail::Store(1)
            )
        );
        assert_eq!(f[0].len(), 8);
        assert_eq!(
            f[1],
            Fast::Chain(two, two, Bin::Mul, seven, Bin::Rem, Tail::Push)
        );
        assert_eq!(f[1].len(), 5);
        let g = compile(&[
            l(0),
            l(1),
            I::Add,
            I::StoreLocal { local: 0 },
            I::Jump { target: 0 },
        ]);
        assert_eq!(
            g[0],
            Fast::OpOp(Operand::Local(0), one, Bin::Add, Tail::StoreJump(0, 0))
        );
        assert_eq!(g[0].len(), 5);
        // A jump into the middle still lands on the smaller forms.
        assert_eq!(f[2], Fast::StackOp(two, Bin::Mul, Tail::Push));
    }

    #[test]
    fn prepare_stores_lengths_and_guards_local_indices() {
        let code = vec![
            I::LoadLocal { local: 0 },
            I::LoadLocal { local: 5 },
            I::Add,
            I::StoreLocal { local: 1 },
        ];
        let p = prepare(&code, 2);
        assert_eq!(p.local_count, 2);
        // Local 5 is out of range: those forms are left to the stepper.
        assert_eq!(p.ops[0].form, Fast::Slow);
        assert_eq!(p.ops[1].form, Fast::Slow);
        assert_eq!(p.ops[2].form, Fast::Bin(Bin::Add, Tail::Store(1)));
        for op in &p.ops {
            assert_eq!(op.len, op.form.len());
        }
        let ok = prepare(&code, 6);
        assert_eq!(ok.ops[0].len, 4);
    }

    #[test]
    fn prepare_resolves_the_compute_loop_operands() {
        // `while (i < n) { s = s + (i * i) % 7; i = i + 1 }` with n, s, i
        // in locals 0, 1, 2.
        let l = |local| I::LoadLocal { local };
        let k = |n| I::LoadConst {
            value: Constant::Number(n),
        };
        let code = vec![
            l(2),
            l(0),
            I::Lt,
            I::JumpIfFalse { target: 17 },
            l(1),
            l(2),
            l(2),
            I::Mul,
            k(7.0),
            I::Rem,
            I::Add,
            I::StoreLocal { local: 1 },
            l(2),
            k(1.0),
            I::Add,
            I::StoreLocal { local: 2 },
            I::Jump { target: 0 },
            l(1),
            I::Return,
        ];
        let p = prepare(&code, 3);
        let (two, seven) = (Operand::Local(2), Operand::Num(7.0));
        assert_eq!(p.ops[0].form, Fast::CmpJumpLocals(2, 0, Bin::Lt, false, 17));
        assert_eq!(
            p.ops[4].form,
            Fast::AccumLocal(1, two, two, Bin::Mul, seven, Bin::Rem, Bin::Add)
        );
        assert_eq!(p.ops[12].form, Fast::IncJump(2, 1.0, 0));
        // Same lengths as the generic forms they replace.
        assert_eq!((p.ops[0].len, p.ops[4].len, p.ops[12].len), (4, 8, 5));
        for op in &p.ops {
            assert_eq!(op.len, op.form.len());
        }
        // A constant bound; a step stored without the jump.
        let q = prepare(&[l(0), k(9.0), I::Le, I::JumpIfTrue { target: 0 }], 1);
        assert_eq!(q.ops[0].form, Fast::CmpJumpConst(0, 9.0, Bin::Le, true, 0));
        let r = prepare(&[l(0), k(2.0), I::Add, I::StoreLocal { local: 0 }], 1);
        assert_eq!(r.ops[0].form, Fast::Inc(0, 2.0));
    }

    #[test]
    fn resolved_forms_keep_their_shape_conditions() {
        let l = |local| I::LoadLocal { local };
        let k = |n| I::LoadConst {
            value: Constant::Number(n),
        };
        // Stored to another local: not an increment.
        let p = prepare(&[l(0), k(1.0), I::Add, I::StoreLocal { local: 1 }], 2);
        assert_eq!(
            p.ops[0].form,
            Fast::OpOp(
                Operand::Local(0),
                Operand::Num(1.0),
                Bin::Add,
                Tail::Store(1)
            )
        );
        // `k + l` and `l - k` stay generic.
        let p = prepare(&[k(1.0), l(0), I::Add, I::StoreLocal { local: 0 }], 1);
        assert!(matches!(p.ops[0].form, Fast::OpOp(..)));
        let p = prepare(&[l(0), k(1.0), I::Sub, I::StoreLocal { local: 0 }], 1);
        assert!(matches!(p.ops[0].form, Fast::OpOp(..)));
        // An accumulate whose last operator is a compare, or whose result
        // goes elsewhere, stays generic.
        let acc = |last: I, store: u32| {
            prepare(
                &[
                    l(0),
                    l(1),
                    l(1),
                    I::Mul,
                    k(7.0),
                    I::Rem,
                    last,
                    I::StoreLocal { local: store },
                ],
                2,
            )
            .ops[0]
                .form
        };
        assert!(matches!(acc(I::Lt, 0), Fast::Accum(..)));
        assert!(matches!(acc(I::Add, 1), Fast::Accum(..)));
        assert!(matches!(acc(I::Sub, 0), Fast::AccumLocal(..)));
        // A compare whose first operand is a constant stays generic.
        let p = prepare(&[k(1.0), l(0), I::Lt, I::JumpIfFalse { target: 0 }], 1);
        assert!(matches!(p.ops[0].form, Fast::CmpJump(..)));
        // Out-of-range locals are still refused before resolution.
        let p = prepare(&[l(0), k(1.0), I::Add, I::StoreLocal { local: 0 }], 0);
        assert_eq!(p.ops[0].form, Fast::Slow);
    }

    #[test]
    fn compares_never_feed_a_chain() {
        let l = |local| I::LoadLocal { local };
        let f = compile(&[l(0), l(1), I::Lt, l(2), I::Add]);
        assert_eq!(
            f[0],
            Fast::OpOp(Operand::Local(0), Operand::Local(1), Bin::Lt, Tail::Push)
        );
    }

    #[test]
    fn results_follow_value_truthiness() {
        for r in [
            Res::Num(0.0),
            Res::Num(-0.0),
            Res::Num(f64::NAN),
            Res::Num(2.5),
            Res::Bool(true),
            Res::Bool(false),
        ] {
            assert_eq!(r.truthy(), lang::truthy(&r.value()));
        }
        assert_eq!(apply(true, Bin::Rem, 1.0, 0.0), None);
        assert!(matches!(apply(false, Bin::Rem, 1.0, 0.0), Some(Res::Num(n)) if n.is_nan()));
        assert_eq!(arith(false, Bin::Lt, 1.0, 2.0), None);
    }
}
