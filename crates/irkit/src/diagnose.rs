//! Each library error's one conversion into CLI diagnostics ([`Diagnose`]).
//! Verbs turn a library error into a [`crate::error::CliError`] with
//! `CliError::diagnosed(&error, &origin)`, never by hand.

use crate::diag::Diagnostic;
use crate::error::{Diagnose, Origin};

impl Diagnose for vpl::text::Error {
    /// The error names its own label (the one given to the reader).
    fn diagnostics(&self, _origin: &Origin<'_>) -> Vec<Diagnostic> {
        vec![Diagnostic {
            kind: self.kind.name().to_string(),
            code: Some(self.code().to_string()),
            message: self.message.clone(),
            label: self.label.clone(),
            offset: Some(u64::from(self.position.offset)),
            line: Some(u64::from(self.position.line)),
            column: Some(u64::from(self.position.column)),
        }]
    }
}

impl Diagnose for rvnlib::verify::VerifyError {
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        let mut message = String::new();
        if let Some(item) = &self.item {
            message.push_str(&format!("in `{item}`"));
        }
        if !self.path.is_empty() {
            message.push_str(&format!(" at {}", self.path));
        }
        if !message.is_empty() {
            message.push_str(": ");
        }
        message.push_str(&self.message);
        vec![Diagnostic::new(
            "semantic",
            Some(self.code),
            message,
            origin.label,
        )]
    }
}

impl Diagnose for rvnlib::ReadError {
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        match self {
            rvnlib::ReadError::Invalid(errors) => {
                errors.iter().flat_map(|e| e.diagnostics(origin)).collect()
            }
            other => {
                let mut d =
                    Diagnostic::new(other.kind(), other.code(), other.to_string(), origin.label);
                d.offset = other.offset();
                vec![d]
            }
        }
    }
}

impl Diagnose for rvnlib::json::JsonError {
    /// A JSON text read on its own (`irkit rvn pack`): offsets are into that
    /// text, so they also give line and column.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        vec![
            Diagnostic::new(
                "encoding",
                Some(self.code()),
                self.to_string(),
                origin.label,
            )
            .at(self.offset(), origin.text),
        ]
    }
}

impl Diagnose for rvnlib::link::LinkError {
    /// Points at the input the error is about (the library holding the second
    /// of two conflicting definitions, or the item at fault); `origin` only
    /// for an error about no input (an unknown `--entry`).
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        let label = self.origin().unwrap_or(origin.label);
        match self {
            rvnlib::link::LinkError::Verify { error, library, .. } => error
                .diagnostics(&Origin::binary(label))
                .into_iter()
                .map(|mut d| {
                    d.message = format!("library `{library}`: {}", d.message);
                    d
                })
                .collect(),
            other => vec![Diagnostic::new(
                other.kind(),
                Some(other.code()),
                other.to_string(),
                label,
            )],
        }
    }
}

impl Diagnose for rvnlib::lookup::LookupError {
    /// `origin` is the library searched.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        vec![Diagnostic::new(
            "name",
            Some(self.code()),
            self.to_string(),
            origin.label,
        )]
    }
}

impl Diagnose for tcc_ir::IrError {
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        let (message, offset) = match self {
            tcc_ir::IrError::InvalidEncoding {
                path,
                message,
                offset,
                ..
            } => (format!("{message} (at {path})"), Some(*offset)),
            tcc_ir::IrError::Invalid(v) => (v.to_string(), None),
        };
        vec![
            Diagnostic::new("encoding", Some(self.code()), message, origin.label)
                .at(offset, origin.text),
        ]
    }
}

impl Diagnose for tcc_frontend::FrontendError {
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        vec![Diagnostic {
            kind: "frontend".into(),
            code: Some(self.code.as_str().into()),
            message: self.message.clone(),
            label: origin.label.into(),
            offset: Some(self.offset as u64),
            line: Some(u64::from(self.line)),
            column: Some(u64::from(self.column)),
        }]
    }
}

