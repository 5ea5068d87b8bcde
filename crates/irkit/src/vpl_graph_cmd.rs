//! `irkit vpl graph`: compile a material graph (JSON, docs/vpl/graph.md) to
//! canonical VPL; and the graph input of `vpl glsl|compile|render`.

use crate::args::{FormatArgs, InputArgs};
use crate::diag::Diagnostic;
use crate::error::{CliError, Outcome};
use crate::io::{read, write};
use std::path::{Path, PathBuf};

/// Arguments of `irkit vpl graph`.
#[derive(clap::Args)]
pub struct GraphArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Write the VPL text here instead of standard output.
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Precede each node's instructions with a `// id (kind)` comment (the
    /// same module; the text is then not canonical).
    #[arg(long)]
    pub annotate: bool,
    #[command(flatten)]
    pub fmt: FormatArgs,
}

/// Whether `path` names a graph (a `.json` file).
pub(crate) fn is_graph(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// A compiled graph file: its VPL text and its textures' sampler state.
pub(crate) struct GraphInput {
    pub(crate) text: String,
    pub(crate) samplers: Vec<(String, vpl_graph::SamplerState)>,
}

/// Compiles graph `bytes` (labelled `label`); graph errors become
/// diagnostics at the node they name.
pub(crate) fn compile(label: &str, bytes: &[u8], annotate: bool) -> Result<GraphInput, CliError> {
    let Ok(json) = std::str::from_utf8(bytes) else {
        let d = Diagnostic::new(
            "graph",
            Some(vpl_graph::ErrorKind::Json.code()),
            "the graph file is not UTF-8",
            label,
        );
        return Err(CliError::invalid(vec![d], None));
    };
    let options = vpl_graph::Options { annotate };
    match vpl_graph::compile(json, &format!("{label} (generated VPL)"), options) {
        Ok(c) => Ok(GraphInput {
            text: c.text,
            samplers: c.samplers,
        }),
        Err(vpl_graph::CompileError::Graph(errors)) => {
            let diagnostics = errors
                .iter()
                .map(|e| {
                    let message = match e.location() {
                        l if l.is_empty() => e.message.clone(),
                        l => format!("{l}: {}", e.message),
                    };
                    Diagnostic::new("graph", Some(e.kind.code()), message, label)
                        .at(e.source_offset(json), Some(json))
                })
                .collect();
            Err(CliError::invalid(diagnostics, Some(json)))
        }
        Err(e @ vpl_graph::CompileError::Vpl(_)) => Err(CliError::Rejected(e.to_string())),
    }
}

/// `irkit vpl graph`.
pub fn graph(args: GraphArgs) -> Result<Outcome, CliError> {
    let (label, bytes) = read(&args.input.file)?;
    let compiled = compile(&label, &bytes, args.annotate)?;
    write(args.output.as_deref(), compiled.text.as_bytes())?;
    Ok(Outcome::Success)
}

/// Gives every texture of a graph its recorded sampler state; a sampler
/// without a `--texture` file gets the checkerboard with that state.
pub(crate) fn apply_samplers(
    samplers: &[(String, vpl_graph::SamplerState)],
    textures: &mut Vec<(String, vpl_gl::Texture)>,
) {
    vpl_web::graph::apply_samplers(samplers, textures);
}
