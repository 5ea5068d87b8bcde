//! Function positions, kept apart from function ids by type.

/// The position of a function in the artifact's `program.functions`: the
/// index of the engine's per-function tables. Execution identity is the
/// function's id ([`tcc_ir::FunctionId`]), never its position; the two are
/// converted only through [`crate::Program`]'s id index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FuncPos(usize);

impl FuncPos {
    /// The position `index` (a valid index of `program.functions`).
    pub fn new(index: usize) -> Self {
        FuncPos(index)
    }

    /// The index into `program.functions` and the per-function tables.
    pub fn index(self) -> usize {
        self.0
    }
}
