//! Errors with stable codes and, for byte input, the offset they concern.

/// A rejection: a stable code, a message and the byte offset (artifact
/// input) or text offset (text input) it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Error {
    /// Stable code, e.g. `ZLM-SCHEMA` (docs/zlm/format.md lists them all).
    pub code: &'static str,
    /// Human-readable message naming the record or fact concerned.
    pub message: String,
    /// Byte offset in the artifact or text where known.
    pub offset: Option<u64>,
    /// The function body site the rejection concerns, where the checker
    /// knows it: how a `.zlt` input's line is found again through its
    /// positions ([`crate::text::site_position`]).
    pub site: Option<Site>,
}

/// Where in a function a rejection lies: the function, and the operation
/// where known: a flow operation `%B.O` (`block` and `op`), or a recipe
/// operation `%rE.O` of a cleanup edge (`edge` and `op`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// `Decl.function`, or the bare function name where the declaration
    /// is not known.
    pub function: String,
    /// Dense block ID where known (for a recipe, its edge's source block).
    pub block: Option<u32>,
    /// Operation ordinal where known: within the block, or within the
    /// recipe list of `edge` when that is set.
    pub op: Option<u32>,
    /// The cleanup edge whose recipe operation `op` is, when the rejection
    /// concerns a recipe operation rather than a flow operation.
    pub edge: Option<u32>,
}

impl Site {
    /// The operation the site names: `%rE.O` when it names a recipe,
    /// `%B.O` when it names a flow operation, else `None`.
    pub fn op_ref(&self) -> Option<crate::model::OpRef> {
        match (self.edge, self.block, self.op) {
            (Some(edge), _, Some(ordinal)) => Some(crate::model::OpRef::Recipe { edge, ordinal }),
            (None, Some(block), Some(ordinal)) => {
                Some(crate::model::OpRef::Flow { block, ordinal })
            }
            _ => None,
        }
    }
}

impl Error {
    /// An error without an offset.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            offset: None,
            site: None,
        }
    }
    /// An error at `offset`.
    pub fn at(code: &'static str, offset: u64, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            offset: Some(offset),
            site: None,
        }
    }
}

impl Error {
    /// This error, concerning the body of `function` (`Decl.function` or a
    /// bare function name) at no known operation.
    pub(crate) fn in_body(mut self, function: &str) -> Self {
        self.site = Some(Site {
            function: function.to_string(),
            block: None,
            op: None,
            edge: None,
        });
        self
    }

    /// This error, concerning operation `at` of the body of `function`
    /// (`Decl.function` or a bare function name).
    pub(crate) fn at_body_op(mut self, function: &str, at: crate::model::OpRef) -> Self {
        self.site = Some(Site::of_op(function, at));
        self
    }
}

impl Site {
    /// The site of operation `at` of `function`.
    pub(crate) fn of_op(function: &str, at: crate::model::OpRef) -> Site {
        let (block, op, edge) = match at {
            crate::model::OpRef::Flow { block, ordinal } => (Some(block), Some(ordinal), None),
            crate::model::OpRef::Recipe { edge, ordinal } => (None, Some(ordinal), Some(edge)),
        };
        Site {
            function: function.to_string(),
            block,
            op,
            edge,
        }
    }
}

/// Result alias.
pub type Result<T> = std::result::Result<T, Error>;

/// Stable error codes.
pub mod code {
    /// Wrong magic, header size, flags or reserved header bytes.
    pub const HEADER: &str = "ZLM-HEADER";
    /// Schema major/minor other than 1.9.
    pub const SCHEMA: &str = "ZLM-SCHEMA";
    /// Section sizes do not add up to the exact length (truncation, trailing bytes, overflow).
    pub const LENGTH: &str = "ZLM-LENGTH";
    /// A reference or range outside its table.
    pub const REF: &str = "ZLM-REF";
    /// A string slice that is not valid UTF-8 or not a whole pool entry.
    pub const STRING: &str = "ZLM-STRING";
    /// An unknown closed tag or reserved nonzero word.
    pub const TAG: &str = "ZLM-TAG";
    /// An operation/contract operand, result or auxiliary shape violation.
    pub const SHAPE: &str = "ZLM-SHAPE";
    /// A logical-model fact that is not admitted (kinds, ordinals, types).
    pub const MODEL: &str = "ZLM-MODEL";
    /// Duplicate logical ID or key.
    pub const DUPLICATE: &str = "ZLM-DUPLICATE";
    /// A carried ID or digest disagrees with the recomputed one.
    pub const ID: &str = "ZLM-ID";
    /// Bytes differ from the canonical encoding of their own logical projection
    /// (order, orphan records, derived fields, pool contents).
    pub const NONCANONICAL: &str = "ZLM-NONCANONICAL";
    /// The catalog identity is not zerglang.selfhost-intrinsics/1 or a
    /// catalog reference does not resolve.
    pub const CATALOG: &str = "ZLM-CATALOG";
    /// Import provider missing or stale.
    pub const IMPORT: &str = "ZLM-IMPORT";
    /// A documented implementation limit was exceeded.
    pub const LIMIT: &str = "ZLM-LIMIT";
    /// Text-form syntax error.
    pub const SYNTAX: &str = "ZLM-SYNTAX";
    /// Declarations that store each other inline: an owned-payload cycle
    /// without a finite layout (C0-TYPE-008).
    pub const LAYOUT: &str = "ZLM-LAYOUT";
    /// A feature this implementation does not support yet.
    pub const UNSUPPORTED: &str = "ZLM-UNSUPPORTED";
    /// A package's modules do not fit together: a module decoded without
    /// its providers, or a provider missing or other than the one a module
    /// was checked against.
    pub const PACKAGE: &str = "ZLM-PACKAGE";
    /// A package, module, import, declaration, field, variant, message,
    /// parameter or local name that is not an identifier (dotted identifier
    /// for package and module names; crate::names).
    pub const NAME: &str = "ZLM-NAME";
    /// A message named by an operator selector: schema 1.9 cannot encode one.
    pub const OPERATOR: &str = "ZLM-OPERATOR";
    /// An ancillary container whose structure rejects as a whole (magic,
    /// version, directory, order, lengths, the payload address it names).
    pub const ANCILLARY: &str = "ZLM-ANCILLARY";
    /// An ancillary section whose bytes do not hash to its address.
    pub const ANCILLARY_HASH: &str = "ZLM-ANCILLARY-HASH";
    /// A hash-verified ancillary record whose body is malformed.
    pub const ANCILLARY_RECORD: &str = "ZLM-ANCILLARY-RECORD";
}

/// A `ZLM-SHAPE` rejection inside function `f`, at `at` (a block, an
/// operation, "CFG", "owned paths").
pub(crate) fn in_function(
    f: &crate::model::Function,
    at: &str,
    msg: impl std::fmt::Display,
) -> Error {
    let mut error = Error::new(code::SHAPE, format!("function {} {at}: {msg}", f.name));
    error.site = Some(Site {
        function: f.name.clone(),
        block: None,
        op: None,
        edge: None,
    });
    error
}

/// A `ZLM-SHAPE` rejection at operation `at` of function `f` (`%B.O` or
/// `%rE.O`), whose site is that operation.
pub(crate) fn at_op(
    f: &crate::model::Function,
    at: crate::model::OpRef,
    msg: impl std::fmt::Display,
) -> Error {
    in_function(f, &at.to_string(), msg).at_body_op(&f.name, at)
}