impl Diagnose for tcc_engine::EngineError {
    /// Without a location; `tcc run` and `tcc step` add the source position
    /// of the error's site where the program has one.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        vec![Diagnostic::new(
            self.kind(),
            Some(self.code()),
            self.to_string(),
            origin.label,
        )]
    }
}

impl Diagnose for zlm::Error {
    /// The kind follows from the code ([`zlm_kind`]), and for a text input
    /// ([`zlm_text_kind`]) from what was read. For a text input the offset
    /// is also shown as line and column.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        let kind = match origin.text {
            Some(_) => zlm_text_kind(self.code),
            None => zlm_kind(self.code),
        };
        let offset = self.offset.and_then(|o| usize::try_from(o).ok());
        let mut d = Diagnostic::new(kind, Some(self.code), self.message.clone(), origin.label)
            .at(offset, origin.text);
        d.offset = self.offset;
        vec![d]
    }
}

/// The kind of a ZLM code, from the closed set of `docs/diagnostics.md`:
/// `syntactic` for the text reader; `semantic` for the checker's `ZLM-C-…`
/// codes and for model facts (shapes, types, duplicates, layouts, the
/// interface); `link` for imports, packages and cross-module symbols;
/// `unsupported` and `limit` for those; `encoding` for the bytes themselves.
///
/// A `.zlt` text input has no encoding of its own: the references and
/// facts a code would find malformed in bytes (`ZLM-REF`: an operand,
/// block, loan or path that names nothing) are what the text means, so
/// there the `encoding` codes are `semantic` ([`zlm_text_kind`]).
fn zlm_kind(code: &str) -> &'static str {
    match code {
        "ZLM-SYNTAX" => "syntactic",
        "ZLM-SHAPE" | "ZLM-MODEL" | "ZLM-DUPLICATE" | "ZLM-LAYOUT" | "ZLM-INTERFACE" => "semantic",
        "ZLM-IMPORT" | "ZLM-PACKAGE" | "ZLM-LINK" => "link",
        "ZLM-UNSUPPORTED" => "unsupported",
        "ZLM-LIMIT" => "limit",
        c if c.starts_with("ZLM-C-") => "semantic",
        _ => "encoding",
    }
}

/// The kind of a ZLM code about a text module (a `.zlt` input, or the
/// source an artifact's source map points into): [`zlm_kind`], with
/// `semantic` for the codes that are `encoding` in bytes.
pub fn zlm_text_kind(code: &str) -> &'static str {
    match zlm_kind(code) {
        "encoding" => "semantic",
        kind => kind,
    }
}

impl Diagnose for zlm::interp::Fault {
    /// A fault (or an exhausted limit) of a run, with its documented code.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        use zlm::interp::FaultKind::*;
        let code = match &self.kind {
            Overflow => "ZLM-FAULT-OVERFLOW",
            DivideByZero => "ZLM-FAULT-DIV-ZERO",
            ShiftRange => "ZLM-FAULT-SHIFT",
            Contract(_) => "ZLM-FAULT-CONTRACT",
            Assert => "ZLM-FAULT-ASSERT",
            Bounds => "ZLM-FAULT-BOUNDS",
            Tag => "ZLM-FAULT-TAG",
            StepLimit => "ZLM-LIMIT-STEPS",
            DepthLimit => "ZLM-LIMIT-DEPTH",
            ByteLimit => "ZLM-LIMIT-BYTES",
            Internal => "ZLM-FAULT-INTERNAL",
        };
        vec![Diagnostic::new(
            "fault",
            Some(code),
            self.to_string(),
            origin.label,
        )]
    }
}

impl Diagnose for zlm::materialize::c::Refusal {
    /// A construct the C materializer (or the LLVM lowering) does not support.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        vec![Diagnostic::new(
            "unsupported",
            Some(zlm::materialize::c::REFUSED),
            self.detail(),
            origin.label,
        )]
    }
}
