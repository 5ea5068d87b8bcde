//! VPL material graphs (`docs/vpl/graph.md`): a JSON graph of typed nodes
//! and sockets, compiled to a canonical, verified VPL module.
//!
//! Data flows one way: JSON → [`format::Document`] (serde, unknown fields
//! refused) → [`check`] (records, sub-graph signatures, nodes, edges,
//! cycles, a topological order with ties broken by node id) → [`typing`]
//! (each node's output types; mismatches name node and socket) →
//! [`resources`] (what the module declares: live nodes, uniforms,
//! varyings, outputs, conflicts) → [`lower`] (a [`program::Program`]) →
//! [`emit`] (canonical text) and [`build`] (the same module as VPL's object
//! model) → `vpl::verify`. Every graph error is found before any VPL
//! exists. The text is not parsed back: the verifier checks the built
//! module, whose canonical text is byte for byte the printed one (tested
//! for every example and property-test graph), so its verdict is the
//! text's.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod build;
pub mod check;
pub mod emit;
pub mod error;
pub mod format;
pub mod lower;
pub mod nodes;
pub mod program;
pub mod resources;
pub mod types;
pub mod typing;

pub use error::{CompileError, ErrorKind, GraphError};
pub use nodes::{MinFilter, SamplerState, Wrap};

pub use types::MAX_TYPE_DEPTH;

/// Largest graph document read (bytes).
pub const MAX_INPUT: usize = 64 << 20;

/// Compiler options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Precede each node's instructions with a `// id (kind)` comment.
    /// The module is the same; the text is then not in canonical form.
    pub annotate: bool,
}

/// A compiled graph.
#[derive(Debug)]
pub struct Compiled {
    /// The VPL text (canonical unless annotated).
    pub text: String,
    /// The module `text` spells, verified (built directly, without
    /// spans: it is not read from the text).
    pub verified: vpl::verify::Verified,
    /// Sampler state of each texture uniform, by uniform name, in uniform
    /// order: the host applies it when binding the texture (spec 7.3.1).
    pub samplers: Vec<(String, SamplerState)>,
}

/// Parses a graph document, mapping JSON errors to [`ErrorKind::Json`]
/// diagnostics with line and column.
pub fn parse(json: &str) -> Result<format::Document<'_>, Vec<GraphError>> {
    if json.len() > MAX_INPUT {
        return Err(vec![GraphError::new(
            ErrorKind::Limit,
            format!("a graph file is at most {MAX_INPUT} bytes"),
        )]);
    }
    serde_json::from_str(json).map_err(|e| {
        let mut g = GraphError::new(ErrorKind::Json, strip_position(&e.to_string()));
        g.line = Some(u32::try_from(e.line()).unwrap_or(u32::MAX));
        g.column = Some(u32::try_from(e.column()).unwrap_or(u32::MAX));
        vec![g]
    })
}

/// serde_json's message without its trailing " at line L column C".
fn strip_position(m: &str) -> String {
    match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m.to_string(),
    }
}

/// The lowered program of a document, with its records and the texture
/// sampler states (and, with `constants_as_uniforms`, the preview's
/// constants uniform, whose record is appended to the records).
fn lower_document(
    doc: &format::Document,
    options: Options,
    constants_as_uniforms: bool,
) -> Result<Lowered, Vec<GraphError>> {
    let checked = check::check(doc)?;
    // Type and resource errors are independent: both are reported.
    let (types, res) = match (typing::infer(&checked), resources::collect(&checked)) {
        (Ok(t), Ok(r)) => (t, r),
        (t, r) => {
            let mut errors = t.err().unwrap_or_default();
            errors.extend(r.err().unwrap_or_default());
            return Err(errors);
        }
    };
    let (program, constants) = lower::lower(
        &checked,
        &types,
        &res,
        options.annotate,
        constants_as_uniforms,
    );
    let samplers = res
        .uniforms
        .iter()
        .filter_map(|(n, (_, s))| s.map(|s| (n.clone(), s)))
        .collect();
    let mut records = checked.records;
    if let Some(c) = &constants {
        records.names.push(c.record.clone());
        records.fields.push(
            c.fields
                .iter()
                .map(|(n, t, _)| (n.clone(), t.clone()))
                .collect(),
        );
    }
    Ok((program, records, samplers, constants))
}

