//! `irkit vpl <verb>`: check VPL text, write its canonical form, compile,
//! render, compile material graphs and serve the playground.

use crate::args::{FormatArgs, InputArgs, InputsArgs};
use crate::diag::{Diagnostic, Format};
use crate::error::{CliError, Origin, Outcome};
use crate::io::write;
use crate::vpl_glsl_cmd::read_source;
use std::path::Path;

/// Verbs of `irkit vpl`.
#[derive(clap::Subcommand)]
pub enum Verb {
    /// Read and verify VPL text files; exit 1 if any is invalid.
    ///
    /// FILE may also name a built-in program as `builtin:NAME`, or be a material graph (`.json`).
    Check {
        #[command(flatten)]
        inputs: InputsArgs,
        #[command(flatten)]
        fmt: FormatArgs,
    },
    /// Print the spec's canonical text of a VPL file.
    ///
    /// Canonical text is the spec's one spelling of a module: it renames every
    /// identifier (`t0`, `u0`, `f0`, `b0`, `r0` ...) and drops every comment. It is
    /// not a formatter that keeps your names: the input is never overwritten
    /// unless `--in-place` is given. FILE may also be `builtin:NAME` or a
    /// material graph (`.json`). `irkit vpl fmt` is the same verb (the name the
    /// spec's corpus runner and earlier scripts use).
    #[command(visible_alias = "fmt")]
    Canon {
        #[command(flatten)]
        input: InputArgs,
        /// Write the canonical text here instead of standard output (never the input
        /// itself: that takes `--in-place`).
        #[arg(short = 'o', long = "output", conflicts_with = "in_place")]
        output: Option<std::path::PathBuf>,
        /// Replace FILE with its canonical text (renaming its identifiers and
        /// dropping its comments).
        #[arg(long)]
        in_place: bool,
        /// Print nothing; exit 1 if the file is not already canonical.
        #[arg(long, conflicts_with_all = ["output", "in_place"])]
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
            Verb::Check { fmt, .. } | Verb::Canon { fmt, .. } => fmt.format,
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
        message: "not in canonical form (first difference here; `irkit vpl canon` prints the canonical text)"
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
        Verb::Check { inputs, fmt } => check(&inputs.files, fmt.format),
        Verb::Canon {
            input,
            output,
            in_place,
            check,
            ..
        } => canon(&input.file, output.as_deref(), in_place, check),
        Verb::Glsl(args) => crate::vpl_glsl_cmd::glsl(args),
        Verb::Compile(args) => crate::vpl_glsl_cmd::compile(args),
        Verb::Render(args) => match args.driver {
            // Without --driver: GL, or the CPU executor where no GL context exists.
            None => match crate::vpl_glsl_cmd::gl_context() {
                Err(_) => crate::vpl_cpu_cmd::render(&args),
                Ok(context) => crate::vpl_glsl_cmd::render(&context, &args),
            },
            Some(crate::vpl_glsl_cmd::Driver::Gl) => {
                crate::vpl_glsl_cmd::render(&crate::vpl_glsl_cmd::gl_context()?, &args)
            }
            Some(crate::vpl_glsl_cmd::Driver::Vulkan) => crate::vpl_vk_cmd::render(&args),
            Some(crate::vpl_glsl_cmd::Driver::Webgl) => crate::vpl_webgl_cmd::render(args),
            Some(crate::vpl_glsl_cmd::Driver::Cpu) => crate::vpl_cpu_cmd::render(&args),
        },
        Verb::Graph(args) => crate::vpl_graph_cmd::graph(args),
        Verb::Playground(args) => crate::vpl_playground_cmd::playground(args),
    }
}

/// Reads and verifies every file; the errors of all of them are reported.
/// A file that verifies is `LABEL: ok` in the human form (docs/cli.md).
fn check(files: &[std::path::PathBuf], format: Format) -> Result<Outcome, CliError> {
    let mut errors = Vec::new();
    for path in files {
        let source = match read_source(path) {
            Ok(source) => source,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        match vpl::text::read(&source.bytes, &source.label) {
            Ok(_) if format == Format::Human => {
                write(None, format!("{}: ok\n", source.label).as_bytes())?;
            }
            Ok(_) => {}
            Err(e) => {
                let origin = Origin::text(&source.label, std::str::from_utf8(&source.bytes).ok());
                errors.push(CliError::diagnosed(&e, &origin));
            }
        }
    }
    if errors.is_empty() {
        Ok(Outcome::Success)
    } else {
        Err(CliError::several(errors))
    }
}

/// Whether `output` names the same file as `input` (an existing file
/// reached by another path counts).
fn same_file(input: &Path, output: &Path) -> bool {
    if input == output {
        return true;
    }
    match (std::fs::canonicalize(input), std::fs::canonicalize(output)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn canon(
    path: &Path,
    output: Option<&Path>,
    in_place: bool,
    check: bool,
) -> Result<Outcome, CliError> {
    let plain_file = path.as_os_str() != "-"
        && !path.to_str().is_some_and(|s| s.starts_with("builtin:"))
        && !crate::vpl_graph_cmd::is_graph(path);
    if in_place && !plain_file {
        return Err(CliError::usage(format!(
            "--in-place needs a VPL file, not {}",
            path.display()
        )));
    }
    if let Some(out) = output
        && plain_file
        && same_file(path, out)
    {
        return Err(CliError::usage(format!(
            "refusing to overwrite the input {} with its canonical text, which renames its \
             identifiers and drops its comments; pass --in-place to do that",
            path.display()
        )));
    }
    let source = read_source(path)?;
    let label = source.label.as_str();
    let text_source = std::str::from_utf8(&source.bytes).ok();
    // The module just read was verified and is not changed: it is written
    // (printed and read back) without a second verification.
    let text = vpl::text::read_verified(&source.bytes, label)
        .and_then(|m| vpl::text::write_verified(&m))
        .map_err(|e| CliError::diagnosed(&e, &Origin::text(label, text_source)))?;
    if check {
        if text.as_bytes() == source.bytes.as_slice() {
            return Ok(Outcome::Success);
        }
        let d = not_canonical(label, text_source.unwrap_or(""), &text);
        return Err(CliError::invalid(vec![d], text_source));
    }
    let destination = if in_place { Some(path) } else { output };
    write(destination, text.as_bytes())?;
    Ok(Outcome::Success)
}
