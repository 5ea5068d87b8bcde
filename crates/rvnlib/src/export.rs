//! Export refusal: bodies that touch storage owned by a consuming shader
//! cannot travel in a library.
//!
//! An [`ExportModule`] is a compiled module before export: functions whose
//! place roots may reach past parameters-then-locals into the module's
//! [`ShaderStorage`] (root `parameters + locals + i` names `storage[i]`). A
//! function that touches shader storage directly, or calls (transitively, to a
//! fixed point) a function that does, is refused with the chain of calls that
//! leads there: RVN5001 for a shader binding, RVN5007 for a stream, RVN5008
//! for groupshared storage. Only when nothing is refused does the module
//! become a [`CompiledLibrary`], which is then verified like any read library.

use crate::ir::*;
use crate::library::{CompiledLibrary, LibraryType};
use crate::verify::{self, VerifyError};
use crate::walk;
use std::collections::HashMap;
use std::fmt;

/// What kind of shader-owned storage a global is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShaderStorageKind {
    /// A shader binding (uniform, texture, buffer): RVN5001.
    Binding,
    /// A `stream`: RVN5007.
    Stream,
    /// `groupshared` storage: RVN5008.
    GroupShared,
}

impl ShaderStorageKind {
    /// The refusal's RVN code.
    pub fn code(self) -> &'static str {
        match self {
            ShaderStorageKind::Binding => "RVN5001",
            ShaderStorageKind::Stream => "RVN5007",
            ShaderStorageKind::GroupShared => "RVN5008",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            ShaderStorageKind::Binding => "reads shader binding",
            ShaderStorageKind::Stream => "uses stream",
            ShaderStorageKind::GroupShared => "uses groupshared storage",
        }
    }
}

/// A global of the consuming shader.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ShaderStorage {
    /// Its name.
    pub name: String,
    /// What it is.
    pub kind: ShaderStorageKind,
    /// Its type.
    pub ty: LibraryIrTypeReference,
}

/// A module about to be exported as a library.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExportModule {
    /// Library name.
    pub name: String,
    /// Declaration half.
    pub types: Vec<LibraryType>,
    /// Structs.
    pub structs: Vec<LibraryIrStruct>,
    /// Functions; roots past parameters-then-locals name [`storage`](Self::storage).
    pub functions: Vec<LibraryIrFunction>,
    /// The shader's globals.
    pub storage: Vec<ShaderStorage>,
    /// Source hash to record.
    pub source_hash: String,
}

/// One refused function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportRefusal {
    /// RVN5001, RVN5007 or RVN5008.
    pub code: &'static str,
    /// The refused function's key.
    pub function: String,
    /// The calls from the refused function to the one that touches the storage
    /// (the first element is `function`, the last touches it directly).
    pub chain: Vec<String>,
    /// The storage touched.
    pub storage: String,
    /// Its kind.
    pub kind: ShaderStorageKind,
    /// Statement path of the touch inside the last function of the chain.
    pub path: String,
}

impl fmt::Display for ExportRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: `{}` cannot be exported: it ",
            self.code, self.function
        )?;
        for callee in self.chain.iter().skip(1) {
            write!(f, "calls `{callee}`, which ")?;
        }
        write!(
            f,
            "{} `{}` (at {}), storage that belongs to the consuming shader",
            self.kind.describe(),
            self.storage,
            self.path
        )
    }
}

/// Why a module could not be exported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// Functions touching shader storage.
    #[error("{} function(s) refused for export", .0.len())]
    Refused(Vec<ExportRefusal>),
    /// The exported library fails verification.
    #[error("exported library fails verification ({} error(s))", .0.len())]
    Invalid(Vec<VerifyError>),
}

/// Direct touch: the first shader-storage root a function's body addresses.
fn direct_touch(
    function: &LibraryIrFunction,
    storage: &[ShaderStorage],
) -> Option<(usize, String)> {
    let base = function.root_count();
    find_touch(&function.body, base, storage, "Body")
}

fn find_touch(
    block: &LibraryIrBlock,
    base: usize,
    storage: &[ShaderStorage],
    prefix: &str,
) -> Option<(usize, String)> {
    for (i, statement) in block.statements.iter().enumerate() {
        let here = format!("{prefix}.Statements[{i}]");
        for root in walk::roots(statement) {
            if let Some(global) = usize::try_from(root).ok().and_then(|r| r.checked_sub(base))
                && global < storage.len()
            {
                return Some((global, here));
            }
        }
        let names: &[&str] = match statement {
            LibraryIrStatement::If { .. } => &["Then", "Else"],
            LibraryIrStatement::Loop {
                continuing: Some(_),
                ..
            } => &["Condition", "Body", "Continue"],
            LibraryIrStatement::Loop { .. } => &["Condition", "Body"],
            _ => &[""],
        };
        for (child, name) in walk::child_blocks(statement).into_iter().zip(names.iter()) {
            let child_prefix = if name.is_empty() {
                here.clone()
            } else {
                format!("{here}.{name}")
            };
            if let Some(found) = find_touch(child, base, storage, &child_prefix) {
                return Some(found);
            }
        }
    }
    None
}

