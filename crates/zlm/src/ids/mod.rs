//! Logical semantic identities (zlm1-core0-artifacts.md), split by job:
//! [`hasher`] (hashing and golden-vector facts), [`order`] (canonical
//! orders, type predicates and the function index), [`waves`] (the identity
//! waves in dependency order) and [`body`] (function-body digests). The
//! re-exports below are the module's public surface; the files import each
//! other directly (hasher ← order ← body ← waves), never through here.

pub mod body;
pub mod hasher;
pub mod order;
pub mod waves;

pub use body::path_facts;
pub use hasher::{Fact, Hasher};
pub use order::{
    FieldInfo, FnIndex, block_order, contract_operand_type, dense_order, edge_order, is_copy,
    loan_order, local_order, move_flag, param_order, path_order, receiver_type,
};
pub use waves::{DeclIds, FnIds, Identities, Pending, compute, prepare};
