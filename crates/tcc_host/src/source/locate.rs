//! Where an instruction came from: the artifact's spans (one per
//! instruction, `null` allowed; `docs/tcc/host.md`, "Source lines").

use super::rows::ArtifactSource;
use serde_json::{Value as J, json};

/// The span of instruction `pc` of function `func_id` in an artifact's
/// JSON, if it has one.
fn span_at(artifact: &J, func_id: u64, pc: u64) -> Option<&J> {
    let f = artifact["program"]["functions"]
        .as_array()?
        .iter()
        .find(|f| f["id"].as_u64() == Some(func_id))?;
    let spans = f["spans"].as_array()?;
    spans
        .get(usize::try_from(pc).ok()?)
        .filter(|s| s.is_object())
}

/// Line `line` (1-based) of `text`, without its line break.
pub fn line_of(text: &str, line: u64) -> Option<&str> {
    let n = usize::try_from(line.checked_sub(1)?).ok()?;
    text.split('\n')
        .nth(n)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// Where instruction `pc` of function `func_id` came from: `{func_id, pc,
/// file, line, column, end_line, end_column}` from its span, and `text`,
/// the source line, when the source is known and names the span's file.
/// An instruction without a span takes the nearest earlier one's in its
/// function (`span_pc` says which); `None` when there is none.
pub fn location(artifact: &J, func_id: u64, pc: u64, source: Option<&ArtifactSource>) -> Option<J> {
    let (span_pc, span) = (0..=pc)
        .rev()
        .take(4096)
        .find_map(|p| span_at(artifact, func_id, p).map(|s| (p, s)))?;
    let file = span["file"].as_str().unwrap_or("");
    let line = span["start_line"].as_u64()?;
    let mut j = json!({
        "func_id": func_id,
        "pc": pc,
        "span_pc": span_pc,
        "file": file,
        "line": line,
        "column": span["start_column"],
        "end_line": span["end_line"],
        "end_column": span["end_column"],
    });
    if let Some(text) = source
        .filter(|s| s.file == file)
        .and_then(|s| line_of(&s.text, line))
    {
        j["text"] = text.into();
    }
    Some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact() -> J {
        json!({"program": {"entry": 0, "functions": [{"id": 0, "instructions": [{}, {}, {}, {}],
            "spans": [null,
                {"file": "f.py", "start_line": 2, "start_column": 4, "end_line": 2, "end_column": 9},
                null,
                {"file": "g.py", "start_line": 9, "start_column": 0, "end_line": 9, "end_column": 1}]}]}})
    }

    #[test]
    fn a_location_is_the_span_at_the_pc_or_the_nearest_earlier_one() {
        let a = artifact();
        let src = ArtifactSource {
            file: "f.py".into(),
            text: "first\r\n    second\nthird".into(),
        };
        let l = location(&a, 0, 1, Some(&src)).unwrap();
        assert_eq!(
            (l["line"].as_u64(), l["text"].as_str()),
            (Some(2), Some("    second"))
        );
        let l = location(&a, 0, 2, Some(&src)).unwrap();
        assert_eq!(
            (l["pc"].as_u64(), l["span_pc"].as_u64()),
            (Some(2), Some(1))
        );
        // Another file's span: the line number without text.
        let l = location(&a, 0, 3, Some(&src)).unwrap();
        assert_eq!((l["file"].as_str(), l.get("text")), (Some("g.py"), None));
        assert!(location(&a, 0, 0, Some(&src)).is_none());
        assert!(location(&a, 7, 1, None).is_none());
        assert!(location(&a, 0, 99, None).unwrap()["span_pc"] == 3);
    }

    #[test]
    fn lines_are_counted_from_one() {
        assert_eq!(line_of("a\nb\n", 1), Some("a"));
        assert_eq!(line_of("a\nb\n", 2), Some("b"));
        assert_eq!(line_of("a\nb\n", 0), None);
        assert_eq!(line_of("a", 5), None);
    }
}