/// Refuses what cannot travel, then builds and verifies the library.
pub fn export(module: &ExportModule) -> Result<CompiledLibrary, ExportError> {
    let refusals = refusals(module);
    if !refusals.is_empty() {
        return Err(ExportError::Refused(refusals));
    }
    let library = CompiledLibrary {
        name: module.name.clone(),
        types: module.types.clone(),
        ir: LibraryIr {
            structs: module.structs.clone(),
            functions: module.functions.clone(),
        },
        source_hash: module.source_hash.clone(),
    };
    let errors = verify::verify_library(&library);
    if errors.is_empty() {
        Ok(library)
    } else {
        Err(ExportError::Invalid(errors))
    }
}

/// Every function that cannot be exported, in module order, each with the
/// shortest chain found by the fixed point.
pub fn refusals(module: &ExportModule) -> Vec<ExportRefusal> {
    let index: HashMap<&str, usize> = module
        .functions
        .iter()
        .enumerate()
        .map(|(i, f)| (f.key.as_str(), i))
        .collect();
    // reason[i]: (storage index, path, next function in the chain or None if direct)
    let mut reason: Vec<Option<(usize, String, Option<usize>)>> = module
        .functions
        .iter()
        .map(|f| direct_touch(f, &module.storage).map(|(g, p)| (g, p, None)))
        .collect();
    let callees: Vec<Vec<usize>> = module
        .functions
        .iter()
        .map(|f| {
            walk::callees(&f.body)
                .into_iter()
                .filter_map(|k| index.get(k).copied())
                .collect()
        })
        .collect();
    // Fixed point: a caller of a refused function is refused. Each round adds
    // one call level, so chains are shortest-first.
    loop {
        let mut changed = false;
        let snapshot: Vec<bool> = reason.iter().map(Option::is_some).collect();
        for (i, calls) in callees.iter().enumerate() {
            if snapshot[i] {
                continue;
            }
            if let Some(&j) = calls.iter().find(|&&j| snapshot[j])
                && let Some((g, p, _)) = reason[j].clone()
            {
                reason[i] = Some((g, p, Some(j)));
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut out = Vec::new();
    for (i, r) in reason.iter().enumerate() {
        let Some((global, path, _)) = r else {
            continue;
        };
        let mut chain = vec![module.functions[i].key.clone()];
        let mut at = i;
        while let Some((_, _, Some(next))) = &reason[at] {
            chain.push(module.functions[*next].key.clone());
            at = *next;
            if chain.len() > module.functions.len() {
                break;
            }
        }
        let storage = &module.storage[*global];
        out.push(ExportRefusal {
            code: storage.kind.code(),
            function: module.functions[i].key.clone(),
            chain,
            storage: storage.name.clone(),
            kind: storage.kind,
            path: path.clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{FunctionBuilder, types::*};

    fn module(functions: Vec<LibraryIrFunction>) -> ExportModule {
        ExportModule {
            name: "M".into(),
            functions,
            storage: vec![ShaderStorage {
                name: "gShared".into(),
                kind: ShaderStorageKind::GroupShared,
                ty: f32(),
            }],
            ..ExportModule::default()
        }
    }

    #[test]
    fn passing_shader_storage_by_reference_is_a_touch() {
        let mut helper = FunctionBuilder::new("M.Bump(inout x: float): void", "Bump", void());
        helper.param_inout("x", f32());
        helper.ret(None);
        let mut f = FunctionBuilder::new("M.Caller(): void", "Caller", void());
        f.block(|b| {
            b.call(
                "M.Bump(inout x: float): void",
                None,
                vec![LibraryIrArgument::by_reference(0)],
            );
        });
        f.ret(None);
        let refusals = refusals(&module(vec![helper.finish(), f.finish()]));
        assert_eq!(refusals.len(), 1);
        assert_eq!(refusals[0].code, "RVN5008");
        assert_eq!(refusals[0].chain, vec!["M.Caller(): void".to_string()]);
        assert_eq!(refusals[0].path, "Body.Statements[0].Statements[0]");
        assert!(matches!(export(&module(vec![])), Ok(lib) if lib.name == "M"));
    }

    #[test]
    fn recursion_does_not_loop_and_clean_cycles_export() {
        let mut a = FunctionBuilder::new("a", "a", void());
        a.call("b", None, vec![]);
        a.ret(None);
        let mut b = FunctionBuilder::new("b", "b", void());
        b.call("a", None, vec![]);
        b.ret(None);
        let m = module(vec![a.finish(), b.finish()]);
        assert!(refusals(&m).is_empty());
        assert_eq!(export(&m).unwrap().ir.functions.len(), 2);
    }
}
