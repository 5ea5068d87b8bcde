//! The lowered form both native printers consume (C0-EXEC-002): each flow
//! operation of a checked function, decided once into a target-independent
//! [`Inst`] (which operand values it reads and takes out of custody, where
//! its result lives, which checks run and where they fault, which cleanup
//! recipes run on each edge, which function a call reaches). The portable
//! C printer (`materialize::c`) and the LLVM printer (`zlm_llvm::func`)
//! translate these instructions into their own language and take no
//! decision of their own for a migrated operation family.
//!
//! Every flow operation a printer prints goes through this form
//! ([`migrated`] names their tags), and so do the requires/ensures
//! clauses ([`Clause`]); a printer reads no source operation (see
//! docs/zlm/c-materializer.md, "One lowering"). A test
//! (`zlm/tests/lowered_form.rs`) fails when a printer names an operation
//! tag or reads a source operation, and when a lowered instruction or
//! contract node kind never occurs in the generated corpus.
//!
//! The form is made from the shared frame plan ([`FunctionPlan`]: paths,
//! temporaries, slots and recorded edges, from the checker's `Resolved`
//! proof) and never re-verifies the module; a refusal is recorded at its
//! operation, so each printer reports the first refusal in its own
//! traversal order, exactly as before.

mod bytes;
mod contract;
mod heading;
mod inst;
mod word;

pub use contract::{Clause, ContractExpr, ContractKind, ContractNode, ContractValue};
pub use heading::heading_lines;
pub use inst::{
    ArithInst, BranchInst, ByteArg, ByteArray, ByteOp, ByteSource, ByteView, CallInst, CompareInst,
    Dest, Edge, EdgeDrop, Inst, IsVariantInst, Kind, Loan, ReplaceInst, Site, SliceInst, Subject,
    Take, Value,
};
pub use word::{Arith, Compare};

use inst::{take, value};

use super::c::Refusal;
use super::c::plan::{FunctionPlan, PlaceRole, word_only};
use super::c::types::{Shape, Types, is_word};
use super::c::walk::{ARM_FALSE, ARM_JUMP, ARM_RETURN, ARM_TRUE, ARM_TRY, At, ends_segment};
use crate::model::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Whether operation tag `t` goes through the lowered form (its family is
/// migrated): the word family (constants, local loads, unit, arithmetic,
/// bit operations, comparisons, Bool negation, assertions), control
/// (jump, branch, return with their cleanup edges), calls, and local
/// storage (stores into a root, moves and drops of a place), and
/// constructors (enum constants, variants, records, Result carriers), and
/// place reads (variant tests, field copies and moves, shared and
/// exclusive loans), tries, and the bytes facade (slice windows, catalog
/// intrinsics, the builder relabel) and replacement.
pub fn migrated(t: u32) -> bool {
    matches!(
        t,
        tag::BORROW_SLICE_BYTE
            | tag::INTRINSIC_CALL
            | tag::BYTE_BUILDER_FINISH
            | tag::REPLACE_COMMIT
            | tag::RESULT_TRY
            | tag::RESULT_TRY_RICH
            | tag::ENUM_IS_VARIANT
            | tag::FIELD_COPY
            | tag::FIELD_MOVE
            | tag::BORROW_SHARED
            | tag::BORROW_MUT
            | tag::ENUM_CONST
            | tag::VARIANT_CONSTRUCT
            | tag::AGGREGATE_CONSTRUCT
            | tag::RESULT_OK_RICH
            | tag::RESULT_ERR_RICH
            | tag::STORE_LOCAL
            | tag::PLACE_MOVE
            | tag::PLACE_DROP
            | tag::CONST
            | tag::LOAD_LOCAL
            | tag::UNIT_VALUE
            | tag::NEG
            | tag::ADD
            | tag::SUB
            | tag::MUL
            | tag::DIV
            | tag::REM
            | tag::SHIFT_LEFT
            | tag::SHIFT_RIGHT
            | tag::BIT_AND
            | tag::BIT_OR
            | tag::BIT_XOR
            | tag::EQ
            | tag::NE
            | tag::LT
            | tag::LE
            | tag::GT
            | tag::GE
            | tag::NOT_BOOL
            | tag::ASSERT_TRUE
            | tag::ASSERT_EQ
            | tag::JUMP
            | tag::JUMP_IF_FALSE
            | tag::RETURN
            | tag::CALL
    )
}

/// One lowered flow operation: its instruction, and the owner temporary
/// its result enters custody as afterwards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lowered {
    pub inst: Inst,
    pub custody: Option<usize>,
}

