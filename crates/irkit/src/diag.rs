//! Diagnostic rendering shared by every system's verbs.
//!
//! Human output follows rustc's layout (`error[kind]: message`, then
//! `--> label:line:col`, the source line and a caret). JSON output is one
//! object per diagnostic per line with the keys `kind`, `code`, `message`,
//! `label`, `offset`, `line` and `column` (absent facts are `null`).

use std::fmt::Write as _;

/// One diagnostic, independent of the system that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable kind, e.g. `lexical`, `syntactic`, `semantic`, `target`, `encoding`.
    pub kind: String,
    /// Stable code where the system's spec defines one (e.g. `RVN3010`).
    pub code: Option<String>,
    /// Human-readable message.
    pub message: String,
    /// Source label: the path as given on the command line, or `<stdin>`.
    pub label: String,
    /// Byte offset into the input, where known.
    pub offset: Option<u64>,
    /// 1-based line, for text inputs.
    pub line: Option<u64>,
    /// 1-based column in Unicode code points, for text inputs.
    pub column: Option<u64>,
}

/// Output style chosen with `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// rustc-like text on stderr.
    #[default]
    Human,
    /// One JSON object per diagnostic per line on stdout.
    Json,
}

impl Diagnostic {
    /// A diagnostic about input `label` without a location yet.
    pub fn new(kind: &str, code: Option<&str>, message: impl Into<String>, label: &str) -> Self {
        Diagnostic {
            kind: kind.to_string(),
            code: code.map(str::to_string),
            message: message.into(),
            label: label.to_string(),
            offset: None,
            line: None,
            column: None,
        }
    }

    /// Points the diagnostic at byte `offset`; when the input is `text`, also
    /// at its line and column.
    pub fn at(mut self, offset: Option<usize>, text: Option<&str>) -> Self {
        self.offset = offset.map(|o| o as u64);
        if let (Some(o), Some(t)) = (offset, text) {
            let (line, column) = line_column(t, o);
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }

    /// Renders the diagnostic as one line of JSON (no trailing newline).
    pub fn to_json(&self) -> String {
        let value = serde_json::json!({
            "severity": crate::catalogue::severity(self.code.as_deref()).name(),
            "kind": self.kind,
            "code": self.code,
            "message": self.message,
            "label": self.label,
            "offset": self.offset,
            "line": self.line,
            "column": self.column,
        });
        value.to_string()
    }

    /// Renders the diagnostic like rustc. `source` is the decoded input text
    /// when the input is text; the offending line and a caret are then shown.
    pub fn to_human(&self, source: Option<&str>) -> String {
        let mut out = String::new();
        match &self.code {
            Some(code) => {
                let severity = crate::catalogue::severity(Some(code)).name();
                let _ = writeln!(out, "{severity}[{code}]: {} ({})", self.message, self.kind);
            }
            None => {
                let _ = writeln!(out, "error[{}]: {}", self.kind, self.message);
            }
        }
        match (self.line, self.column, self.offset) {
            (Some(line), Some(column), _) => {
                let _ = writeln!(out, "  --> {}:{line}:{column}", self.label);
                if let Some(text) = source.and_then(|s| nth_line(s, line)) {
                    let number = line.to_string();
                    let pad = " ".repeat(number.len());
                    let caret_pad: String = text
                        .chars()
                        .take(column.saturating_sub(1) as usize)
                        .map(|c| if c == '\t' { '\t' } else { ' ' })
                        .collect();
                    let _ = writeln!(out, "{pad} |");
                    let _ = writeln!(out, "{number} | {text}");
                    let _ = writeln!(out, "{pad} | {caret_pad}^");
                }
            }
            (_, _, Some(offset)) => {
                let _ = writeln!(out, "  --> {} @ byte {offset} (0x{offset:x})", self.label);
            }
            _ => {
                let _ = writeln!(out, "  --> {}", self.label);
            }
        }
        out
    }
}

/// Returns the 1-based `line` of `source`; CR, LF and CRLF each end a line.
fn nth_line(source: &str, line: u64) -> Option<&str> {
    let mut current = 1u64;
    let mut start = 0usize;
    let bytes = source.as_bytes();
    let mut i = 0usize;
    while i < bytes.len() {
        let ending = match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => 2,
            b'\r' | b'\n' => 1,
            _ => 0,
        };
        if ending > 0 {
            if current == line {
                return source.get(start..i);
            }
            current += 1;
            i += ending;
            start = i;
        } else {
            i += 1;
        }
    }
    (current == line).then(|| source.get(start..)).flatten()
}

