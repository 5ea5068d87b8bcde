//! Requires/ensures clauses in the lowered form: each clause a tree of
//! contract operations, evaluated lazily from its root exactly as the
//! interpreter does (an operand naming an earlier operation evaluates it
//! again, with its own step tick), with each operation's checks, fault
//! sites and callee decided once.

use super::word::{Arith, Compare};
use crate::interp::canon;
use crate::materialize::c::Refusal;
use crate::materialize::c::plan::{ContractBytes, FunctionPlan};
use crate::materialize::c::types::is_word;
use crate::materialize::c::walk::At;
use crate::model::*;

/// A value a contract operation reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContractValue {
    /// A canonical word (a constant, the result before it exists, a slot
    /// without a path).
    Word(u64),
    /// The binding of a runtime slot's path: one word (`word`), or the
    /// storage of its value (a loan root's: the loan).
    Slot { path: usize, word: bool },
    /// The function's result (in ensures): one word, or its storage.
    Result { word: bool },
    /// An earlier operation, evaluated again here.
    Expr(Box<ContractExpr>),
}

impl ContractValue {
    /// Whether the value is one word (else it is passed as its storage).
    pub fn word(&self) -> bool {
        match self {
            ContractValue::Word(_) | ContractValue::Expr(_) => true,
            ContractValue::Slot { word, .. } | ContractValue::Result { word } => *word,
        }
    }
}

/// One contract operation: a step tick faulting at its ordinal (no
/// block), then its operands in order, then its node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContractExpr {
    /// The operation's ordinal in its expression.
    pub index: u32,
    /// Operands evaluated before the node (one-word values unless said).
    pub operands: Vec<ContractValue>,
    pub node: ContractNode,
}

/// What a contract operation computes from its operands (`a` is operand
/// 0, `b` operand 1); its result is one word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ContractNode {
    /// `a`.
    Copy,
    /// `a == 0`.
    Not,
    /// A word operation of the numeric model (`b` is zero when absent); a
    /// checked one faults with the model's kind at no site.
    Arith {
        op: Arith,
        kind: ScalarKind,
        profile: NumericProfile,
    },
    /// `a <op> b`, signed or unsigned.
    Compare { op: Compare, signed: bool },
    /// `and` (`or: false`): `a == 0` gives 0, else `rest`; `or`: `a != 0`
    /// gives 1, else `rest` (evaluated only then).
    Short { or: bool, rest: Box<ContractValue> },
    /// Field `ordinal` of the value at `path` (a slot's binding, through
    /// its loan); a tag fault at no site when the field is absent.
    Field { path: usize, ordinal: u32 },
    /// A pure call of `callee` with the operands as its slots (`loan`:
    /// slot 0 is instead a synchronous shared loan of that path's
    /// storage); the callee's fault leaves the frame.
    Call { callee: At, loan: Option<usize> },
    /// The length of the bytes `a` holds.
    ByteLen(ContractBytes),
    /// The byte at index `b` of the bytes `a` holds; a bounds fault at the
    /// operation (no block) past the end.
    ByteAt(ContractBytes),
    /// The byte budget left.
    BytesLeft,
}

/// The kinds of [`ContractNode`], for coverage checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ContractKind {
    Copy,
    Not,
    Arith,
    Compare,
    Short,
    Field,
    Call,
    ByteLen,
    ByteAt,
    BytesLeft,
}

impl ContractKind {
    /// Every contract node kind.
    pub const ALL: [ContractKind; 10] = [
        ContractKind::Copy,
        ContractKind::Not,
        ContractKind::Arith,
        ContractKind::Compare,
        ContractKind::Short,
        ContractKind::Field,
        ContractKind::Call,
        ContractKind::ByteLen,
        ContractKind::ByteAt,
        ContractKind::BytesLeft,
    ];
}

impl ContractNode {
    /// The node's kind.
    pub fn kind(&self) -> ContractKind {
        match self {
            ContractNode::Copy => ContractKind::Copy,
            ContractNode::Not => ContractKind::Not,
            ContractNode::Arith { .. } => ContractKind::Arith,
            ContractNode::Compare { .. } => ContractKind::Compare,
            ContractNode::Short { .. } => ContractKind::Short,
            ContractNode::Field { .. } => ContractKind::Field,
            ContractNode::Call { .. } => ContractKind::Call,
            ContractNode::ByteLen(_) => ContractKind::ByteLen,
            ContractNode::ByteAt(_) => ContractKind::ByteAt,
            ContractNode::BytesLeft => ContractKind::BytesLeft,
        }
    }
}

impl ContractExpr {
    /// Every node kind of this expression tree (itself first).
    pub fn kinds(&self, out: &mut Vec<ContractKind>) {
        out.push(self.node.kind());
        let mut values: Vec<&ContractValue> = self.operands.iter().collect();
        if let ContractNode::Short { rest, .. } = &self.node {
            values.push(rest);
        }
        for v in values {
            if let ContractValue::Expr(e) = v {
                e.kinds(out);
            }
        }
    }
}

/// One requires or ensures clause: its root operation, and its fault
/// detail (`requires 0`) when the root is zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    pub root: ContractExpr,
    pub detail: String,
}

/// What contract lowering needs of the function.
pub(super) struct ContractScope<'p, 'r, 'm, L> {
    pub plan: &'p FunctionPlan<'r, 'm>,
    /// The receiver takes a runtime slot.
    pub bound: bool,
    /// Whether a callee is part of the lowered set.
    pub lowered: L,
}