/// The lowered form of one function: each flow operation at (block,
/// ordinal), and each requires and ensures clause, or the refusal decided
/// there (each printer reports the first one in its own traversal order).
pub struct LoweredFunction {
    ops: BTreeMap<(u32, u32), Result<Lowered, Refusal>>,
    requires: Vec<Result<Clause, Refusal>>,
    ensures: Vec<Result<Clause, Refusal>>,
    escaping: BTreeSet<(u32, u32)>,
}

impl LoweredFunction {
    /// Lowers every operation and clause of the planned function over the
    /// unit's type table `types`; `lowered` says whether a callee is part
    /// of the lowered set.
    pub fn of(plan: &FunctionPlan<'_, '_>, types: &Types, lowered: impl Fn(At) -> bool) -> Self {
        let mut ops = BTreeMap::new();
        for block in &plan.frame.blocks {
            for (j, op) in block.ops.iter().enumerate() {
                let j = j as u32;
                ops.insert((block.id, j), lower(plan, types, block.id, j, op, &lowered));
            }
        }
        let f = plan.f;
        let bound = !matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None)
            && crate::catalog::receiver_type(&plan.r.self_type(plan.at.0), f.receiver).is_some();
        let scope = contract::ContractScope {
            plan,
            bound,
            lowered: &lowered,
        };
        let clauses = |es: &[Expr], result: bool, what: &str| {
            es.iter()
                .enumerate()
                .map(|(i, e)| scope.clause(e, result, format!("{what} {i}")))
                .collect()
        };
        let escaping = escaping(plan, &ops);
        LoweredFunction {
            ops,
            requires: clauses(&f.requires, false, "requires"),
            ensures: clauses(&f.ensures, true, "ensures"),
            escaping,
        }
    }

    /// The flow values (block, ordinal) read outside their own step
    /// segment, and every call's result: a printer that keeps a segment's
    /// word values in registers must give these storage.
    pub fn escaping(&self) -> &BTreeSet<(u32, u32)> {
        &self.escaping
    }

    /// The lowered operation at (block, ordinal); `None` for an ordinal
    /// outside the planned blocks.
    pub fn at(&self, b: u32, j: u32) -> Option<Result<Lowered, Refusal>> {
        self.ops.get(&(b, j)).cloned()
    }

    /// The requires clauses, in order.
    pub fn requires(&self) -> &[Result<Clause, Refusal>] {
        &self.requires
    }

    /// The ensures clauses, in order.
    pub fn ensures(&self) -> &[Result<Clause, Refusal>] {
        &self.ensures
    }

    /// Every contract node kind of the lowered clauses.
    pub fn contract_kinds(&self) -> Vec<ContractKind> {
        let mut out = Vec::new();
        for c in self.requires.iter().chain(&self.ensures).flatten() {
            c.root.kinds(&mut out);
        }
        out
    }

    /// Whether the operation at (block, ordinal) lowers to a call.
    pub fn is_call(&self, b: u32, j: u32) -> bool {
        matches!(self.ops.get(&(b, j)), Some(Ok(l)) if l.inst.kind() == Kind::Call)
    }

    /// Every lowered instruction, in (block, ordinal) order.
    pub fn insts(&self) -> impl Iterator<Item = &Inst> {
        self.ops
            .values()
            .filter_map(|l| l.as_ref().ok().map(|l| &l.inst))
    }
}

