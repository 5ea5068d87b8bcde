//! TypeScript (`ts.subset.v1`) → HIR, with `oxc_parser`.

use crate::error::{Code, FrontendError};
use crate::hir::{Module, Pos};

/// Parses and lowers a TypeScript source file.
pub fn lower(_source: &str, _file: &str) -> Result<Module, FrontendError> {
    Err(FrontendError::new(Code::Language, "TypeScript frontend not built yet", Pos::default()))
}
