//! The explicit target record of an AOT build (C0-EXEC-003): every field
//! that makes up a native output's identity, supplied by the caller. The
//! build never queries host CPU capabilities; only the convenience form
//! ([`TargetRecord::convenience`]) discovers LLVM's default triple, and it
//! marks its record as not reproducibility evidence.

use crate::error::LlvmError;
use serde::{Deserialize, Serialize};

/// The record format's identifier.
pub const FORMAT: &str = "irkit.zlm.target-record/1";

/// The identity of a native output (JSON, `docs/zlm/llvm-engines.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetRecord {
    /// Always [`FORMAT`].
    pub format: String,
    /// LLVM target triple (`x86_64-pc-linux-gnu`).
    pub triple: String,
    /// CPU baseline (`x86-64`, `x86-64-v2`, `generic`); never `native`.
    pub cpu: String,
    /// Enabled features, LLVM's comma-separated `+feat`/`-feat` list (may be empty).
    pub features: String,
    /// `O0`, `O1`, `O2` or `O3`: the LLVM pass pipeline and code generation level.
    pub optimization: String,
    /// `default`, `static`, `pic` or `dynamic-no-pic`.
    pub relocation: String,
    /// `default`, `small`, `kernel`, `medium` or `large`.
    pub code_model: String,
    /// The LLVM version that must perform the build (`19.1.7`).
    pub backend_version: String,
    /// The linker program of linked outputs (`cc`).
    pub linker: String,
    /// The linker's identity: the first line of `LINKER --version`.
    pub linker_version: String,
    /// The host ABI the output is built for (`x86_64-linux-gnu-lp64`).
    pub host_abi: String,
    /// Whether the record is reproducibility evidence. Written by the tool:
    /// true for a record supplied with `--target-record`, false for the
    /// convenience form.
    #[serde(default)]
    pub reproducible: bool,
    /// Why a record is not evidence (written by the tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The artifact address (hex) of the payload the output was built from
    /// (written by the tool, [`TargetRecord::built_from`]; a record read
    /// with `--target-record` names none until then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<String>,
}

/// The LLVM version this crate is linked against.
pub fn backend_version() -> String {
    let (a, b, c) = inkwell::support::get_llvm_version();
    format!("{a}.{b}.{c}")
}

/// The first line of `program --version`, or an error.
pub fn linker_identity(program: &str) -> Result<String, LlvmError> {
    let out = std::process::Command::new(program)
        .arg("--version")
        .output()
        .map_err(|e| LlvmError::Io(format!("{program}: {e}")))?;
    if !out.status.success() {
        return Err(LlvmError::Io(format!("{program} --version failed")));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string())
}

impl TargetRecord {
    /// Parses a JSON record; every field is required and checked
    /// ([`TargetRecord::check`]). The result is marked reproducible.
    pub fn parse(text: &str) -> Result<TargetRecord, LlvmError> {
        let mut r: TargetRecord =
            serde_json::from_str(text).map_err(|e| LlvmError::Record(e.to_string()))?;
        r.check()?;
        r.reproducible = true;
        r.note = None;
        r.artifact = None;
        Ok(r)
    }

    /// The convenience record: LLVM's default triple, the generic CPU and
    /// no features (never the host's), `O2`, PIC, the default code model,
    /// and `linker` as found on this machine. Not reproducibility evidence.
    pub fn convenience(linker: &str) -> Result<TargetRecord, LlvmError> {
        crate::llvm_init::init();
        let triple = inkwell::targets::TargetMachine::get_default_triple()
            .as_str()
            .to_string_lossy()
            .into_owned();
        Ok(TargetRecord {
            format: FORMAT.into(),
            host_abi: format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS),
            triple,
            cpu: "generic".into(),
            features: String::new(),
            optimization: "O2".into(),
            relocation: "pic".into(),
            code_model: "default".into(),
            backend_version: backend_version(),
            linker: linker.into(),
            linker_version: linker_identity(linker)?,
            reproducible: false,
            note: Some(
                "convenience form: LLVM's default triple was discovered on this machine; not reproducibility evidence"
                    .into(),
            ),
            artifact: None,
        })
    }

    /// Checks every field's form, and that the linked LLVM is the record's backend.
    pub fn check(&self) -> Result<(), LlvmError> {
        let bad = |m: String| Err(LlvmError::Record(m));
        if self.format != FORMAT {
            return bad(format!("format must be {FORMAT:?}"));
        }
        for (name, v) in [
            ("triple", &self.triple),
            ("cpu", &self.cpu),
            ("linker", &self.linker),
            ("linker_version", &self.linker_version),
            ("host_abi", &self.host_abi),
        ] {
            if v.trim().is_empty() || v.contains(['\n', '\r']) {
                return bad(format!("{name} must be a non-empty single line"));
            }
        }
        if self.cpu == "native" || self.cpu == "host" {
            return bad("cpu must name a baseline, not the ambient host CPU".into());
        }
        if !self.features.is_empty()
            && !self
                .features
                .split(',')
                .all(|f| f.len() > 1 && (f.starts_with('+') || f.starts_with('-')))
        {
            return bad("features must be a comma-separated list of +feature/-feature".into());
        }
        self.opt_level()?;
        self.reloc()?;
        self.code_model_value()?;
        let have = backend_version();
        if self.backend_version != have {
            return bad(format!(
                "backend_version {} does not match the linked LLVM {have}",
                self.backend_version
            ));
        }
        Ok(())
    }

    pub(crate) fn opt_level(
        &self,
    ) -> Result<(inkwell::OptimizationLevel, &'static str), LlvmError> {
        use inkwell::OptimizationLevel::*;
        Ok(match self.optimization.as_str() {
            "O0" => (None, "O0"),
            "O1" => (Less, "O1"),
            "O2" => (Default, "O2"),
            "O3" => (Aggressive, "O3"),
            o => return Err(LlvmError::Record(format!("optimization {o:?}: O0–O3"))),
        })
    }

    pub(crate) fn reloc(&self) -> Result<inkwell::targets::RelocMode, LlvmError> {
        use inkwell::targets::RelocMode::*;
        Ok(match self.relocation.as_str() {
            "default" => Default,
            "static" => Static,
            "pic" => PIC,
            "dynamic-no-pic" => DynamicNoPic,
            r => {
                return Err(LlvmError::Record(format!(
                    "relocation {r:?}: default, static, pic or dynamic-no-pic"
                )));
            }
        })
    }

    pub(crate) fn code_model_value(&self) -> Result<inkwell::targets::CodeModel, LlvmError> {
        use inkwell::targets::CodeModel::*;
        Ok(match self.code_model.as_str() {
            "default" => Default,
            "small" => Small,
            "kernel" => Kernel,
            "medium" => Medium,
            "large" => Large,
            c => {
                return Err(LlvmError::Record(format!(
                    "code_model {c:?}: default, small, kernel, medium or large"
                )));
            }
        })
    }

    /// The target materialization record (C0-ART-004) of an output built
    /// under this record from the payload whose artifact address is
    /// `artifact`: this record naming it, as the ancillary record
    /// (`zlm::ancillary::TargetMaterialization`, docs/zlm/ancillary.md).
    pub fn built_from(&self, artifact: &zlm::Id) -> zlm::ancillary::TargetMaterialization {
        let mut named = self.clone();
        named.artifact = Some(zlm::hash::to_hex(artifact));
        zlm::ancillary::TargetMaterialization {
            artifact: *artifact,
            record: named.to_json(),
        }
    }

    /// The record as written next to an output (pretty JSON, fixed field order).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}
