//! `irkit vpl <verb>`: check and format canonical VPL text.

use crate::diag::{self, Diagnostic, Format};
use crate::io::{read_input, write_output};
use crate::{EXIT_INVALID, EXIT_USAGE};
use std::path::PathBuf;
use std::process::ExitCode;

/// Verbs of `irkit vpl`.
#[derive(clap::Subcommand)]
pub enum Verb {
    /// Read and verify VPL text files; exit 1 if any is invalid.
    Check {
        /// Input files (`-` for standard input).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Diagnostic style.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Print the canonical text of a VPL file.
    Fmt {
        /// Input file (`-` for standard input).
        file: PathBuf,
        /// Write the canonical text here instead of standard output.
        #[arg(short = 'o', long = "output")]
        output: Option<PathBuf>,
        /// Print nothing; exit 1 if the file is not already canonical.
        #[arg(long, conflicts_with = "output")]
        check: bool,
        /// Diagnostic style.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Compile to GLSL 4.20 core: NAME.vert, NAME.frag, NAME.reflect.json.
    Glsl(crate::vpl_glsl_cmd::GlslArgs),
    /// Compile for a named target (`--target glsl-420`) into a directory.
    Compile(crate::vpl_glsl_cmd::CompileArgs),
    /// Draw a full-screen quad with the program headless and write a PNG.
    Render(crate::vpl_glsl_cmd::RenderArgs),
    /// Serve the VPL playground (editor, diagnostics, per-target code, WebGL preview).
    Playground(crate::vpl_playground_cmd::PlaygroundArgs),
}

/// Converts a text error into a shared diagnostic.
fn diagnostic(e: &vpl::text::Error) -> Diagnostic {
    Diagnostic {
        kind: e.kind.name().to_string(),
        code: Some(e.code().to_string()),
        message: e.message.clone(),
        label: e.label.clone(),
        offset: Some(u64::from(e.position.offset)),
        line: Some(u64::from(e.position.line)),
        column: Some(u64::from(e.position.column)),
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

fn usage_error(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(EXIT_USAGE)
}

/// Runs one `irkit vpl` verb.
pub fn run(verb: Verb) -> ExitCode {
    match verb {
        Verb::Check { files, format } => check(&files, format),
        Verb::Fmt {
            file,
            output,
            check,
            format,
        } => fmt(&file, output.as_deref(), check, format),
        Verb::Glsl(args) => crate::vpl_glsl_cmd::glsl(args),
        Verb::Compile(args) => crate::vpl_glsl_cmd::compile(args),
        Verb::Render(args) => match args.driver {
            crate::vpl_glsl_cmd::Driver::Gl => crate::vpl_glsl_cmd::render(args),
            crate::vpl_glsl_cmd::Driver::Vulkan => crate::vpl_vk_cmd::render(&args),
            crate::vpl_glsl_cmd::Driver::Webgl => crate::vpl_webgl_cmd::render(args),
        },
        Verb::Playground(args) => crate::vpl_playground_cmd::playground(args),
    }
}

fn check(files: &[PathBuf], format: Format) -> ExitCode {
    let mut status = 0u8;
    for path in files {
        let (label, bytes) = match read_input(path) {
            Ok(input) => input,
            Err(message) => {
                eprintln!("error: {message}");
                status = status.max(EXIT_USAGE);
                continue;
            }
        };
        if let Err(e) = vpl::text::read(&bytes, &label) {
            diag::emit(&[diagnostic(&e)], format, std::str::from_utf8(&bytes).ok());
            status = status.max(EXIT_INVALID);
        }
    }
    ExitCode::from(status)
}

fn fmt(
    path: &std::path::Path,
    output: Option<&std::path::Path>,
    check: bool,
    format: Format,
) -> ExitCode {
    let (label, bytes) = match read_input(path) {
        Ok(input) => input,
        Err(message) => return usage_error(&message),
    };
    // The module just read was verified and is not changed: it is written
    // (printed and read back) without a second verification.
    let canonical =
        vpl::text::read_verified(&bytes, &label).and_then(|m| vpl::text::write_verified(&m));
    let text = match canonical {
        Ok(text) => text,
        Err(e) => {
            diag::emit(&[diagnostic(&e)], format, std::str::from_utf8(&bytes).ok());
            return ExitCode::from(EXIT_INVALID);
        }
    };
    if check {
        if text.as_bytes() == bytes.as_slice() {
            return ExitCode::SUCCESS;
        }
        let source = std::str::from_utf8(&bytes).ok();
        diag::emit(
            &[not_canonical(&label, source.unwrap_or(""), &text)],
            format,
            source,
        );
        return ExitCode::from(EXIT_INVALID);
    }
    match write_output(output, text.as_bytes()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => usage_error(&message),
    }
}
