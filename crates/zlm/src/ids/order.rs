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
pub fn is_copy(ty: &Type, nominal: &dyn Fn(&Id) -> Option<bool>) -> bool {
    match ty {
        Type::Scalar(_) | Type::Unit | Type::Never | Type::Ref(_) => true,
        Type::Nominal(id) => nominal(id).unwrap_or(false),
        Type::Result(ok_ty, err_ty) => is_copy(ok_ty, nominal) && is_copy(err_ty, nominal),
        Type::ArrayByte | Type::SliceByte | Type::Mut(_) | Type::AllocatorBytesError => false,
    }
}

/// The derived parameter move flag: one exactly for a non-Copy nonborrow
/// by-value owner.
pub fn move_flag(ty: &Type, nominal: &dyn Fn(&Id) -> Option<bool>) -> u32 {
    u32::from(!ty.is_borrow() && !is_copy(ty, nominal))
}

/// Per-function context used while hashing a body.
pub(crate) struct FnCtx<'a> {
    pub(crate) sig: Id,
    pub(crate) function: &'a Function,
    pub(crate) params: &'a [Id],
    pub(crate) locals: &'a [Id],
    pub(crate) receiver_type: Option<Type>,
    /// Flow op index in canonical order, per (block, ordinal).
    pub(crate) flow_index: BTreeMap<(u32, u32), u32>,
}

impl FnCtx<'_> {
    pub(crate) fn op_key(&self, op_ref: &OpRef) -> Vec<u8> {
        let (kind, owner, ordinal) = match op_ref {
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
            Root::Param(param) => (1, self.param_id(*param)?.to_vec()),
            Root::Local(local) => (2, self.local_id(*local)?.to_vec()),
            Root::Temp(op) => (3, self.op_key(op)),
        })
    }
    pub(crate) fn param_id(&self, ordinal: u32) -> Result<Id> {
        self.function
            .params
            .iter()
            .position(|p| p.ordinal == ordinal)
            .map(|i| self.params[i])
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("function {}: no parameter {ordinal}", self.function.name),
                )
            })
    }
    pub(crate) fn local_id(&self, ordinal: u32) -> Result<Id> {
        self.function
            .body
            .locals
            .iter()
            .position(|p| p.ordinal == ordinal)
            .map(|i| self.locals[i])
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("function {}: no local {ordinal}", self.function.name),
                )
            })
    }
    /// Canonical owned-path sort key: root kind, root identity bytes, field IDs.
    pub(crate) fn path_sort_key(&self, key: &PathKey) -> Result<(u32, Vec<u8>, Vec<Id>)> {
        let (kind, ident) = self.root_identity(&key.root)?;
        Ok((kind, ident, key.fields.clone()))
    }
}

/// The canonical order of a function's owned paths, as indices into
/// `Body::paths`.
pub fn path_order(
    sig: &Id,
    function: &Function,
    params: &[Id],
    locals: &[Id],
) -> Result<Vec<usize>> {
    let ctx = FnCtx {
        sig: *sig,
        function,
        params,
        locals,
        receiver_type: None,
        flow_index: BTreeMap::new(),
    };
    let mut keyed = Vec::with_capacity(function.body.paths.len());
    for (i, path) in function.body.paths.iter().enumerate() {
        keyed.push((ctx.path_sort_key(&path.key)?, i));
    }
    keyed.sort();
    for pair in keyed.windows(2) {
        if pair[0].0 == pair[1].0 {
            return Err(Error::new(
                code::DUPLICATE,
                format!("function {}: duplicate owned path", function.name),
            ));
        }
    }
    Ok(keyed.into_iter().map(|(_, i)| i).collect())
}

/// Blocks sorted by dense ID (indices into `Body::blocks`), rejecting gaps and duplicates.
pub fn block_order(function: &Function) -> Result<Vec<usize>> {
    dense_order(
        function.body.blocks.iter().map(|b| b.id),
        &function.name,
        "block",
    )
}
/// Edges sorted by dense ID.
pub fn edge_order(function: &Function) -> Result<Vec<usize>> {
    dense_order(
        function.body.edges.iter().map(|b| b.id),
        &function.name,
        "cleanup edge",
    )
}
/// Loans sorted by dense ID.
pub fn loan_order(function: &Function) -> Result<Vec<usize>> {
    dense_order(
        function.body.loans.iter().map(|b| b.id),
        &function.name,
        "loan",
    )
}
/// Locals sorted by ordinal.
pub fn local_order(function: &Function) -> Result<Vec<usize>> {
    dense_order(
        function.body.locals.iter().map(|b| b.ordinal),
        &function.name,
        "local",
    )
}
/// Parameters sorted by ordinal.
pub fn param_order(function: &Function) -> Result<Vec<usize>> {
    dense_order(
        function.params.iter().map(|b| b.ordinal),
        &function.name,
        "parameter",
    )
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
    function: &Function,
    recv: Option<&Type>,
    expr: &Expr,
    op: &ContractOperand,
) -> Result<Type> {
    Ok(match op {
        ContractOperand::Const(constant) => Type::Scalar(constant.kind),
        ContractOperand::Receiver => recv.cloned().ok_or_else(|| {
            Error::new(
                code::SHAPE,
                format!(
                    "{}: contract receiver operand without a runtime receiver",
                    function.name
                ),
            )
        })?,
        ContractOperand::Param(param) => function
            .params
            .iter()
            .find(|x| x.ordinal == *param)
            .map(|x| x.ty.clone())
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!(
                        "{}: contract names missing parameter {param}",
                        function.name
                    ),
                )
            })?,
        ContractOperand::Result => function.result.clone(),
        ContractOperand::Value(index) => expr
            .ops
            .get(*index as usize)
            .map(|o| o.result.clone())
            .ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: contract value {index} out of range", function.name),
                )
            })?,
    })
}

