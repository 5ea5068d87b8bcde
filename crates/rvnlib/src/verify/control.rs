//! Whether a body can run off its end without returning.

use crate::ir::*;

/// True when control cannot reach the end of `block`: a `return` or a
/// `discard` (an invocation that has ended has no caller to observe a missing
/// value), an `if` whose two arms both leave, or a nested block that leaves.
/// Loops never count (their body may run zero times), as in Raven's verifier.
pub(crate) fn always_leaves(block: &LibraryIrBlock) -> bool {
    block.statements.iter().any(|statement| match statement {
        LibraryIrStatement::Return { .. } | LibraryIrStatement::Discard => true,
        LibraryIrStatement::If {
            then,
            otherwise: Some(otherwise),
            ..
        } => always_leaves(then) && always_leaves(otherwise),
        LibraryIrStatement::Block(nested) => always_leaves(nested),
        _ => false,
    })
}
