//! Identifiers shared by the artifact and its instructions (a leaf, so that
//! `artifact` may use `instruction` without `instruction` using it back).

/// A function id. Execution identity is the id, never the name or the
/// position in `Program::functions`.
pub type FunctionId = u32;
