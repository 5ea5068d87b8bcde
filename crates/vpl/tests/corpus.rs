//! File corpus: each `tests/corpus/*.vpl` starts with `// expect: ok` or
//! `// expect: <lexical|syntactic|semantic> <line>:<column>`. Accepted
//! files must also write canonically and read back to the same text.

use vpl::text::ErrorKind;

#[test]
fn corpus_files_meet_their_expectations() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "vpl"));
    paths.sort();
    assert!(paths.len() >= 8, "corpus is missing");
    for path in paths {
        let bytes = std::fs::read(&path).unwrap();
        let label = path.file_name().unwrap().to_string_lossy().to_string();
        let text = String::from_utf8_lossy(&bytes);
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// expect: "))
            .unwrap_or_else(|| panic!("{label}: no `// expect:` line"))
            .trim()
            .to_string();
        let result = vpl::text::read(&bytes, &label);
        if expect == "ok" {
            let m = result.unwrap_or_else(|e| panic!("{e}"));
            let w = vpl::text::write(&m).unwrap();
            let again = vpl::text::read(w.as_bytes(), "again").unwrap();
            assert_eq!(vpl::text::write(&again).unwrap(), w, "{label}");
            continue;
        }
        let (kind, at) = expect
            .split_once(' ')
            .unwrap_or_else(|| panic!("{label}: bad expectation"));
        let kind = match kind {
            "lexical" => ErrorKind::Lexical,
            "syntactic" => ErrorKind::Syntactic,
            "semantic" => ErrorKind::Semantic,
            other => panic!("{label}: unknown kind {other}"),
        };
        let (line, column) = at.split_once(':').unwrap();
        let e = match result {
            Ok(_) => panic!("{label}: accepted, expected {expect}"),
            Err(e) => e,
        };
        assert_eq!(e.label, label);
        assert_eq!(
            (
                e.kind,
                e.position.line.to_string(),
                e.position.column.to_string()
            ),
            (kind, line.to_string(), column.to_string()),
            "{label}: {e}"
        );
    }
}
