//! The stable diagnostic codes of VPL reading and verification, in one
//! place (`docs/diagnostics.md` lists them with every other system's).
//!
//! A text error has the code of its class ([`LEXICAL`], [`SYNTACTIC`],
//! [`SEMANTIC`]) unless the verifier rejected the module, in which case it
//! has the code of the violated rule family (`VPL-V-…`, one per
//! [`crate::verify::Rule`]). The GLSL and naga target codes belong to their
//! backends (`backends::glsl::TargetErrorKind::code`,
//! `backends::naga_targets::LowerErrorKind::code`).

/// Encoding, trivia, string, number or word error (section 11 `LexicalError`).
pub const LEXICAL: &str = "VPL-LEXICAL";
/// Malformed form, token category, trailing input or nesting limit
/// (section 11 `SyntacticalError`).
pub const SYNTACTIC: &str = "VPL-SYNTACTIC";
/// Unknown or duplicate binding or invalid type found while reading
/// (section 11 `SemanticalError` raised before verification).
pub const SEMANTIC: &str = "VPL-SEMANTIC";
/// The input is valid but not in canonical form (`irkit vpl canon --check`).
pub const NOT_CANONICAL: &str = "VPL-FORMAT";

/// Verifier, section 3: containers, entries, names, handles.
pub const VERIFY_CONTAINER: &str = "VPL-V-CONTAINER";
/// Verifier, sections 3.1, 6, 6.3: interface declarations and linkage.
pub const VERIFY_INTERFACE: &str = "VPL-V-INTERFACE";
/// Verifier, section 4: type shapes, void placement, recursion.
pub const VERIFY_TYPE: &str = "VPL-V-TYPE";
/// Verifier, section 5.1: register declarations.
pub const VERIFY_REGISTER: &str = "VPL-V-REGISTER";
/// Verifier, sections 5.2 and 6.2: definite assignment of registers.
pub const VERIFY_DEFINITE_ASSIGNMENT: &str = "VPL-V-DEFINITE-ASSIGNMENT";
/// Verifier, sections 6 and 6.1: storage references and permissions.
pub const VERIFY_STORAGE: &str = "VPL-V-STORAGE";
/// Verifier, section 6.3: output definedness and helper summaries.
pub const VERIFY_OUTPUT: &str = "VPL-V-OUTPUT";
/// Verifier, section 7: operands, constructors, calls, extraction.
pub const VERIFY_INSTRUCTION: &str = "VPL-V-INSTRUCTION";
/// Verifier, section 8: terminators, returns, discard.
pub const VERIFY_CONTROL_FLOW: &str = "VPL-V-CONTROL-FLOW";
/// Verifier: an implementation resource bound (`docs/vpl/verifier.md`).
pub const VERIFY_LIMIT: &str = "VPL-V-LIMIT";

/// CPU executor (`exec`): a draw it does not support.
pub const EXEC_UNSUPPORTED: &str = "VPL-EXEC-UNSUPPORTED";
/// CPU executor: an invocation ran past its operation cap.
pub const EXEC_LIMIT: &str = "VPL-EXEC-LIMIT";
/// CPU executor: a draw request that does not fit the module.
pub const EXEC_REQUEST: &str = "VPL-EXEC-REQUEST";

/// A `--uniform` path that names no uniform value of the module
/// (`uniform_values`).
pub const UNIFORM_NAME: &str = "VPL-UNIFORM-NAME";
/// A `--uniform` value that does not fit its leaf's declared type or range.
pub const UNIFORM_VALUE: &str = "VPL-UNIFORM-VALUE";

/// Every code this module defines.
pub const ALL: &[&str] = &[
    LEXICAL,
    SYNTACTIC,
    SEMANTIC,
    NOT_CANONICAL,
    VERIFY_CONTAINER,
    VERIFY_INTERFACE,
    VERIFY_TYPE,
    VERIFY_REGISTER,
    VERIFY_DEFINITE_ASSIGNMENT,
    VERIFY_STORAGE,
    VERIFY_OUTPUT,
    VERIFY_INSTRUCTION,
    VERIFY_CONTROL_FLOW,
    VERIFY_LIMIT,
    EXEC_UNSUPPORTED,
    EXEC_LIMIT,
    EXEC_REQUEST,
    UNIFORM_NAME,
    UNIFORM_VALUE,
];
