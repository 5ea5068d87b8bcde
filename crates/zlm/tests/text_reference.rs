//! `docs/zlm/text.md` is the reference of the text form: every operation the
//! assembler accepts is listed there with its tag, each operation's example
//! is a line of an example module, and the complete module assembles and
//! validates.

use zlm::model::tag;

const DOC: &str = include_str!("../../../docs/zlm/text.md");

/// Every line of every `.zlt` under `examples/zlm`, trimmed.
fn example_lines() -> Vec<String> {
    let mut lines = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zlm"
    ))];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().and_then(|e| e.to_str()) == Some("zlt") {
                let text = std::fs::read_to_string(&path).unwrap();
                lines.extend(text.lines().map(|l| l.trim().to_string()));
            }
        }
    }
    lines
}

#[test]
fn every_operation_is_documented_with_its_tag_and_an_example_line() {
    let examples = example_lines();
    let mut listed = 0;
    for (code, name) in tag::NAMES.iter().enumerate() {
        let Some(name) = name else { continue };
        let entry = format!("- `{name}` (tag {code}):");
        let line = DOC
            .lines()
            .find(|l| l.starts_with(&entry))
            .unwrap_or_else(|| panic!("docs/zlm/text.md lacks `{entry}`"));
        let example = line
            .rsplit_once("e.g. `")
            .and_then(|(_, rest)| rest.strip_suffix('`'))
            .unwrap_or_else(|| panic!("no example on: {line}"));
        assert!(
            example.split_whitespace().next() == Some(*name),
            "the example of `{name}` is another operation: {example}"
        );
        assert!(
            examples.iter().any(|l| l == example),
            "the example of `{name}` is no line of examples/zlm: {example}"
        );
        listed += 1;
    }
    // And the list names nothing the assembler does not accept.
    let documented = DOC
        .lines()
        .filter(|l| l.starts_with("- `") && l.contains("` (tag "))
        .count();
    assert_eq!(documented, listed);
}

#[test]
fn the_complete_module_example_assembles_and_validates() {
    let (_, rest) = DOC.split_once("```zlt\n").expect("a ```zlt block");
    let (text, _) = rest.split_once("```").unwrap();
    let module = zlm::text::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let bytes = zlm::write::write(&module).unwrap();
    zlm::decode::decode(&bytes).unwrap_or_else(|e| panic!("{e}"));
}