/// The flow values read outside their own step segment, and call results.
fn escaping(
    plan: &FunctionPlan<'_, '_>,
    ops: &BTreeMap<(u32, u32), Result<Lowered, Refusal>>,
) -> BTreeSet<(u32, u32)> {
    let mut out = BTreeSet::new();
    let mut seg: HashMap<(u32, u32), (u32, usize)> = HashMap::new();
    for block in &plan.frame.blocks {
        let mut k = 0;
        for (j, op) in block.ops.iter().enumerate() {
            let at = (block.id, j as u32);
            seg.insert(at, (block.id, k));
            if matches!(ops.get(&at), Some(Ok(l)) if l.inst.kind() == Kind::Call) {
                out.insert(at);
            }
            if ends_segment(op.tag) {
                k += 1;
            }
        }
    }
    for block in &plan.frame.blocks {
        for (j, op) in block.ops.iter().enumerate() {
            let here = seg.get(&(block.id, j as u32));
            for o in &op.operands {
                if let Operand::Value(OpRef::Flow { block: ob, ordinal }) = o
                    && seg.get(&(*ob, *ordinal)) != here
                {
                    out.insert((*ob, *ordinal));
                }
            }
        }
    }
    out
}

/// The drops of the recorded edge of `(b, arm, try op)`.
fn drops(
    plan: &FunctionPlan<'_, '_>,
    b: u32,
    arm: u8,
    try_op: u32,
) -> Result<Vec<EdgeDrop>, Refusal> {
    Ok(plan
        .recipe_drops(b, arm, try_op)?
        .into_iter()
        .map(|(recipe, path)| EdgeDrop { recipe, path })
        .collect())
}