/// Texture sampler states by uniform name.
type Samplers = Vec<(String, SamplerState)>;

/// What [`lower_document`] gives.
type Lowered = (
    program::Program,
    types::Records,
    Samplers,
    Option<lower::ConstantUniform>,
);

/// Checks a document and generates its VPL text, without verifying it.
pub fn generate(
    doc: &format::Document,
    options: Options,
) -> Result<(String, Samplers), Vec<GraphError>> {
    let (program, records, samplers, _) = lower_document(doc, options, false)?;
    Ok((emit::print(&program, &records), samplers))
}

/// Compiles a graph document (JSON text) to a verified VPL module.
/// `label` names the generated text in a (defect) VPL error.
pub fn compile(json: &str, label: &str, options: Options) -> Result<Compiled, CompileError> {
    // The document is dropped before the text and module are made, so
    // they reuse its memory (fewer fresh pages to fault in).
    let lowered = {
        let doc = parse(json).map_err(CompileError::Graph)?;
        lower_document(&doc, options, false).map_err(CompileError::Graph)?
    };
    compile_lowered(lowered, label).map(|(compiled, _)| compiled)
}

/// [`compile`] for a parsed document.
pub fn compile_document(
    doc: &format::Document,
    label: &str,
    options: Options,
) -> Result<Compiled, CompileError> {
    compile_lowered(
        lower_document(doc, options, false).map_err(CompileError::Graph)?,
        label,
    )
    .map(|(compiled, _)| compiled)
}

/// A graph compiled for a live preview ([`compile_preview`]).
#[derive(Debug)]
pub struct Preview {
    /// The module; its text is not the canonical graph text (its float
    /// and int constants are uniform fields).
    pub compiled: Compiled,
    /// The uniform holding the constants, with their values (`None`: the
    /// graph has none, or more than [`lower::MAX_UNIFORM_CONSTANTS`], and
    /// keeps them as literals).
    pub constants: Option<lower::ConstantUniform>,
}

/// Compiles a graph for a live preview: the module of [`compile`] except
/// that the live float and int constants are the fields of one record
/// uniform, declared after the graph's uniforms. Editing only constant
/// values then gives a byte-identical module (and target code), so a
/// renderer can keep its compiled program and set the uniform. Graph
/// errors are those of [`compile`].
pub fn compile_preview(json: &str, label: &str) -> Result<Preview, CompileError> {
    let lowered = {
        let doc = parse(json).map_err(CompileError::Graph)?;
        lower_document(&doc, Options::default(), true).map_err(CompileError::Graph)?
    };
    compile_lowered(lowered, label).map(|(compiled, constants)| Preview {
        compiled,
        constants,
    })
}

/// Prints, builds and verifies a lowered document.
fn compile_lowered(
    (program, records, samplers, constants): Lowered,
    label: &str,
) -> Result<(Compiled, Option<lower::ConstantUniform>), CompileError> {
    let text = emit::print(&program, &records);
    let module = build::module(&program, &records);
    // The program is done with: the verifier reuses its memory.
    drop(program);
    let verified =
        module.and_then(|module| vpl::verify::Verified::new(module).map_err(|e| e.to_string()));
    match verified {
        Ok(verified) => Ok((
            Compiled {
                text,
                verified,
                samplers,
            },
            constants,
        )),
        Err(message) => Err(CompileError::Vpl(Box::new(defect(&text, label, message)))),
    }
}

/// The error for a generated module the verifier refused (a compiler
/// defect): the reader's, located in the text, where reading the text
/// fails too; otherwise the build's message at the text's start.
fn defect(text: &str, label: &str, message: String) -> vpl::text::Error {
    match vpl::text::read_verified(text.as_bytes(), label) {
        Err(e) => e,
        Ok(_) => vpl::text::Error {
            kind: vpl::text::ErrorKind::Semantic,
            message: format!("the built module differs from its text: {message}"),
            label: label.to_string(),
            position: vpl::ir::Span {
                offset: 0,
                line: 1,
                column: 1,
            },
            verify: None,
        },
    }
}
