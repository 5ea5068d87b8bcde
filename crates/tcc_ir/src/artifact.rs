//! The artifact: envelope and program (spec sections "Artifact" and "Program").

use std::sync::Arc;

use crate::constant::Constant;
use crate::instruction::Instruction;

pub use crate::id::FunctionId;

/// The current (and only) value of `engine_format_version`.
pub const ENGINE_FORMAT_VERSION: u32 = 1;

/// The language semantics versions format 1 is shared by.
pub const LANGUAGE_SEMANTICS_VERSIONS: [&str; 3] =
    ["ts.subset.v1", "py.subset.v1", "rust.subset.v1"];

/// A language semantics version this implementation knows. Instruction
/// meaning (equality, arity, arithmetic) is bound to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LanguageSemantics {
    /// `ts.subset.v1`
    TsSubsetV1,
    /// `py.subset.v1`
    PySubsetV1,
    /// `rust.subset.v1`
    RustSubsetV1,
}

impl LanguageSemantics {
    /// Parses a `language_semantics_version` id.
    pub fn from_id(id: &str) -> Option<Self> {
        match id {
            "ts.subset.v1" => Some(LanguageSemantics::TsSubsetV1),
            "py.subset.v1" => Some(LanguageSemantics::PySubsetV1),
            "rust.subset.v1" => Some(LanguageSemantics::RustSubsetV1),
            _ => None,
        }
    }

    /// The id as written in artifacts and continuations.
    pub fn as_str(self) -> &'static str {
        match self {
            LanguageSemantics::TsSubsetV1 => "ts.subset.v1",
            LanguageSemantics::PySubsetV1 => "py.subset.v1",
            LanguageSemantics::RustSubsetV1 => "rust.subset.v1",
        }
    }
}

/// A complete TCC artifact: `{"envelope": …, "program": …}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Artifact {
    /// Identity, frontend and requirement data.
    pub envelope: Envelope,
    /// Functions, entry point, instructions and source spans.
    pub program: Program,
}

/// The artifact envelope. Every key is required on decode.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Envelope {
    /// Lowercase hex SHA-256 of the canonical artifact with this field empty.
    /// Continuations record it; the engine does not recompute it.
    pub artifact_hash: String,
    /// Frontend that produced the artifact (not allowlisted).
    pub frontend_id: String,
    /// Version of that frontend.
    pub frontend_version: String,
    /// Language rules assumed by the instructions, e.g. `ts.subset.v1`.
    pub language_semantics_version: String,
    /// Envelope and instruction encoding version; currently 1.
    pub engine_format_version: u32,
    /// Engine features the program uses, in the order the frontend wrote them.
    pub required_engine_features: Vec<String>,
    /// Host capabilities the program uses, in the order the frontend wrote them.
    pub required_host_capabilities: Vec<String>,
    /// Helper modules required at runtime.
    pub runtime_modules: Vec<RuntimeModule>,
}

/// One entry of `runtime_modules`: `{"id": …, "kind": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RuntimeModule {
    /// Module id.
    pub id: String,
    /// Module kind.
    pub kind: String,
}

/// The program: `{"entry": id, "functions": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Program {
    /// Id of the entry function.
    pub entry: FunctionId,
    /// Functions in encoding order.
    pub functions: Vec<Function>,
}

/// One function of a program.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Function {
    /// Unique function id.
    pub id: FunctionId,
    /// Source name, for diagnostics only.
    pub name: String,
    /// Number of parameters; slots `0..param_count` hold them in source order.
    pub param_count: u32,
    /// Number of local slots (parameters included).
    pub local_count: u32,
    /// The instruction sequence; `pc` indexes it.
    pub instructions: Vec<Instruction>,
    /// One source span (or `None`) per instruction.
    pub spans: Vec<Option<Span>>,
    /// Constant defaults of the parameters (reference engine's later
    /// `param_defaults`, written by the Python frontend). `None` when the key
    /// is absent; the encoder writes the key only when some entry is non-null.
    pub param_defaults: Option<Vec<Option<Constant>>>,
}

/// A source span: `{file, start_line, start_column, end_line, end_column}`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Source file name as the frontend recorded it. Shared: the spans of
    /// one file point at one allocation, so a span costs no allocation of
    /// its own (an artifact has one span per instruction).
    pub file: Arc<str>,
    /// First line.
    pub start_line: u32,
    /// First column.
    pub start_column: u32,
    /// Last line.
    pub end_line: u32,
    /// Last column.
    pub end_column: u32,
}

impl Artifact {
    /// The function with this id, if any (linear scan; see [`Program::index`]
    /// for repeated lookups).
    pub fn function(&self, id: FunctionId) -> Option<&Function> {
        self.program.function(id)
    }
}

impl Envelope {
    /// The parsed `language_semantics_version`, if known.
    pub fn language_semantics(&self) -> Option<LanguageSemantics> {
        LanguageSemantics::from_id(&self.language_semantics_version)
    }

    /// Whether the envelope declares engine feature `id`.
    pub fn requires_engine_feature(&self, id: &str) -> bool {
        self.required_engine_features.iter().any(|f| f == id)
    }

    /// Whether the envelope declares host capability `id`.
    pub fn requires_host_capability(&self, id: &str) -> bool {
        self.required_host_capabilities.iter().any(|c| c == id)
    }
}

