//! `irkit vpl <verb>`: check and format canonical VPL text.

use crate::args::{FormatArgs, InputArgs, InputsArgs};
use crate::diag::{Diagnostic, Format};
use crate::error::{CliError, Origin, Outcome};
use crate::io::{read, write};
use std::path::Path;

/// Verbs of `irkit vpl`.
#[derive(clap::Subcommand)]
pub enum Verb {
    /// Read and verify VPL text files; exit 1 if any is invalid.
    Check {
        #[command(flatten)]
        inputs: InputsArgs,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Print the canonical text of a VPL file.
    Fmt {
        #[command(flatten)]
        input: InputArgs,
        /// Write the canonical text here instead of standard output.
        #[arg(short = 'o', long = "output")]
        output: Option<std::path::PathBuf>,
        /// Print nothing; exit 1 if the file is not already canonical.
        #[arg(long, conflicts_with = "output")]
        check: bool,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Compile to GLSL 4.20 core: NAME.vert, NAME.frag, NAME.reflect.json.
    ///
    /// FILE may also name a built-in program as `builtin:NAME`, or be a material graph (`.json`).
    Glsl(crate::vpl_glsl_cmd::GlslArgs),
    /// Compile for a named target (`--target glsl-420`) into a directory.
    ///
    /// FILE may also name a built-in program as `builtin:NAME`, or be a material graph (`.json`).
    Compile(crate::vpl_glsl_cmd::CompileArgs),
    /// Draw a full-screen quad with the program headless and write a PNG.
    ///
    /// FILE may also name a built-in program as `builtin:NAME`, or be a material graph (`.json`).
    Render(crate::vpl_glsl_cmd::RenderArgs),
    /// Compile a material graph (JSON, docs/vpl/graph.md) to canonical VPL text.
    Graph(crate::vpl_graph_cmd::GraphArgs),
    /// Serve the VPL playground (editor, diagnostics, per-target code, WebGL preview).
    Playground(crate::vpl_playground_cmd::PlaygroundArgs),
}

impl Verb {
    /// The verb's `--format` (`human` for a verb without one).
    pub fn format(&self) -> Format {
        match self {
            Verb::Check { fmt, .. } | Verb::Fmt { fmt, .. } => fmt.format,
            Verb::Glsl(a) => a.fmt.format,
            Verb::Compile(a) => a.fmt.format,
            Verb::Render(a) => a.fmt.format,
            Verb::Graph(a) => a.fmt.format,
            Verb::Playground(_) => Format::Human,
        }
    }
}

/// A `format` diagnostic at the first place where `source` differs from
/// its canonical text.
fn not_canonical(label: &str, source: &str, canonical: &str) -> Diagnostic {
    let offset = source
        .char_indices()
        .zip(canonical.chars())
        .find(|((_, a), b)| a != b)
        .map(|((i, _), _)| i)
        .unwrap_or_else(|| source.len().min(canonical.len()));
    let (mut line, mut column) = (1u64, 1u64);
    let mut chars = source[..offset].chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' | '\n' => {
                if c == '\r' && chars.peek() == Some(&'\n') {
                    chars.next();
                }
                line += 1;
                column = 1;
            }
            _ => column += 1,
        }
    }
    Diagnostic {
        kind: "format".to_string(),
        code: Some(vpl::code::NOT_CANONICAL.to_string()),
        message: "not in canonical form (first difference here; `irkit vpl fmt` rewrites it)"
            .to_string(),
        label: label.to_string(),
        offset: Some(offset as u64),
        line: Some(line),
        column: Some(column),
    }
}

/// Runs one `irkit vpl` verb.
pub fn run(verb: Verb) -> Result<Outcome, CliError> {
    match verb {
        Verb::Check { inputs, .. } => check(&inputs.files),
        Verb::Fmt {
            input,
            output,
            check,
            ..
        } => fmt(&input.file, output.as_deref(), check),
        Verb::Glsl(args) => crate::vpl_glsl_cmd::glsl(args),
        Verb::Compile(args) => crate::vpl_glsl_cmd::compile(args),
        Verb::Render(args) => match args.driver {
            // Without --driver: GL, or the CPU executor where no GL context exists.
            None => match crate::vpl_glsl_cmd::render(&args) {
                Err(CliError::Unavailable { .. }) => crate::vpl_cpu_cmd::render(&args),
                other => other,
            },
            Some(crate::vpl_glsl_cmd::Driver::Gl) => crate::vpl_glsl_cmd::render(&args),
            Some(crate::vpl_glsl_cmd::Driver::Vulkan) => crate::vpl_vk_cmd::render(&args),
            Some(crate::vpl_glsl_cmd::Driver::Webgl) => crate::vpl_webgl_cmd::render(args),
            Some(crate::vpl_glsl_cmd::Driver::Cpu) => crate::vpl_cpu_cmd::render(&args),
        },
        Verb::Graph(args) => crate::vpl_graph_cmd::graph(args),
        Verb::Playground(args) => crate::vpl_playground_cmd::playground(args),
    }
}

/// Reads and verifies every file; the errors of all of them are reported.
fn check(files: &[std::path::PathBuf]) -> Result<Outcome, CliError> {
    let mut errors = Vec::new();
    for path in files {
        let (label, bytes) = match read(path) {
            Ok(input) => input,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        if let Err(e) = vpl::text::read(&bytes, &label) {
            let origin = Origin::text(&label, std::str::from_utf8(&bytes).ok());
            errors.push(CliError::diagnosed(&e, &origin));
        }
    }
    if errors.is_empty() {
        Ok(Outcome::Success)
    } else {
        Err(CliError::several(errors))
    }
}

fn fmt(path: &Path, output: Option<&Path>, check: bool) -> Result<Outcome, CliError> {
    let (label, bytes) = read(path)?;
    let source = std::str::from_utf8(&bytes).ok();
    // The module just read was verified and is not changed: it is written
    // (printed and read back) without a second verification.
    let text = vpl::text::read_verified(&bytes, &label)
        .and_then(|m| vpl::text::write_verified(&m))
        .map_err(|e| CliError::diagnosed(&e, &Origin::text(&label, source)))?;
    if check {
        if text.as_bytes() == bytes.as_slice() {
            return Ok(Outcome::Success);
        }
        let d = not_canonical(&label, source.unwrap_or(""), &text);
        return Err(CliError::invalid(vec![d], source));
    }
    write(output, text.as_bytes())?;
    Ok(Outcome::Success)
}