impl<L: Fn(At) -> bool> ContractScope<'_, '_, '_, L> {
    /// Lowers clause `e` (`result`: an ensures clause, which reads the
    /// result).
    pub fn clause(&self, e: &Expr, result: bool, detail: String) -> Result<Clause, Refusal> {
        let root = e.ops.len().saturating_sub(1);
        Ok(Clause {
            root: self.expr(e, root, result)?,
            detail,
        })
    }

    fn refuse(&self, msg: &str) -> Refusal {
        self.plan.refuse(None, None, msg)
    }

    fn value(&self, e: &Expr, o: &ContractOperand, result: bool) -> Result<ContractValue, Refusal> {
        let plan = self.plan;
        Ok(match o {
            ContractOperand::Const(c) => ContractValue::Word(canon(c.kind, c.bits)),
            ContractOperand::Receiver | ContractOperand::Param(_) => {
                let slot = match o {
                    ContractOperand::Param(k) => *k as usize + usize::from(self.bound),
                    _ => 0,
                };
                match plan.frame.slots.get(slot).copied().flatten() {
                    Some(pi) => ContractValue::Slot {
                        path: pi,
                        word: is_word(&plan.f.body.paths[pi].ty) && !plan.frame.paths[pi].borrowed,
                    },
                    None => ContractValue::Word(0),
                }
            }
            ContractOperand::Result if result => ContractValue::Result {
                word: is_word(&plan.f.result),
            },
            ContractOperand::Result => ContractValue::Word(0),
            ContractOperand::Value(i) => {
                ContractValue::Expr(Box::new(self.expr(e, *i as usize, result)?))
            }
        })
    }

    fn expr(&self, e: &Expr, i: usize, result: bool) -> Result<ContractExpr, Refusal> {
        let plan = self.plan;
        let op = e
            .ops
            .get(i)
            .ok_or_else(|| self.refuse("contract operand order"))?;
        let index = i as u32;
        if matches!(op.tag, 23 | 24) {
            let (Some(a), Some(c)) = (op.operands.first(), op.operands.get(1)) else {
                return Err(self.refuse("contract operands"));
            };
            let a = self.value(e, a, result)?;
            let rest = Box::new(self.value(e, c, result)?);
            return Ok(ContractExpr {
                index,
                operands: vec![a],
                node: ContractNode::Short {
                    or: op.tag == 24,
                    rest,
                },
            });
        }
        // A field copy reads its binding directly (no operand evaluation).
        let mut operands = Vec::new();
        if op.tag != 1 {
            for o in &op.operands {
                operands.push(self.value(e, o, result)?);
            }
        }
        let kind = plan.contract_kind(op)?;
        let need = |n: usize| {
            if operands.len() < n {
                Err(self.refuse("contract operands"))
            } else {
                Ok(())
            }
        };
        let node = match op.tag {
            0 => {
                need(1)?;
                ContractNode::Copy
            }
            4 => {
                need(1)?;
                ContractNode::Not
            }
            5 | 7..=16 => {
                need(1)?;
                let op = Arith::of_tag(plan.contract_flow_tag(op)?)
                    .ok_or_else(|| plan.contract_unlowered())?;
                ContractNode::Arith {
                    op,
                    kind,
                    profile: plan.r.profile_of(plan.at.0),
                }
            }
            17..=22 => {
                let (t, k) = plan.contract_compare(e, op)?;
                need(2)?;
                ContractNode::Compare {
                    op: Compare::of_tag(t).ok_or_else(|| self.refuse("contract comparison"))?,
                    signed: k.is_signed(),
                }
            }
            1 => {
                let (path, fld) = plan.contract_field(op, self.bound)?;
                ContractNode::Field {
                    path,
                    ordinal: fld.ordinal,
                }
            }
            3 if op.aux0 == 0 => {
                let (callee, binding) = plan.contract_callee(op, self.bound, &self.lowered)?;
                let loan = binding.filter(|&pi| !plan.frame.paths[pi].borrowed);
                // The callee's slots decide how each value is passed.
                let want = slot_types(plan, callee);
                let words = operands
                    .iter()
                    .enumerate()
                    .map(|(k, v)| v.word() && !(k == 0 && loan.is_some()));
                if want.len() != operands.len()
                    || want.iter().zip(words).any(|(t, w)| is_word(t) != w)
                {
                    return Err(self.refuse("contract call arguments"));
                }
                ContractNode::Call { callee, loan }
            }
            3 if op.aux0 == 1 => {
                let (sel, bytes) = plan.contract_catalog(op)?;
                let bytes = bytes.unwrap_or(ContractBytes::Slice);
                match sel {
                    8 => ContractNode::BytesLeft,
                    2 | 10 => {
                        need(2)?;
                        ContractNode::ByteAt(bytes)
                    }
                    _ => {
                        need(1)?;
                        ContractNode::ByteLen(bytes)
                    }
                }
            }
            _ => return Err(plan.contract_unlowered()),
        };
        Ok(ContractExpr {
            index,
            operands,
            node,
        })
    }
}

/// The runtime slots' types of `at`: its receiver binding, then its
/// parameters in ordinal order.
fn slot_types(plan: &FunctionPlan<'_, '_>, at: At) -> Vec<Type> {
    let r = plan.r;
    let f = crate::materialize::c::walk::function(r, at);
    let mut v: Vec<Type> = Vec::new();
    if !matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None)
        && let Some(t) = crate::catalog::receiver_type(&r.self_type(at.0), f.receiver)
    {
        v.push(t);
    }
    let mut ps: Vec<&Param> = f.params.iter().collect();
    ps.sort_by_key(|p| p.ordinal);
    v.extend(ps.iter().map(|p| p.ty.clone()));
    v
}