fn lower(
    plan: &FunctionPlan<'_, '_>,
    types: &Types,
    b: u32,
    j: u32,
    op: &Op,
    lowered: &impl Fn(At) -> bool,
) -> Result<Lowered, Refusal> {
    let no = |msg: &str| plan.refuse(Some(b), Some(j), msg);
    if word_only(op.tag) {
        plan.check_word_operands(op, b, j)?;
    }
    let operand = |k: usize| plan.operand_at(op, k, b, j);
    let word = |k: usize| plan.operand_value(op, k, b, j);
    let site = Site { block: b, op: j };
    let custody = match plan.frame.temps.get(&(b, j)) {
        // The builder relabel takes over the builder's custody position.
        Some(_) if op.tag == tag::BYTE_BUILDER_FINISH => None,
        Some(&t) if op.result.is_some() => Some(t),
        _ => None,
    };
    let dst = match custody {
        Some(t) => Dest::Owner(t),
        None => Dest::Flow(b, j),
    };
    let inst = match op.tag {
        tag::CONST | tag::LOAD_LOCAL => {
            let ty = op.result.clone().unwrap_or(Type::Unit);
            let src = operand(0)?;
            let src = if op.tag == tag::CONST {
                Take {
                    value: value(plan, src, b, j)?,
                    word: true,
                    release: None,
                }
            } else {
                Take {
                    release: None,
                    ..take(plan, src, b, j)?
                }
            };
            Inst::Copy { dst, src, ty }
        }
        tag::UNIT_VALUE => Inst::Unit { dst },
        t if Arith::of_tag(t).is_some() => {
            let Some(Type::Scalar(kind)) = &op.result else {
                return Err(no(
                    if t == tag::BIT_AND || t == tag::BIT_OR || t == tag::BIT_XOR {
                        "bit operation without a scalar result"
                    } else {
                        "arithmetic without a scalar result"
                    },
                ));
            };
            let arith = Arith::of_tag(t).ok_or_else(|| no("arithmetic tag"))?;
            let a = word(0)?;
            let bv = if arith == Arith::Neg {
                Value::Word(0)
            } else {
                word(1)?
            };
            Inst::Arith(ArithInst {
                dst,
                op: arith,
                kind: *kind,
                profile: plan.r.profile_of(plan.at.0),
                a,
                b: bv,
                site,
            })
        }
        t if Compare::of_tag(t).is_some() => {
            let kind = crate::interp::operand_kind(plan.f, &plan.frame.blocks, op)
                .unwrap_or(ScalarKind::UInt64);
            Inst::Compare(CompareInst {
                dst,
                op: Compare::of_tag(t).ok_or_else(|| no("comparison tag"))?,
                signed: kind.is_signed(),
                a: word(0)?,
                b: word(1)?,
            })
        }
        tag::NOT_BOOL => Inst::Not { dst, a: word(0)? },
        tag::ASSERT_TRUE => Inst::AssertTrue { a: word(0)?, site },
        tag::ASSERT_EQ => Inst::AssertEq {
            a: word(0)?,
            b: word(1)?,
            site,
        },
        tag::JUMP => {
            let Some(Operand::Block(t)) = op.operands.first() else {
                return Err(no("jump target"));
            };
            Inst::Jump {
                edge: Edge {
                    target: *t,
                    drops: drops(plan, b, ARM_JUMP, 0)?,
                },
            }
        }
        tag::JUMP_IF_FALSE => {
            let Some(Operand::Block(t)) = op.operands.get(1) else {
                return Err(no("branch target"));
            };
            let cond = word(0)?;
            Inst::Branch(BranchInst {
                cond,
                on_true: Edge {
                    target: b + 1,
                    drops: drops(plan, b, ARM_TRUE, 0)?,
                },
                on_false: Edge {
                    target: *t,
                    drops: drops(plan, b, ARM_FALSE, 0)?,
                },
            })
        }
        tag::RETURN => {
            let value = plan.operand_take(op, 0, b, j)?;
            Inst::Return {
                value,
                drops: drops(plan, b, ARM_RETURN, 0)?,
            }
        }
        tag::CALL => {
            let callee = plan.callee(op, b, j, lowered)?;
            let mut args = Vec::new();
            for o in &op.operands {
                args.push(take(plan, o, b, j)?);
            }
            Inst::Call(CallInst {
                dst,
                callee,
                args,
                site,
            })
        }
        tag::STORE_LOCAL => {
            let pi = plan.place_at(op, 0, b, j)?;
            if !plan.f.body.paths[pi].key.fields.is_empty() {
                return Err(no("a store into a field path"));
            }
            let value = plan.operand_take(op, 1, b, j)?;
            let role = PlaceRole::of(&plan.frame.paths[pi]);
            Inst::Store {
                path: pi,
                value,
                ty: plan.f.body.paths[pi].ty.clone(),
                flag: role.agg,
                custody: role.owner,
                site,
            }
        }
        tag::PLACE_MOVE => {
            let pi = plan.place_at(op, 0, b, j)?;
            let path = &plan.frame.paths[pi];
            if path.borrowed {
                return Err(no("a move through a loan"));
            }
            // A non-word root in this frame's storage has its own flag
            // and custody position.
            let own_root = path.agg && path.steps.is_empty();
            Inst::Move {
                dst,
                path: pi,
                ty: plan.f.body.paths[pi].ty.clone(),
                release: path.owner || own_root,
            }
        }
        tag::PLACE_DROP => {
            let pi = plan.place_at(op, 0, b, j)?;
            if plan.frame.paths[pi].borrowed {
                return Err(no("a drop through a loan"));
            }
            Inst::Drop { path: pi }
        }
        tag::ENUM_CONST | tag::VARIANT_CONSTRUCT => {
            let (vi, var) = plan.variant_built(types, op, b, j)?;
            let built = op.tag == tag::VARIANT_CONSTRUCT;
            let mut ftys: Vec<&Field> = var.fields.iter().collect();
            ftys.sort_by_key(|f| f.ordinal);
            let mut fields = Vec::new();
            if built {
                for (k, o) in op.operands.iter().enumerate() {
                    let t = ftys.get(k).map(|f| f.ty.clone()).unwrap_or(Type::Unit);
                    fields.push((take(plan, o, b, j)?, t));
                }
            }
            Inst::Variant {
                dst,
                ty: op.result.clone().unwrap_or(Type::Unit),
                variant: vi,
                tag: var.tag,
                built,
                fields,
            }
        }
        tag::AGGREGATE_CONSTRUCT => {
            let slots = plan.aggregate_fields(types, op, b, j)?;
            let tys: Vec<Type> = slots.iter().map(|f| f.ty.clone()).collect();
            let mut fields = Vec::new();
            for (o, t) in op.operands.iter().zip(tys) {
                fields.push((take(plan, o, b, j)?, t));
            }
            Inst::Record {
                dst,
                ty: op.result.clone().unwrap_or(Type::Unit),
                fields,
            }
        }
        tag::RESULT_OK_RICH | tag::RESULT_ERR_RICH => {
            let ty = op.result.clone().unwrap_or(Type::Unit);
            let Some(Shape::Result(ok, err_ty)) = types.shape(&ty) else {
                return Err(no("carrier of a non-Result type"));
            };
            let err = op.tag == tag::RESULT_ERR_RICH;
            let payload = if err { err_ty.clone() } else { ok.clone() };
            let ok = ok.clone();
            Inst::Carrier {
                dst,
                value: plan.operand_take(op, 0, b, j)?,
                ty,
                ok,
                err,
                payload,
            }
        }
        tag::ENUM_IS_VARIANT => {
            let want = plan.variant_tested(types, op, b, j)?;
            let subject = match operand(0)? {
                Operand::Place(k) => Subject::Place(plan.path_of(k, b, j)?),
                o => Subject::Value(value(plan, o, b, j)?),
            };
            Inst::IsVariant(IsVariantInst {
                dst,
                subject,
                tag: want,
                site,
            })
        }
        tag::FIELD_COPY | tag::FIELD_MOVE => {
            let (d, variant, fld) = plan.field_of(op, b, j)?;
            let pi = plan.place_at(op, 0, b, j)?;
            if is_word(&plan.f.body.paths[pi].ty) {
                return Err(no("field of a word"));
            }
            let variant = variant.map(|vi| (vi, plan.r.module.declarations[d].variants[vi].tag));
            Inst::Field {
                dst,
                path: pi,
                variant,
                ordinal: fld.ordinal,
                ty: fld.ty.clone(),
                take: op.tag == tag::FIELD_MOVE,
                site,
            }
        }
        tag::BORROW_SHARED | tag::BORROW_MUT => {
            let source = match operand(0)? {
                Operand::Place(k) => {
                    let pi = plan.path_of(k, b, j)?;
                    if plan.f.body.paths[pi].ty == Type::SliceByte {
                        Loan::SliceView(pi)
                    } else {
                        Loan::Place(pi)
                    }
                }
                o => Loan::Value(Take {
                    release: None,
                    ..take(plan, o, b, j)?
                }),
            };
            Inst::Borrow {
                dst,
                ty: op.result.clone().unwrap_or(Type::Unit),
                source,
            }
        }
        tag::RESULT_TRY | tag::RESULT_TRY_RICH => {
            let value = plan.operand_take(op, 0, b, j)?;
            let (ok, err, result_ok) = plan.try_carriers(types, op, b, j)?;
            Inst::Try {
                dst,
                value,
                ok,
                err,
                result_ok,
                drops: drops(plan, b, ARM_TRY, j)?,
                site,
            }
        }
        tag::BORROW_SLICE_BYTE => bytes::slice(plan, types, op, dst, site)?,
        tag::INTRINSIC_CALL => bytes::intrinsic(plan, types, op, dst, site)?,
        tag::BYTE_BUILDER_FINISH => bytes::finish(plan, types, op, site)?,
        tag::REPLACE_COMMIT => bytes::replace(plan, op, site)?,
        t => return Err(plan.unlowered(t, b, j)),
    };
    Ok(Lowered { inst, custody })
}
