//! The per-function decisions both native printers take from the checked
//! IR, made once here (the C printer in `lower.rs`, the LLVM printer in
//! `zlm_llvm::func`): which operations are word operations, the type of an
//! operand, which owned path a place names, the owner temporary an operand
//! takes out of custody, each cleanup edge's drops, the step segments of a
//! block and what each segment's check must cover, the callee of a call,
//! the field or variant an operation names, the carrier types of a try,
//! the record a constructor fills, the layouts a builder relabels, and the
//! binding, field and callee of each contract operation. A printer only
//! spells these decisions in its own language; a refusal is decided here
//! with the same message for both.

use super::types::{Shape, Slot, Types, is_word};
use super::unit::Refusal;
use super::walk::{At, Frame, ends_segment, refuse};
use crate::check::Resolved;
use crate::model::*;
use std::collections::BTreeMap;

/// Operations whose operands are all one canonical word (arithmetic,
/// comparisons, Bool negation, assertions and the branch condition).
pub fn word_only(t: u32) -> bool {
    matches!(
        t,
        tag::CONST
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
            | tag::JUMP_IF_FALSE
    )
}

/// Every type function `f` holds values of (parameters, the receiver's
/// binding, the result, owned paths, flow results): what a printer's type
/// table must lay out.
pub fn held_types<'a>(f: &'a Function, receiver: Option<&'a Type>) -> Vec<&'a Type> {
    let mut tys: Vec<&Type> = f.params.iter().map(|p| &p.ty).collect();
    tys.extend(receiver);
    tys.push(&f.result);
    tys.extend(f.body.paths.iter().map(|p| &p.ty));
    for b in &f.body.blocks {
        tys.extend(b.ops.iter().filter_map(|o| o.result.as_ref()));
    }
    tys
}

/// Where a BORROW_SLICE_BYTE finds its array.
pub enum SliceSource {
    /// The owned path of a place.
    Place(usize),
    /// A loan value (Ref/Mut, operand 0).
    Loan,
}

/// The array a BORROW_SLICE_BYTE views.
pub struct SliceView {
    pub source: SliceSource,
    /// The type holding the array: `Array<Byte>` itself, or a Bytes
    /// facade record whose field 0 is the array.
    pub holder: Type,
}

impl SliceView {
    /// Whether the holder is the array itself.
    pub fn direct(&self) -> bool {
        self.holder == Type::ArrayByte
    }
}

/// What both printers know of an owned path's role in the frame.
#[derive(Clone, Debug)]
pub struct PlaceRole {
    /// Non-word value held in this frame's own storage.
    pub agg: bool,
    /// Below (or at) a root bound to a loan.
    pub borrowed: bool,
    /// An owner root in custody (the interpreter's `owner`).
    pub owner: bool,
    /// Drop-log name (`l1.right`).
    pub name: String,
}

impl PlaceRole {
    pub fn of(plan: &super::walk::PathPlan<'_>) -> Self {
        PlaceRole {
            agg: plan.agg && !plan.borrowed,
            borrowed: plan.borrowed,
            owner: plan.owner,
            name: plan.name.clone(),
        }
    }
}

/// How the receiver binding of a catalog pure call in a contract holds
/// its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContractBytes {
    /// A `Ref`/`Mut` loan of an `Array<Byte>` (the binding is its address).
    ArrayLoan,
    /// A `Slice<Byte>` (the binding is the window itself).
    Slice,
}

/// One step segment of a block: its operations (ordinal, operation).
pub type Segment<'m> = Vec<(u32, &'m Op)>;

/// A block cut into step segments, each ending after a call or a try.
pub fn segments(block: &Block) -> Vec<Segment<'_>> {
    let mut segs: Vec<Segment<'_>> = vec![Vec::new()];
    for (j, op) in block.ops.iter().enumerate() {
        if let Some(last) = segs.last_mut() {
            last.push((j as u32, op));
        }
        if ends_segment(op.tag) {
            segs.push(Vec::new());
        }
    }
    segs.retain(|s| !s.is_empty());
    segs
}

