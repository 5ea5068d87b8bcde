//! The IR verifier, run by the reader and by the linker.
//!
//! Checks, per function: the value table (sorted, unique ids inside
//! `0..ValueCount`, gaps allowed), every value defined once with the type the
//! table gives it, operands defined before use along the statement tree,
//! arguments carrying exactly one of value/reference, place roots in range and
//! access chains valid for the root's type, `break`/`continue` only inside a
//! loop body, returns matching the return type, and callee keys and struct
//! keys resolvable. A library on its own may name structs and callees of the
//! libraries it was built against; those checks are deferred to the linker,
//! which verifies with [`Resolution::Complete`].

//!
//! Split by concern: `report` (codes and findings), `scope` (what is
//! visible, deferred or complete), `types` (well-formed types), `structs`,
//! `function` (signature, value table, regions), `statements`, `calls`,
//! `places`, `rules` (operator and construct typing).

mod calls;
mod control;
mod function;
mod places;
mod report;
mod rules;
mod scope;
mod statements;
mod structs;
#[cfg(test)]
mod tests;
mod types;

pub use function::verify_function;
pub use report::{MAX_ERRORS, RVN3010, RVN5004, VerifyError};
pub use scope::{Resolution, Scope};
pub use structs::{check_unique_keys, verify_struct};

use crate::ir::*;
use crate::library::CompiledLibrary;

/// Verifies one library on its own (cross-library references deferred).
pub fn verify_library(library: &CompiledLibrary) -> Vec<VerifyError> {
    let mut errors = Vec::new();
    let ir = &library.ir;
    check_unique_keys(ir, &mut errors);
    let scope = Scope::new(&ir.structs, &ir.functions, Resolution::Deferred);
    verify_items(&scope, &ir.structs, &ir.functions, &mut errors);
    errors.truncate(MAX_ERRORS);
    errors
}

/// Verifies structs and functions against a scope.
pub fn verify_items<'a>(
    scope: &Scope<'a>,
    structs: impl IntoIterator<Item = &'a LibraryIrStruct>,
    functions: impl IntoIterator<Item = &'a LibraryIrFunction>,
    errors: &mut Vec<VerifyError>,
) {
    for s in structs {
        verify_struct(scope, s, errors);
    }
    for f in functions {
        if errors.len() >= MAX_ERRORS {
            return;
        }
        verify_function(scope, f, errors);
    }
}
