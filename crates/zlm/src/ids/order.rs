//! Canonical orders (owned paths, dense block/edge/loan/local/parameter
//! keys, effect sets), type predicates (structural Copy, the move flag,
//! receiver and contract-operand types) and the per-function index over
//! semantic keys.

use crate::error::{Error, Result, code};
use crate::hash::FastMap;
use crate::hash::{Id, seq_of, u32p};
use crate::model::*;
use std::collections::BTreeMap;

/// Structural Copy of a type; `nominal` answers a declaration's Copy flag.
pub fn is_copy(t: &Type, nominal: &dyn Fn(&Id) -> Option<bool>) -> bool {
    match t {
        Type::Scalar(_) | Type::Unit | Type::Never | Type::Ref(_) => true,
        Type::Nominal(id) => nominal(id).unwrap_or(false),
        Type::Result(a, b) => is_copy(a, nominal) && is_copy(b, nominal),
        Type::ArrayByte | Type::SliceByte | Type::Mut(_) | Type::AllocatorBytesError => false,
    }
}

/// The derived parameter move flag: one exactly for a non-Copy nonborrow
/// by-value owner.
pub fn move_flag(t: &Type, nominal: &dyn Fn(&Id) -> Option<bool>) -> u32 {
    u32::from(!t.is_borrow() && !is_copy(t, nominal))
}

/// Per-function context used while hashing a body.
pub(crate) struct FnCtx<'a> {
    pub(crate) sig: Id,
    pub(crate) f: &'a Function,
    pub(crate) params: &'a [Id],
    pub(crate) locals: &'a [Id],
    pub(crate) receiver_type: Option<Type>,
    /// Flow op index in canonical order, per (block, ordinal).
    pub(crate) flow_index: BTreeMap<(u32, u32), u32>,
}

impl FnCtx<'_> {
    pub(crate) fn op_key(&self, r: &OpRef) -> Vec<u8> {
        let (kind, owner, ordinal) = match r {
            OpRef::Flow { block, ordinal } => (0u32, *block, *ordinal),
            OpRef::Recipe { edge, ordinal } => (1u32, *edge, *ordinal),
        };
        let owner_key = seq_of(&[&self.sig, &owner.to_le_bytes()]);
        seq_of(&[
            &self.sig,
            &kind.to_le_bytes(),
            &owner_key,
            &ordinal.to_le_bytes(),
        ])
    }
    pub(crate) fn root_identity(&self, root: &Root) -> Result<(u32, Vec<u8>)> {
        Ok(match root {
            Root::Receiver => (0, u32p(0)),
            Root::Param(p) => (1, self.param_id(*p)?.to_vec()),
            Root::Local(l) => (2, self.local_id(*l)?.to_vec()),
            Root::Temp(op) => (3, self.op_key(op)),
        })
    }
    pub(crate) fn param_id(&self, ordinal: u32) -> Result<Id> {
        self.f
            .params
            .iter()
            .position(|p| p.ordinal == ordinal)
            .map(|i| self.params[i])
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("function {}: no parameter {ordinal}", self.f.name),
                )
            })
    }
    pub(crate) fn local_id(&self, ordinal: u32) -> Result<Id> {
        self.f
            .body
            .locals
            .iter()
            .position(|p| p.ordinal == ordinal)
            .map(|i| self.locals[i])
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("function {}: no local {ordinal}", self.f.name),
                )
            })
    }
    /// Canonical owned-path sort key: root kind, root identity bytes, field IDs.
    pub(crate) fn path_sort_key(&self, k: &PathKey) -> Result<(u32, Vec<u8>, Vec<Id>)> {
        let (kind, ident) = self.root_identity(&k.root)?;
        Ok((kind, ident, k.fields.clone()))
    }
}

/// The canonical order of a function's owned paths, as indices into
/// `Body::paths`.
pub fn path_order(sig: &Id, f: &Function, params: &[Id], locals: &[Id]) -> Result<Vec<usize>> {
    let ctx = FnCtx {
        sig: *sig,
        f,
        params,
        locals,
        receiver_type: None,
        flow_index: BTreeMap::new(),
    };
    let mut keyed = Vec::with_capacity(f.body.paths.len());
    for (i, p) in f.body.paths.iter().enumerate() {
        keyed.push((ctx.path_sort_key(&p.key)?, i));
    }
    keyed.sort();
    for w in keyed.windows(2) {
        if w[0].0 == w[1].0 {
            return Err(Error::new(
                code::DUPLICATE,
                format!("function {}: duplicate owned path", f.name),
            ));
        }
    }
    Ok(keyed.into_iter().map(|(_, i)| i).collect())
}

/// Blocks sorted by dense ID (indices into `Body::blocks`), rejecting gaps and duplicates.
pub fn block_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.body.blocks.iter().map(|b| b.id), &f.name, "block")
}
/// Edges sorted by dense ID.
pub fn edge_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.body.edges.iter().map(|b| b.id), &f.name, "cleanup edge")
}
/// Loans sorted by dense ID.
pub fn loan_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.body.loans.iter().map(|b| b.id), &f.name, "loan")
}
/// Locals sorted by ordinal.
pub fn local_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.body.locals.iter().map(|b| b.ordinal), &f.name, "local")
}
/// Parameters sorted by ordinal.
pub fn param_order(f: &Function) -> Result<Vec<usize>> {
    dense_order(f.params.iter().map(|b| b.ordinal), &f.name, "parameter")
}

