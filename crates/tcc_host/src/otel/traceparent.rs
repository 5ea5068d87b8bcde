//! The W3C Trace Context `traceparent` header (version `00`): what a caller
//! passes on start, what the host passes on to webhook and worker effects.
//!
//! `VERSION-TRACEID-PARENTID-FLAGS`, lower-case hex: 2, 32, 16 and 2 digits.
//! The trace and parent ids may not be all zeros, the version may not be
//! `ff`; a later version may append fields after a `-` (read as version
//! `00`, as the recommendation says).

/// Why a `traceparent` value was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceParentError {
    /// Too short, or fields of the wrong length or separators.
    #[error("traceparent must be VERSION-TRACEID-PARENTID-FLAGS (2-32-16-2 lower-case hex digits)")]
    Shape,
    /// A field that is not lower-case hex.
    #[error("traceparent field {field} is not lower-case hex")]
    NotHex {
        /// `version`, `trace-id`, `parent-id` or `flags`.
        field: &'static str,
    },
    /// Version `ff` (invalid), or `00` with trailing data.
    #[error("traceparent version {0:?} is not accepted")]
    Version(String),
    /// An all-zero trace or parent id.
    #[error("traceparent {field} is all zeros")]
    Zero {
        /// `trace-id` or `parent-id`.
        field: &'static str,
    },
}

/// A parsed `traceparent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace id.
    pub trace_id: [u8; 16],
    /// The caller's span id (the parent of the spans made here).
    pub span_id: [u8; 8],
    /// Trace flags (bit 0: sampled).
    pub flags: u8,
}

fn hex_field<const N: usize>(text: &str, field: &'static str) -> Result<[u8; N], TraceParentError> {
    let bytes = text.as_bytes();
    if bytes.len() != 2 * N {
        return Err(TraceParentError::Shape);
    }
    let digit = |b: u8| match b {
        b'0'..=b'9' => Ok(b - b'0'),
        b'a'..=b'f' => Ok(b - b'a' + 10),
        _ => Err(TraceParentError::NotHex { field }),
    };
    let mut out = [0u8; N];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        out[i] = (digit(pair[0])? << 4) | digit(pair[1])?;
    }
    Ok(out)
}

impl TraceParent {
    /// Parses a header value (surrounding blanks ignored).
    pub fn parse(text: &str) -> Result<TraceParent, TraceParentError> {
        let text = text.trim_matches([' ', '\t']);
        if text.len() < 55 || !text.is_ascii() {
            return Err(TraceParentError::Shape);
        }
        let (version, rest) = text.split_at(2);
        let [v] = hex_field::<1>(version, "version")?;
        if v == 0xff {
            return Err(TraceParentError::Version(version.to_string()));
        }
        if v == 0 && text.len() != 55 {
            return Err(TraceParentError::Version(version.to_string()));
        }
        // A later version: the first four fields as version 00, then `-`.
        if text.len() > 55 && text.as_bytes()[55] != b'-' {
            return Err(TraceParentError::Shape);
        }
        let rest = &rest[..53];
        let b = rest.as_bytes();
        if b[0] != b'-' || b[33] != b'-' || b[50] != b'-' {
            return Err(TraceParentError::Shape);
        }
        let trace_id = hex_field::<16>(&rest[1..33], "trace-id")?;
        let span_id = hex_field::<8>(&rest[34..50], "parent-id")?;
        let [flags] = hex_field::<1>(&rest[51..53], "flags")?;
        if trace_id == [0; 16] {
            return Err(TraceParentError::Zero { field: "trace-id" });
        }
        if span_id == [0; 8] {
            return Err(TraceParentError::Zero { field: "parent-id" });
        }
        Ok(TraceParent {
            trace_id,
            span_id,
            flags,
        })
    }

    /// Whether the caller sampled the trace (flag bit 0).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }
}

impl std::fmt::Display for TraceParent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("00-")?;
        for b in self.trace_id {
            write!(f, "{b:02x}")?;
        }
        f.write_str("-")?;
        for b in self.span_id {
            write!(f, "{b:02x}")?;
        }
        write!(f, "-{:02x}", self.flags)
    }
}