/// The steps segment `si` of block `b`'s `count` segments checks before it
/// runs: its own operations, plus for the last one the largest prepaid
/// successor's (`extra`, `walk::Prepaid::extra`).
pub fn segment_need(
    seg: &Segment<'_>,
    si: usize,
    count: usize,
    b: u32,
    extra: &BTreeMap<u32, usize>,
) -> usize {
    seg.len()
        + if si + 1 == count {
            extra.get(&b).copied().unwrap_or(0)
        } else {
            0
        }
}

/// The per-function decisions of one lowered function: its frame (paths,
/// temporaries, slots, edges) with the resolution tables it refers to.
pub struct FunctionPlan<'r, 'm> {
    pub r: &'r Resolved<'m>,
    pub at: At,
    pub f: &'m Function,
    pub frame: Frame<'m>,
}

impl<'r, 'm> FunctionPlan<'r, 'm> {
    pub fn new(r: &'r Resolved<'m>, at: At, frame: Frame<'m>) -> Self {
        let f = super::walk::function(r, at);
        FunctionPlan { r, at, f, frame }
    }

    /// A refusal at (block, operation) of this function.
    pub fn refuse(&self, b: Option<u32>, j: Option<u32>, msg: impl Into<String>) -> Refusal {
        refuse(self.r, self.at, b, j, msg)
    }

    fn no(&self, b: u32, j: u32, msg: &str) -> Refusal {
        self.refuse(Some(b), Some(j), msg)
    }

    /// The owned path a place names.
    pub fn path_of(&self, k: &PathKey, b: u32, j: u32) -> Result<usize, Refusal> {
        self.frame
            .path_ix
            .get(k)
            .copied()
            .ok_or_else(|| self.no(b, j, "place without an owned path"))
    }

    /// The owned path of operand `k` of `op`, which must be a place.
    pub fn place_at(&self, op: &Op, k: usize, b: u32, j: u32) -> Result<usize, Refusal> {
        match op.operands.get(k) {
            Some(Operand::Place(key)) => self.path_of(key, b, j),
            _ => Err(self.no(b, j, "place operand")),
        }
    }

