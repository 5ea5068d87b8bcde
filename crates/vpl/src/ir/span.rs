//! Source positions, filled in by the text reader (a leaf of the model).

/// A source position: byte offset and 1-based line/column, the column
/// counted in Unicode code points (CR, LF and CRLF each end one line).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// Byte offset into the input.
    pub offset: u32,
    /// 1-based line.
    pub line: u32,
    /// 1-based column in code points.
    pub column: u32,
}