/// 1-based line and column (in code points) of byte `offset`; CR, LF and
/// CRLF each end one line, as in [`nth_line`].
pub fn line_column(text: &str, offset: usize) -> (u64, u64) {
    let offset = offset.min(text.len());
    let mut line = 1u64;
    let mut line_start = 0usize;
    let bytes = text.as_bytes();
    let mut i = 0usize;
    while i < offset {
        match bytes[i] {
            b'\r' if bytes.get(i + 1) == Some(&b'\n') && i + 1 < offset => {
                i += 2;
                line += 1;
                line_start = i;
            }
            b'\r' | b'\n' => {
                i += 1;
                line += 1;
                line_start = i;
            }
            _ => i += 1,
        }
    }
    let column = text
        .get(line_start..offset)
        .map_or(0, |s| s.chars().count() as u64);
    (line, column + 1)
}

/// Prints diagnostics in the chosen format: JSON lines on stdout, human text on stderr.
pub fn emit(diagnostics: &[Diagnostic], format: Format, source: Option<&str>) {
    for diagnostic in diagnostics {
        match format {
            Format::Json => println!("{}", diagnostic.to_json()),
            Format::Human => eprint!("{}", diagnostic.to_human(source)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Diagnostic {
        Diagnostic {
            kind: "syntactic".into(),
            code: None,
            message: "expected `)`".into(),
            label: "a.vpl".into(),
            offset: Some(9),
            line: Some(2),
            column: Some(3),
        }
    }

    #[test]
    fn human_shows_line_and_caret() {
        let text = sample().to_human(Some("(module\r\n\tab cd\n"));
        assert!(text.starts_with("error[syntactic]: expected `)`\n  --> a.vpl:2:3\n"));
        assert!(text.contains("2 | \tab cd\n"), "{text}");
        assert!(text.ends_with("  | \t ^\n"), "{text}");
    }

    #[test]
    fn json_has_every_key() {
        let value: serde_json::Value = serde_json::from_str(&sample().to_json()).unwrap();
        for key in [
            "kind", "code", "message", "label", "offset", "line", "column",
        ] {
            assert!(value.get(key).is_some(), "missing {key}");
        }
        assert_eq!(value["line"], 2);
        assert!(value["code"].is_null());
    }

    #[test]
    fn binary_inputs_show_the_offset() {
        let mut d = sample();
        d.line = None;
        d.column = None;
        d.code = Some("Z001".into());
        let text = d.to_human(None);
        assert_eq!(
            text,
            "error[Z001]: expected `)` (syntactic)\n  --> a.vpl @ byte 9 (0x9)\n"
        );
    }

    #[test]
    fn line_column_counts_code_points_and_line_endings() {
        let t = "ab\r\ncé\rx\ny";
        assert_eq!(line_column(t, 0), (1, 1));
        assert_eq!(line_column(t, 2), (1, 3));
        assert_eq!(line_column(t, 4), (2, 1));
        assert_eq!(line_column(t, 7), (2, 3)); // after "cé" (é is 2 bytes)
        assert_eq!(line_column(t, 8), (3, 1));
        assert_eq!(line_column(t, 10), (4, 1));
    }

    #[test]
    fn nth_line_counts_each_line_ending_once() {
        let s = "a\rb\r\nc\nd";
        assert_eq!(nth_line(s, 1), Some("a"));
        assert_eq!(nth_line(s, 2), Some("b"));
        assert_eq!(nth_line(s, 3), Some("c"));
        assert_eq!(nth_line(s, 4), Some("d"));
        assert_eq!(nth_line(s, 5), None);
    }
}