    /// Operand `k` of `op`.
    pub fn operand_at<'o>(
        &self,
        op: &'o Op,
        k: usize,
        b: u32,
        j: u32,
    ) -> Result<&'o Operand, Refusal> {
        op.operands
            .get(k)
            .ok_or_else(|| self.no(b, j, "missing operand"))
    }

    /// The type an operand has.
    pub fn operand_type(&self, o: &Operand) -> Option<Type> {
        match o {
            Operand::Value(OpRef::Flow { block, ordinal }) => self
                .frame
                .blocks
                .get(*block as usize)
                .and_then(|b| b.ops.get(*ordinal as usize))
                .and_then(|o| o.result.clone()),
            Operand::Const(c) => Some(Type::Scalar(c.kind)),
            Operand::Place(k) => self
                .f
                .body
                .paths
                .iter()
                .find(|x| &x.key == k)
                .map(|x| x.ty.clone()),
            _ => None,
        }
    }

    /// Refuses a word operation with an operand that is not one word.
    pub fn check_word_operands(&self, op: &Op, b: u32, j: u32) -> Result<(), Refusal> {
        if word_only(op.tag)
            && op
                .operands
                .iter()
                .any(|o| self.operand_type(o).is_some_and(|t| !is_word(&t)))
        {
            return Err(self.no(b, j, "a word operation on a non-word operand"));
        }
        Ok(())
    }

    /// The owner temporary an operand names (it leaves custody when taken).
    pub fn temp_of(&self, o: &Operand) -> Option<usize> {
        match o {
            Operand::Value(OpRef::Flow { block, ordinal }) => {
                self.frame.temps.get(&(*block, *ordinal)).copied()
            }
            _ => None,
        }
    }

    /// The recorded edge of `(b, arm, try op)`.
    pub fn edge(&self, b: u32, arm: u8, try_op: u32) -> Result<&'m CleanupEdge, Refusal> {
        self.frame
            .edge_of
            .get(&(b, arm, try_op))
            .copied()
            .ok_or_else(|| self.refuse(Some(b), None, "terminator without an edge"))
    }

    /// Whether the edge of `(b, arm, try op)` drops anything.
    pub fn edge_drops(&self, b: u32, arm: u8, try_op: u32) -> bool {
        self.frame
            .edge_of
            .get(&(b, arm, try_op))
            .is_some_and(|e| !e.drops.is_empty())
    }

    /// The drops of the edge of `(b, arm, try op)`, in recipe order: (recipe
    /// index, owned path). Each ticks at (block, recipe index).
    pub fn recipe_drops(&self, b: u32, arm: u8, try_op: u32) -> Result<Vec<(u32, usize)>, Refusal> {
        let e = self.edge(b, arm, try_op)?;
        let mut out = Vec::new();
        for (ri, d) in e.drops.iter().enumerate() {
            let ri = ri as u32;
            let Some(Operand::Place(k)) = d.operands.first() else {
                return Err(self.no(b, ri, "cleanup recipe operand"));
            };
            let pi = self.path_of(k, b, ri)?;
            if self.frame.paths[pi].borrowed {
                return Err(self.no(b, ri, "a recipe drop through a loan"));
            }
            out.push((ri, pi));
        }
        Ok(out)
    }

    /// The function a CALL names, in this unit (`lowered` says whether a
    /// function is part of the lowered set).
    pub fn callee(
        &self,
        op: &Op,
        b: u32,
        j: u32,
        lowered: impl Fn(At) -> bool,
    ) -> Result<At, Refusal> {
        let Aux::Func(sig) = &op.aux0 else {
            return Err(self.no(b, j, "call without a callee"));
        };
        let Some(&callee) = self.r.funcs.get(sig) else {
            return Err(self.no(b, j, "calls into other modules"));
        };
        if !lowered(callee) {
            return Err(self.no(b, j, "callee outside the lowered set"));
        }
        Ok(callee)
    }

    /// The (declaration, variant) an ENUM_CONST, VARIANT_CONSTRUCT or
    /// ENUM_IS_VARIANT names.
    pub fn variant_of(&self, op: &Op, b: u32, j: u32) -> Result<(usize, usize), Refusal> {
        let Aux::Variant(v) = &op.aux0 else {
            return Err(self.no(b, j, "variant without its identity"));
        };
        self.r
            .variants
            .get(v)
            .copied()
            .ok_or_else(|| self.no(b, j, "variant of another module"))
    }

    /// The variant an ENUM_CONST or VARIANT_CONSTRUCT builds: (variant
    /// index, the variant), refused unless the result is an enum and a
    /// constructor has one operand per payload field.
    pub fn variant_built(
        &self,
        types: &Types,
        op: &Op,
        b: u32,
        j: u32,
    ) -> Result<(usize, &'m Variant), Refusal> {
        let (d, vi) = self.variant_of(op, b, j)?;
        let var = &self.r.module.declarations[d].variants[vi];
        if !matches!(
            op.result.as_ref().and_then(|t| types.shape(t)),
            Some(Shape::Variants { .. })
        ) {
            return Err(self.no(b, j, "variant of a non-enum type"));
        }
        if op.tag == tag::VARIANT_CONSTRUCT && op.operands.len() != var.fields.len() {
            return Err(self.no(b, j, "variant field count"));
        }
        Ok((vi, var))
    }

    /// The tag an ENUM_IS_VARIANT tests, refused unless its subject is an
    /// enum.
    pub fn variant_tested(&self, types: &Types, op: &Op, b: u32, j: u32) -> Result<u32, Refusal> {
        let (d, vi) = self.variant_of(op, b, j)?;
        let want = self.r.module.declarations[d].variants[vi].tag;
        let ty = self.operand_type(self.operand_at(op, 0, b, j)?);
        if !matches!(
            ty.as_ref().and_then(|t| types.shape(t)),
            Some(Shape::Variants { .. })
        ) {
            return Err(self.no(b, j, "variant test of a non-enum value"));
        }
        Ok(want)
    }

    /// The field a FIELD_COPY or FIELD_MOVE names: (declaration, variant,
    /// field).
    pub fn field_of(
        &self,
        op: &Op,
        b: u32,
        j: u32,
    ) -> Result<(usize, Option<usize>, &'m Field), Refusal> {
        let Aux::Field(fid) = &op.aux0 else {
            return Err(self.no(b, j, "field without its identity"));
        };
        self.r
            .field(fid)
            .ok_or_else(|| self.no(b, j, "field of another module"))
    }

    /// The record an AGGREGATE_CONSTRUCT fills: its fields, one operand per
    /// field in ordinal order.
    pub fn aggregate_fields<'t>(
        &self,
        types: &'t Types,
        op: &Op,
        b: u32,
        j: u32,
    ) -> Result<&'t [Slot], Refusal> {
        let Some(Shape::Record { fields, .. }) = op.result.as_ref().and_then(|t| types.shape(t))
        else {
            return Err(self.no(b, j, "aggregate of a non-record type"));
        };
        if op.operands.len() != fields.len()
            || fields
                .iter()
                .enumerate()
                .any(|(k, f)| f.ordinal as usize != k)
        {
            return Err(self.no(b, j, "aggregate field count"));
        }
        Ok(fields)
    }

    /// The carriers of a RESULT_TRY/RESULT_TRY_RICH: (operand's Ok type,
    /// error type, the function's Ok type).
    pub fn try_carriers(
        &self,
        types: &Types,
        op: &Op,
        b: u32,
        j: u32,
    ) -> Result<(Type, Type, Type), Refusal> {
        let from = self.operand_at(op, 0, b, j).map(|o| self.operand_type(o))?;
        let (Some(Shape::Result(ok1, e1)), Some(Shape::Result(ok2, e2))) = (
            from.as_ref().and_then(|t| types.shape(t)),
            types.shape(&self.f.result),
        ) else {
            return Err(self.no(b, j, "try outside Result carriers"));
        };
        if e1 != e2 {
            return Err(self.no(b, j, "try between different error types"));
        }
        Ok((ok1.clone(), e1.clone(), ok2.clone()))
    }

    /// BYTE_BUILDER_FINISH: (builder path, result temporary, the builder's
    /// fields), refused unless both records have the same layout.
    pub fn builder_finish<'t>(
        &self,
        types: &'t Types,
        op: &Op,
        b: u32,
        j: u32,
    ) -> Result<(usize, usize, &'t [Slot]), Refusal> {
        let pi = self.place_at(op, 0, b, j)?;
        let Some(&t) = self.frame.temps.get(&(b, j)) else {
            return Err(self.no(b, j, "builder finish without its result path"));
        };
        let (from, to) = (&self.f.body.paths[pi].ty, &self.f.body.paths[t].ty);
        let (Some(Shape::Record { fields: a, .. }), Some(Shape::Record { fields: c, .. })) =
            (types.shape(from), types.shape(to))
        else {
            return Err(self.no(b, j, "builder finish between different layouts"));
        };
        let same = a.len() == c.len()
            && a.iter()
                .zip(c)
                .all(|(x, y)| x.ordinal == y.ordinal && x.ty == y.ty);
        let plan = &self.frame.paths[pi];
        if !same || !plan.agg || plan.borrowed {
            return Err(self.no(b, j, "builder finish between different layouts"));
        }
        Ok((pi, t, a))
    }

    /// The operand types an INTRINSIC_CALL sees, and which operands are an
    /// `Array<Byte>` place (an owned array, or the target of a Ref/Mut
    /// parameter or receiver): the intrinsic takes such a place by address,
    /// exactly as a `Ref`/`Mut` loan of it, so its type reads as that loan.
    pub fn intrinsic_operands(&self, op: &Op) -> Vec<(Option<Type>, Option<usize>)> {
        op.operands
            .iter()
            .map(|o| {
                let t = self.operand_type(o);
                match (o, &t) {
                    (Operand::Place(k), Some(Type::ArrayByte)) => match self.frame.path_ix.get(k) {
                        Some(&pi) => (Some(Type::Ref(Box::new(Type::ArrayByte))), Some(pi)),
                        None => (t, None),
                    },
                    _ => (t, None),
                }
            })
            .collect()
    }

    /// The array a BORROW_SLICE_BYTE views.
    pub fn slice_view(&self, types: &Types, op: &Op, b: u32, j: u32) -> Result<SliceView, Refusal> {
        let o = self.operand_at(op, 0, b, j)?;
        let (source, holder) = match o {
            Operand::Place(k) => {
                let pi = self.path_of(k, b, j)?;
                (SliceSource::Place(pi), self.f.body.paths[pi].ty.clone())
            }
            o => match self.operand_type(o) {
                Some(Type::Ref(t) | Type::Mut(t)) => (SliceSource::Loan, *t),
                _ => return Err(self.no(b, j, "slice of a non-loan value")),
            },
        };
        match (&holder, types.shape(&holder)) {
            (Type::ArrayByte, _) => {}
            (_, Some(Shape::Record { fields, .. }))
                if fields
                    .first()
                    .is_some_and(|f| f.ordinal == 0 && f.ty == Type::ArrayByte) => {}
            _ => return Err(self.no(b, j, "slice of a non-byte value")),
        }
        Ok(SliceView { source, holder })
    }

    /// Runtime slots before the parameters (one for a runtime receiver).
    pub fn recv_slots(&self, receiver_bound: bool) -> usize {
        usize::from(receiver_bound)
    }

    /// The path of a contract operand naming a receiver or parameter slot.
    pub fn contract_slot_path(&self, o: &ContractOperand, receiver_bound: bool) -> Option<usize> {
        let slot = match o {
            ContractOperand::Receiver => 0,
            ContractOperand::Param(k) => *k as usize + self.recv_slots(receiver_bound),
            _ => return None,
        };
        self.frame.slots.get(slot).copied().flatten()
    }

    fn contract_refusal(&self, msg: &str) -> Refusal {
        self.refuse(None, None, msg)
    }

    /// The refusal of an operation no printer lowers.
    pub fn unlowered(&self, t: u32, b: u32, j: u32) -> Refusal {
        self.refuse(
            Some(b),
            Some(j),
            format!(
                "operation {} is not lowered yet",
                tag::name(t).unwrap_or("?")
            ),
        )
    }

    /// The scalar kind of a contract operation's (word) value.
    pub fn contract_kind(&self, op: &ContractOp) -> Result<ScalarKind, Refusal> {
        if !is_word(&op.result) {
            return Err(self.contract_refusal("non-scalar contract values are not lowered yet"));
        }
        Ok(match &op.result {
            Type::Scalar(k) => *k,
            _ => ScalarKind::Bool,
        })
    }

    /// The flow tag of a contract arithmetic, bit or comparison operation.
    pub fn contract_flow_tag(&self, op: &ContractOp) -> Result<u32, Refusal> {
        crate::interp::contract_flow_tag(op.tag)
            .ok_or_else(|| self.contract_refusal("contract operation is not lowered yet"))
    }

    /// A contract PURE_CALL of a catalog function: its selector and how
    /// its receiver binding holds the bytes. Lowered: `length` (1) and
    /// `get` (2) of a loaned array, `length` (9) and `get` (10) of a
    /// slice, and the allocator's `remaining` (8). A `get` past the end is
    /// a bounds fault at the contract operation (no block), as a step
    /// fault there is.
    pub fn contract_catalog(
        &self,
        op: &ContractOp,
    ) -> Result<(u32, Option<ContractBytes>), Refusal> {
        let Some(ent) = op
            .reference
            .and_then(|sig| crate::catalog::by_signature(&sig))
        else {
            return Err(self.contract_refusal("contract call of a function outside the catalog"));
        };
        let binding = match op.operands.first() {
            Some(ContractOperand::Param(k)) => self
                .f
                .params
                .iter()
                .find(|p| p.ordinal == *k)
                .map(|p| &p.ty),
            _ => None,
        };
        let loan_of = |t: &Type, of: &Type| matches!(t, Type::Ref(a) | Type::Mut(a) if **a == *of);
        match (ent.selector, binding) {
            (sel @ (1 | 2), Some(t)) if loan_of(t, &Type::ArrayByte) => {
                Ok((sel, Some(ContractBytes::ArrayLoan)))
            }
            (sel @ (9 | 10), Some(t)) if *t == Type::SliceByte || loan_of(t, &Type::SliceByte) => {
                Ok((sel, Some(ContractBytes::Slice)))
            }
            (8, _) => Ok((8, None)),
            (sel, _) => Err(self.contract_refusal(&format!(
                "catalog pure call {} (selector {sel}) in a contract on this binding is not lowered yet",
                ent.name
            ))),
        }
    }

    /// The refusal of a contract operation no printer lowers.
    pub fn contract_unlowered(&self) -> Refusal {
        self.contract_refusal("contract operation is not lowered yet")
    }

    /// A contract comparison: (flow tag, the interpreter's operand kind).
    pub fn contract_compare(
        &self,
        e: &Expr,
        op: &ContractOp,
    ) -> Result<(u32, ScalarKind), Refusal> {
        let t = self.contract_flow_tag(op)?;
        let (Some(a), Some(c)) = (op.operands.first(), op.operands.get(1)) else {
            return Err(self.contract_refusal("contract comparison operands"));
        };
        let k = crate::interp::contract_compare_kind(&self.r.self_type(self.at.0), self.f, e, a, c);
        Ok((t, k))
    }

    /// A contract FIELD_COPY: (the binding's path, the field).
    pub fn contract_field(
        &self,
        op: &ContractOp,
        receiver_bound: bool,
    ) -> Result<(usize, &'m Field), Refusal> {
        let Some((_, None, fld)) = op.reference.and_then(|fid| self.r.field(&fid)) else {
            return Err(self.contract_refusal("contract field copy of a variant field"));
        };
        let Some(pi) = op
            .operands
            .first()
            .and_then(|o| self.contract_slot_path(o, receiver_bound))
        else {
            return Err(self.contract_refusal("contract field copy of a computed value"));
        };
        if !is_word(&fld.ty) {
            return Err(self.contract_refusal("non-scalar contract values are not lowered yet"));
        }
        Ok((pi, fld))
    }

    /// A contract PURE_CALL of a declared function: (callee, the path of
    /// the shared receiver's binding when the callee has one).
    pub fn contract_callee(
        &self,
        op: &ContractOp,
        receiver_bound: bool,
        lowered: impl Fn(At) -> bool,
    ) -> Result<(At, Option<usize>), Refusal> {
        let Some(&callee) = op.reference.and_then(|sig| self.r.funcs.get(&sig)) else {
            return Err(self.contract_refusal("contract calls into other modules"));
        };
        if !lowered(callee) {
            return Err(self.contract_refusal("callee outside the lowered set"));
        }
        if super::walk::function(self.r, callee).receiver != ReceiverKind::Shared {
            return Ok((callee, None));
        }
        // A synchronous shared child loan of the binding.
        let Some(pi) = op
            .operands
            .first()
            .and_then(|o| self.contract_slot_path(o, receiver_bound))
        else {
            return Err(self.contract_refusal("contract call on a computed receiver"));
        };
        Ok((callee, Some(pi)))
    }
}