impl Program {
    /// The function with this id, if any.
    pub fn function(&self, id: FunctionId) -> Option<&Function> {
        self.functions.iter().find(|f| f.id == id)
    }

    /// Position of the function with this id in `functions`, if any.
    pub fn function_position(&self, id: FunctionId) -> Option<usize> {
        self.functions.iter().position(|f| f.id == id)
    }

    /// The entry function, if present.
    pub fn entry_function(&self) -> Option<&Function> {
        self.function(self.entry)
    }

    /// Instruction count of the function with this id, if it exists.
    pub fn instruction_count(&self, id: FunctionId) -> Option<usize> {
        self.function(id).map(Function::instruction_count)
    }

    /// Total number of instructions over all functions.
    pub fn total_instructions(&self) -> usize {
        self.functions.iter().map(|f| f.instructions.len()).sum()
    }

    /// Builds a lookup table from function id to position, for engines that
    /// resolve ids often. Duplicate ids (invalid) resolve to the first.
    pub fn index(&self) -> FunctionIndex {
        let mut by_id: Vec<(FunctionId, usize)> = self
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| (f.id, i))
            .collect();
        // Stable sort keeps the first of duplicate ids first.
        by_id.sort_by_key(|&(id, _)| id);
        by_id.dedup_by_key(|&mut (id, _)| id);
        FunctionIndex { by_id }
    }
}

/// Function id → position table built by [`Program::index`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FunctionIndex {
    by_id: Vec<(FunctionId, usize)>,
}

impl FunctionIndex {
    /// Position in `Program::functions` of the function with this id.
    pub fn position(&self, id: FunctionId) -> Option<usize> {
        self.by_id
            .binary_search_by_key(&id, |&(fid, _)| fid)
            .ok()
            .map(|i| self.by_id[i].1)
    }

    /// Number of distinct ids.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

impl Function {
    /// Number of instructions; valid pcs are `0..instruction_count()`.
    pub fn instruction_count(&self) -> usize {
        self.instructions.len()
    }

    /// The instruction at `pc`, if in range.
    pub fn instruction(&self, pc: u32) -> Option<&Instruction> {
        self.instructions.get(pc as usize)
    }

    /// The source span of the instruction at `pc`, if recorded.
    pub fn span(&self, pc: u32) -> Option<&Span> {
        self.spans.get(pc as usize).and_then(Option::as_ref)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program() -> Program {
        let f = |id: FunctionId, n: usize| Function {
            id,
            name: format!("f{id}"),
            instructions: vec![Instruction::Nop; n],
            spans: vec![None; n],
            ..Function::default()
        };
        Program {
            entry: 40,
            functions: vec![f(40, 3), f(7, 1), f(12, 0), f(7, 5)],
        }
    }

    #[test]
    fn lookups_go_by_id_not_position() {
        let p = program();
        assert_eq!(p.entry_function().map(|f| f.name.as_str()), Some("f40"));
        assert_eq!(p.function(12).map(|f| f.name.as_str()), Some("f12"));
        assert_eq!(p.function(1), None);
        assert_eq!(p.function_position(12), Some(2));
        assert_eq!(p.instruction_count(40), Some(3));
        assert_eq!(p.instruction_count(12), Some(0));
        assert_eq!(p.instruction_count(99), None);
        assert_eq!(p.total_instructions(), 9);
    }

    #[test]
    fn index_resolves_ids_and_keeps_the_first_duplicate() {
        let p = program();
        let index = p.index();
        assert_eq!(index.len(), 3);
        assert_eq!(index.position(40), Some(0));
        assert_eq!(index.position(7), Some(1));
        assert_eq!(index.position(12), Some(2));
        assert_eq!(index.position(8), None);
        assert!(Program::default().index().is_empty());
    }

    #[test]
    fn semantics_ids_round_trip() {
        for id in LANGUAGE_SEMANTICS_VERSIONS {
            let parsed = LanguageSemantics::from_id(id).unwrap();
            assert_eq!(parsed.as_str(), id);
        }
        assert_eq!(LanguageSemantics::from_id("ts.subset.v2"), None);
        let e = Envelope {
            language_semantics_version: "py.subset.v1".into(),
            required_engine_features: vec!["durable.effect".into()],
            required_host_capabilities: vec!["host.effect".into()],
            ..Envelope::default()
        };
        assert_eq!(e.language_semantics(), Some(LanguageSemantics::PySubsetV1));
        assert!(e.requires_engine_feature("durable.effect"));
        assert!(!e.requires_engine_feature("durable.sleep"));
        assert!(e.requires_host_capability("host.effect"));
        assert!(!e.requires_host_capability("host.timer"));
    }

    #[test]
    fn function_accessors_are_bounds_checked() {
        let mut f = program().functions.remove(0);
        f.spans[1] = Some(Span {
            file: "a.ts".into(),
            ..Span::default()
        });
        assert_eq!(f.instruction(2), Some(&Instruction::Nop));
        assert_eq!(f.instruction(3), None);
        assert_eq!(f.span(1).map(|s| &*s.file), Some("a.ts"));
        assert_eq!(f.span(0), None);
        assert_eq!(f.span(u32::MAX), None);
    }
}
