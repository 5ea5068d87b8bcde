//! Frontend diagnostics: stable `TCC-F…` codes with a source position.

use crate::hir::Pos;

/// Stable diagnostic codes. The numbers never change meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// `TCC-F001` the parser rejected the text.
    Syntax,
    /// `TCC-F002` valid syntax outside the subset.
    Unsupported,
    /// `TCC-F003` a name that resolves to nothing.
    UnknownName,
    /// `TCC-F004` an import other than the durable primitives.
    Import,
    /// `TCC-F005` no entry function, several, or an entry of the wrong shape.
    Entry,
    /// `TCC-F006` a durable operation outside the entry function.
    DurableOutsideEntry,
    /// `TCC-F007` an effect key, event name or program name that is statically not a string.
    ComputedKey,
    /// `TCC-F008` a durable operation that is not directly awaited (or an await of something else).
    Await,
    /// `TCC-F009` a `gather`/`race` that is not 1–32 direct durable calls.
    Concurrency,
    /// `TCC-F010` a Python collection used as a condition.
    CollectionTruthiness,
    /// `TCC-F011` a class definition.
    Class,
    /// `TCC-F012` a number literal that is not exactly a binary64 value.
    InexactNumber,
    /// `TCC-F013` `break`/`continue`/`return` where there is nothing to leave.
    BadControl,
    /// `TCC-F014` assignment to something that cannot be assigned.
    BadAssignment,
    /// `TCC-F015` a closure capturing a per-iteration (loop-scoped) binding.
    LoopCapture,
    /// `TCC-F016` a name used before its declaration.
    BeforeDeclaration,
    /// `TCC-F017` a size or nesting limit.
    Limit,
    /// `TCC-F018` a call shape outside the subset (keyword, spread, wrong arity).
    Call,
    /// `TCC-F019` the file is not a `.py` or `.ts` source.
    Language,
    /// `TCC-F020` a type error (Rust subset).
    Type,
    /// `TCC-F021` a moved value used again, or a move the subset's ownership rule forbids (Rust subset).
    Moved,
    /// `TCC-F022` a `match` that does not cover every variant (Rust subset).
    NonExhaustive,
    /// `TCC-F023` `?` on something other than `Result`/`Option`, or in a function that does not return one (Rust subset).
    Question,
    /// `TCC-F024` an effect whose key is the same on every iteration of the loop it is in
    /// (every iteration would get the first one's journalled result).
    RepeatedKey,
    /// `TCC-F099` a frontend defect: the generated artifact failed validation.
    Internal,
}

impl Code {
    /// The stable code text.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Syntax => "TCC-F001",
            Code::Unsupported => "TCC-F002",
            Code::UnknownName => "TCC-F003",
            Code::Import => "TCC-F004",
            Code::Entry => "TCC-F005",
            Code::DurableOutsideEntry => "TCC-F006",
            Code::ComputedKey => "TCC-F007",
            Code::Await => "TCC-F008",
            Code::Concurrency => "TCC-F009",
            Code::CollectionTruthiness => "TCC-F010",
            Code::Class => "TCC-F011",
            Code::InexactNumber => "TCC-F012",
            Code::BadControl => "TCC-F013",
            Code::BadAssignment => "TCC-F014",
            Code::LoopCapture => "TCC-F015",
            Code::BeforeDeclaration => "TCC-F016",
            Code::Limit => "TCC-F017",
            Code::Call => "TCC-F018",
            Code::Language => "TCC-F019",
            Code::Type => "TCC-F020",
            Code::Moved => "TCC-F021",
            Code::NonExhaustive => "TCC-F022",
            Code::Question => "TCC-F023",
            Code::RepeatedKey => "TCC-F024",
            Code::Internal => "TCC-F099",
        }
    }
}

/// A refusal with its code and source range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message} (at {line}:{column})", code = .code.as_str())]
pub struct FrontendError {
    /// Stable code.
    pub code: Code,
    /// What is wrong.
    pub message: String,
    /// Byte offset of the offending construct.
    pub offset: usize,
    /// 1-based line (filled in by [`crate::compile`]).
    pub line: u32,
    /// 1-based column in code points (filled in by [`crate::compile`]).
    pub column: u32,
}

impl FrontendError {
    /// An error at `pos` (line and column are resolved later).
    pub fn new(code: Code, message: impl Into<String>, pos: Pos) -> Self {
        FrontendError {
            code,
            message: message.into(),
            offset: pos.start as usize,
            line: 0,
            column: 0,
        }
    }

    pub(crate) fn locate(mut self, lines: &LineIndex) -> Self {
        let (l, c) = lines.line_col(self.offset);
        self.line = l;
        self.column = c;
        self
    }
}

/// Byte offset → 1-based line and column (code points). CR, LF and CRLF end lines.
#[derive(Debug, Clone)]
pub struct LineIndex<'s> {
    text: &'s str,
    starts: Vec<usize>,
    /// All ASCII: a column is the byte distance from the line start.
    ascii: bool,
}

impl<'s> LineIndex<'s> {
    /// Indexes `text`.
    pub fn new(text: &'s str) -> Self {
        let b = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'\r' if b.get(i + 1) == Some(&b'\n') => {
                    i += 2;
                    starts.push(i);
                }
                b'\r' | b'\n' => {
                    i += 1;
                    starts.push(i);
                }
                _ => i += 1,
            }
        }
        LineIndex {
            text,
            starts,
            ascii: text.is_ascii(),
        }
    }

    /// Line and column of `offset` (clamped to the text).
    pub fn line_col(&self, offset: usize) -> (u32, u32) {
        let mut hint = 0;
        self.line_col_near(offset, &mut hint)
    }

    /// [`LineIndex::line_col`] for offsets that mostly stay near the
    /// previous one (codegen resolves every instruction's range in order):
    /// the line `*hint` and the next one are tried before a binary search,
    /// and `*hint` is left at the line found.
    pub fn line_col_near(&self, offset: usize, hint: &mut usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let within = |l: usize| {
            self.starts.get(l).is_some_and(|&s| s <= offset)
                && self.starts.get(l + 1).is_none_or(|&next| offset < next)
        };
        let line = if within(*hint) {
            *hint
        } else if within(*hint + 1) {
            *hint + 1
        } else {
            match self.starts.binary_search(&offset) {
                Ok(i) => i,
                Err(i) => i.saturating_sub(1),
            }
        };
        *hint = line;
        let start = self.starts[line];
        let col = if self.ascii {
            offset - start
        } else {
            let mut end = offset;
            while end > start && !self.text.is_char_boundary(end) {
                end -= 1;
            }
            self.text.get(start..end).map_or(0, |s| s.chars().count())
        };
        (line as u32 + 1, col as u32 + 1)
    }
}
