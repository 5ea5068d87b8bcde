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
            "verify",
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
                let mut d = Diagnostic::new(other.kind(), None, other.to_string(), origin.label);
                d.offset = other.offset();
                vec![d]
            }
        }
    }
}

impl Diagnose for rvnlib::link::LinkError {
    /// `origin` is the linked output; a verification error names the input
    /// library it is in.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        match self {
            rvnlib::link::LinkError::Verify {
                origin: input,
                error,
                library,
            } => error
                .diagnostics(&Origin::binary(input))
                .into_iter()
                .map(|mut d| {
                    d.message = format!("library `{library}`: {}", d.message);
                    d
                })
                .collect(),
            other => vec![Diagnostic::new(
                other.kind(),
                other.code(),
                other.to_string(),
                origin.label,
            )],
        }
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
    /// The kind follows from the code: `ZLM-SYNTAX` is the text reader's,
    /// the checker's `ZLM-C-…` codes and `ZLM-INTERFACE` are semantic, every
    /// other code is the artifact decoder's. For a text input the offset is
    /// also shown as line and column.
    fn diagnostics(&self, origin: &Origin<'_>) -> Vec<Diagnostic> {
        let kind = if self.code == "ZLM-SYNTAX" {
            "syntactic"
        } else if self.code.starts_with("ZLM-C-") || self.code == "ZLM-INTERFACE" {
            "semantic"
        } else {
            "encoding"
        };
        let offset = self.offset.and_then(|o| usize::try_from(o).ok());
        let mut d = Diagnostic::new(kind, Some(self.code), self.message.clone(), origin.label)
            .at(offset, origin.text);
        d.offset = self.offset;
        vec![d]
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