/// Lookup tables over one function's semantic keys (avoids quadratic scans).
pub struct FnIndex<'a> {
    /// The function.
    pub function: &'a Function,
    /// Block ID to index in `Body::blocks`.
    pub blocks: FastMap<u32, usize>,
    /// Edge ID to index in `Body::edges`.
    pub edges: FastMap<u32, usize>,
    /// Path key to index in `Body::paths`.
    pub paths: FastMap<&'a PathKey, usize>,
    /// Every block's ID is its index (so IDs are unique and `blocks` maps
    /// each ID to itself): [`FnIndex::op`] then indexes without the map.
    blocks_dense: bool,
    /// The same for cleanup edges.
    edges_dense: bool,
}

impl<'a> FnIndex<'a> {
    /// Builds the index (duplicate keys are rejected elsewhere).
    pub fn new(function: &'a Function) -> Self {
        FnIndex {
            function,
            blocks: function
                .body
                .blocks
                .iter()
                .enumerate()
                .map(|(i, b)| (b.id, i))
                .collect(),
            edges: function
                .body
                .edges
                .iter()
                .enumerate()
                .map(|(i, b)| (b.id, i))
                .collect(),
            paths: function
                .body
                .paths
                .iter()
                .enumerate()
                .map(|(i, p)| (&p.key, i))
                .collect(),
            blocks_dense: function
                .body
                .blocks
                .iter()
                .enumerate()
                .all(|(i, b)| b.id as usize == i),
            edges_dense: function
                .body
                .edges
                .iter()
                .enumerate()
                .all(|(i, e)| e.id as usize == i),
        }
    }
    /// Looks up a flow or recipe operation.
    #[inline]
    pub fn op(&self, op_ref: &OpRef) -> Option<&'a Op> {
        let body = &self.function.body;
        match *op_ref {
            OpRef::Flow { block, ordinal } => {
                let at = match self.blocks_dense {
                    true => block as usize,
                    false => *self.blocks.get(&block)?,
                };
                body.blocks.get(at)?.ops.get(ordinal as usize)
            }
            OpRef::Recipe { edge, ordinal } => {
                let at = match self.edges_dense {
                    true => edge as usize,
                    false => *self.edges.get(&edge)?,
                };
                body.edges.get(at)?.drops.get(ordinal as usize)
            }
        }
    }
    /// Looks up an owned path.
    pub fn path(&self, key: &PathKey) -> Option<&'a OwnedPath> {
        self.paths.get(key).map(|&i| &self.function.body.paths[i])
    }
    /// The exact type of a body operand (`None` for a block operand).
    pub fn operand_type(&self, operand: &Operand) -> Result<Option<Type>> {
        Ok(self.operand_type_ref(operand)?.cloned())
    }
    /// [`FnIndex::operand_type`], borrowed.
    pub fn operand_type_ref(&self, operand: &Operand) -> Result<Option<&'a Type>> {
        let function = self.function;
        Ok(match operand {
            Operand::Value(op_ref) => {
                let op = self.op(op_ref).ok_or_else(|| {
                    Error::new(
                        code::REF,
                        format!(
                            "{}: operand names a missing operation {op_ref}",
                            function.name
                        ),
                    )
                    .in_body(&function.name)
                })?;
                Some(op.result.as_ref().ok_or_else(|| {
                    Error::new(
                        code::SHAPE,
                        format!(
                            "{}: operand names operation {op_ref} that has no result",
                            function.name
                        ),
                    )
                    .in_body(&function.name)
                })?)
            }
            Operand::Place(key) => Some(self.path(key).map(|p| &p.ty).ok_or_else(|| {
                Error::new(
                    code::REF,
                    format!("{}: operand names a missing owned path", function.name),
                )
            })?),
            Operand::Const(constant) => Some(constant.kind.static_type()),
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