/// Sorts by a dense key that must be exactly 0..n.
pub fn dense_order(keys: impl Iterator<Item = u32>, owner: &str, what: &str) -> Result<Vec<usize>> {
    let keys: Vec<u32> = keys.collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    for (pos, &i) in order.iter().enumerate() {
        if keys[i] as usize != pos {
            return Err(Error::new(
                code::MODEL,
                format!(
                    "{owner}: {what} keys must be dense from zero without duplicates (found {})",
                    keys[i]
                ),
            ));
        }
    }
    Ok(order)
}

pub(crate) fn check_effects(effects: &[Effect], owner: &str) -> Result<()> {
    if effects.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Error::new(
            code::MODEL,
            format!("{owner}: effect tags must be unique and ascending"),
        ));
    }
    Ok(())
}

/// The receiver type of a function owned by declaration `owner`.
pub fn receiver_type(owner: &Id, receiver: ReceiverKind) -> Option<Type> {
    receiver.binding(&Type::Nominal(*owner))
}

/// The exact type of a contract operand.
pub fn contract_operand_type(
    f: &Function,
    recv: Option<&Type>,
    e: &Expr,
    op: &ContractOperand,
) -> Result<Type> {
    Ok(match op {
        ContractOperand::Const(c) => Type::Scalar(c.kind),
        ContractOperand::Receiver => recv.cloned().ok_or_else(|| {
            Error::new(
                code::SHAPE,
                format!(
                    "{}: contract receiver operand without a runtime receiver",
                    f.name
                ),
            )
        })?,
        ContractOperand::Param(p) => f
            .params
            .iter()
            .find(|x| x.ordinal == *p)
            .map(|x| x.ty.clone())
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: contract names missing parameter {p}", f.name),
                )
            })?,
        ContractOperand::Result => f.result.clone(),
        ContractOperand::Value(i) => e
            .ops
            .get(*i as usize)
            .map(|o| o.result.clone())
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: contract value {i} out of range", f.name),
                )
            })?,
    })
}

/// Lookup tables over one function's semantic keys (avoids quadratic scans).
pub struct FnIndex<'a> {
    /// The function.
    pub f: &'a Function,
    /// Block ID to index in `Body::blocks`.
    pub blocks: FastMap<u32, usize>,
    /// Edge ID to index in `Body::edges`.
    pub edges: FastMap<u32, usize>,
    /// Path key to index in `Body::paths`.
    pub paths: FastMap<&'a PathKey, usize>,
}

impl<'a> FnIndex<'a> {
    /// Builds the index (duplicate keys are rejected elsewhere).
    pub fn new(f: &'a Function) -> Self {
        FnIndex {
            f,
            blocks: f
                .body
                .blocks
                .iter()
                .enumerate()
                .map(|(i, b)| (b.id, i))
                .collect(),
            edges: f
                .body
                .edges
                .iter()
                .enumerate()
                .map(|(i, b)| (b.id, i))
                .collect(),
            paths: f
                .body
                .paths
                .iter()
                .enumerate()
                .map(|(i, p)| (&p.key, i))
                .collect(),
        }
    }
    /// Looks up a flow or recipe operation.
    pub fn op(&self, r: &OpRef) -> Option<&'a Op> {
        match r {
            OpRef::Flow { block, ordinal } => self.f.body.blocks[*self.blocks.get(block)?]
                .ops
                .get(*ordinal as usize),
            OpRef::Recipe { edge, ordinal } => self.f.body.edges[*self.edges.get(edge)?]
                .drops
                .get(*ordinal as usize),
        }
    }
    /// Looks up an owned path.
    pub fn path(&self, k: &PathKey) -> Option<&'a OwnedPath> {
        self.paths.get(k).map(|&i| &self.f.body.paths[i])
    }
    /// The exact type of a body operand (`None` for a block operand).
    pub fn operand_type(&self, o: &Operand) -> Result<Option<Type>> {
        Ok(self.operand_type_ref(o)?.cloned())
    }
    /// [`FnIndex::operand_type`], borrowed.
    pub fn operand_type_ref(&self, o: &Operand) -> Result<Option<&'a Type>> {
        let f = self.f;
        Ok(match o {
            Operand::Value(r) => {
                let op = self.op(r).ok_or_else(|| {
                    Error::new(
                        code::REF,
                        format!("{}: operand names a missing operation {r:?}", f.name),
                    )
                })?;
                Some(op.result.as_ref().ok_or_else(|| {
                    Error::new(
                        code::SHAPE,
                        format!(
                            "{}: operand names operation {r:?} that has no result",
                            f.name
                        ),
                    )
                })?)
            }
            Operand::Place(k) => Some(self.path(k).map(|p| &p.ty).ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: operand names a missing owned path", f.name),
                )
            })?),
            Operand::Const(c) => Some(c.kind.static_type()),
            Operand::Block(_) => None,
        })
    }
}

/// Everything the writer needs about one field.
#[derive(Debug, Clone)]
pub struct FieldInfo {
    /// Owning declaration index in the model.
    pub decl: usize,
    /// Owning variant index in the declaration, for payload fields.
    pub variant: Option<usize>,
    /// Field index within its owner's list in the model.
    pub index: usize,
}
