//! The structs and functions a verification can see, and whether references
//! outside them are errors.

use crate::ir::*;
use std::collections::HashMap;

/// Whether references outside the set being verified are errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// A library on its own: unknown callees and structs may come from a
    /// library it references; their checks wait for the linker.
    Deferred,
    /// A linked module: every callee and struct must be present.
    Complete,
}

/// The structs and functions a verification can see, by key.
pub struct Scope<'a> {
    structs: HashMap<&'a str, &'a LibraryIrStruct>,
    functions: HashMap<&'a str, &'a LibraryIrFunction>,
    pub(crate) resolution: Resolution,
}

impl<'a> Scope<'a> {
    /// A scope over the given structs and functions (the first of a duplicated key wins).
    pub fn new(
        structs: impl IntoIterator<Item = &'a LibraryIrStruct>,
        functions: impl IntoIterator<Item = &'a LibraryIrFunction>,
        resolution: Resolution,
    ) -> Self {
        let mut s = HashMap::new();
        for st in structs {
            s.entry(st.key.as_str()).or_insert(st);
        }
        let mut f = HashMap::new();
        for func in functions {
            f.entry(func.key.as_str()).or_insert(func);
        }
        Scope {
            structs: s,
            functions: f,
            resolution,
        }
    }

    /// Looks a struct up by key.
    pub fn find_struct(&self, key: &str) -> Option<&'a LibraryIrStruct> {
        self.structs.get(key).copied()
    }

    /// Looks a function up by key.
    pub fn find_function(&self, key: &str) -> Option<&'a LibraryIrFunction> {
        self.functions.get(key).copied()
    }
}
