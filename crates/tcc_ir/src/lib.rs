//! TCC program artifacts (`tcc-program-format.md`): the artifact types,
//! the JSON codec, the canonical encoding and hash, and validation.
//!
//! Data flow: bytes → [`decode_artifact`] (strict JSON reader, typed
//! [`IrError::InvalidEncoding`] with a JSON path) → [`Artifact`] →
//! [`validate`] (every rule of the spec's "Validation" section, typed
//! [`ValidationError`]s naming function and pc) → an engine. The other way,
//! [`encode_artifact`] writes canonical JSON and [`compute_hash`] digests it.
// Library code does not unwrap (tests may); see the root Cargo.toml's lints.
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

pub mod artifact;
pub mod canonical;
pub mod constant;
pub mod decode;
pub mod encode;
pub mod error;
pub mod features;
pub mod id;
pub mod instruction;
pub mod validate;

pub use artifact::{
    Artifact, ENGINE_FORMAT_VERSION, Envelope, Function, FunctionId, FunctionIndex,
    LANGUAGE_SEMANTICS_VERSIONS, LanguageSemantics, Program, RuntimeModule, Span,
};
pub use canonical::{to_canonical, write_canonical};
pub use constant::Constant;
pub use decode::{
    FunctionMap, MAX_INPUT_BYTES, SourceMap, decode_artifact, decode_artifact_with_map,
};
pub use encode::{compute_hash, encode_artifact, encode_artifact_string, hash_input};
pub use error::{EncodingErrorKind, IrError, Location, ValidationError};
pub use features::FeatureSet;
pub use instruction::{Instruction, InstructionGroup};
pub use validate::{validate, validate_all};
