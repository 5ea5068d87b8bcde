//! The two-thread reader and verifier answer exactly like the sequential
//! ones: the same module, or the same first error (kind, message, offset,
//! line, column), on valid inputs and on inputs mutated around the split.

use super::generate;
use super::reader::parse_with;
use super::reader::split::ADOPTED;
use crate::verify::{Threads, verify_with};

/// Above the reader's 512 KiB threshold for splitting a stage.
const MODULE_BYTES: usize = 640 << 10;

fn adopted() -> usize {
    ADOPTED.with(|n| n.get())
}

/// Parses `text` both ways and checks that the answers are identical.
/// Returns whether the parallel reader adopted a helper's part.
fn same_parse(text: &str) -> bool {
    let before = adopted();
    let parallel = parse_with(text, "t", true);
    let used = adopted() > before;
    let sequential = parse_with(text, "t", false);
    assert_eq!(
        parallel, sequential,
        "parallel and sequential reading differ"
    );
    used
}

/// The offset of the function form the reader splits at (the first line
/// starting with `(function` after the middle of the fragment functions).
fn split_offset(text: &str) -> usize {
    let here = text.find("(fragment").unwrap();
    let mid = here + (text.len() - here) / 2;
    mid + text[mid..].find("\n      (function").unwrap() + 7
}

/// A function form starting at `at`: its ID's byte range.
fn function_id_range(text: &str, at: usize) -> std::ops::Range<usize> {
    let start = at + "(function ".len();
    let end = start + text[start..].find(' ').unwrap();
    start..end
}

fn splice(text: &str, at: usize, remove: usize, insert: &str) -> String {
    let mut s = String::with_capacity(text.len() + insert.len());
    s.push_str(&text[..at]);
    s.push_str(insert);
    s.push_str(&text[at + remove..]);
    s
}

#[test]
fn parallel_read_answers_like_sequential_read() {
    let text = generate::module_text(MODULE_BYTES);
    assert!(same_parse(&text), "the valid module is read on two threads");
    let split = split_offset(&text);
    assert_eq!(&text[split..split + 9], "(function");

    // Byte mutations spread over the text and around the split.
    let mut positions: Vec<usize> = (1..16).map(|k| text.len() * k / 16).collect();
    for d in [0usize, 1, 2, 7, 9, 10, 12, 40, 300] {
        positions.push(split - d);
        positions.push(split + d);
    }
    let edits: [(usize, &str); 7] = [
        (1, ""),
        (0, ")"),
        (0, "("),
        (0, "\""),
        (0, "/*"),
        (0, "\u{e9}"),
        (0, "\r\n  /* \u{e9} */ "),
    ];
    for &p in &positions {
        for &(remove, insert) in &edits {
            same_parse(&splice(&text, p, remove, insert));
        }
    }

    // A function after the split reuses the ID of one before it, of one
    // after it, and of the one just before the split.
    let late = split + text[split..].find("\n      (function").unwrap() + 7;
    let before_split = text[..split - 7].rfind("(function").unwrap();
    for (at, id) in [
        (late, "f3"),
        (late, &text[function_id_range(&text, split)]),
        (split, &text[function_id_range(&text, before_split)]),
        (late, "f_new"),
    ] {
        let r = function_id_range(&text, at);
        let m = splice(&text, r.start, r.len(), id);
        same_parse(&m);
    }

    // Calls across the split, resolved and unresolved (fixups of the
    // helper's part are renumbered when adopted).
    for (at, call) in [
        (late, "(call r0 f2 (float 1.0))"),
        (2000, "(call r0 f9000000 (float 1.0))"),
        (late, "(call r0 f9000000 (float 1.0))"),
    ] {
        let i = at + text[at..].find("(copy r1 (int 0))").unwrap();
        let m = splice(&text, i, "(copy r1 (int 0))".len(), call);
        assert!(!m.is_empty());
        same_parse(&m);
    }
    let i = late + text[late..].find("(copy r1 (int 0))").unwrap();
    let m = splice(&text, i, 0, "(call r0 f2 (float 1.0))\n");
    assert!(same_parse(&m), "calls across the split are adopted");
}

/// A constant of a scalar type the type table lacks creates that type;
/// the helper cannot number it, so its part is discarded.
#[test]
fn parallel_read_with_a_missing_scalar_type() {
    let text = generate::module_text(MODULE_BYTES)
        .replacen("(type t3 bool)", "(type t3 vector bool 2)", 1)
        .replace("(less r2 r1 (int 8))", "(copy r1 r1)");
    let split = split_offset(&text);
    let late = split + text[split..].find("(branch_if r2").unwrap();
    let m = splice(&text, late, "(branch_if r2".len(), "(branch_if (bool true)");
    assert!(!same_parse(&m), "the helper's part is discarded");
    let early = text.find("(branch_if r2").unwrap();
    let m = splice(
        &text,
        early,
        "(branch_if r2".len(),
        "(branch_if (bool false)",
    );
    assert!(same_parse(&m), "the type exists before the split");
}

/// Other line endings and a large vertex stage: both stages split, and
/// positions after the split count lines as the sequential reader does.
#[test]
fn parallel_read_of_both_stages_and_line_endings() {
    let text = generate::module_text(MODULE_BYTES);
    let helpers_start = text.find("\n      (function f1 ").unwrap();
    let helpers = &text[helpers_start..text.len() - ")))\n".len()];
    let vertex_end = "(return)))))\n  (fragment";
    let both = text.replacen(
        vertex_end,
        &format!("(return))){helpers}))\n  (fragment"),
        1,
    );
    let before = adopted();
    assert!(same_parse(&both));
    assert_eq!(adopted() - before, 2, "both stages are split");
    for ending in ["\r\n", "\r"] {
        let t = text.replace('\n', ending);
        assert!(same_parse(&t), "{ending:?} endings are split");
        let split = split_offset(&text);
        let shift = t.len() - text.len();
        // An error well after the split: its line and column.
        let at = (split + shift / 2 + 5000).min(t.len() - 10);
        let at = (at..).find(|&i| t.is_char_boundary(i)).unwrap();
        let m = splice(&t, at, 0, "\u{e9}");
        same_parse(&m);
        let e = parse_with(&m, "t", true).unwrap_err();
        assert!(e.position.line > 1000, "{e}");
    }
}

/// The two-thread verifier reports the same first failure as the
/// sequential one, whichever phase and function it is in.
#[test]
fn parallel_verify_answers_like_sequential_verify() {
    let text = generate::module_text(MODULE_BYTES);
    let split = split_offset(&text);
    let nth_function = |k: usize| text.find(&format!("(function f{k} ")).unwrap();
    let last = text.rfind("(function f").unwrap();
    let first = nth_function(3);
    let load = "(load r0 (parameter p0))";
    let copy = "(copy r1 (int 0))";
    let edit = |t: &str, at: usize, what: &str, with: &str| {
        let i = at + t[at..].find(what).unwrap();
        splice(t, i, what.len(), with)
    };
    let recursive = |t: &str, at: usize| {
        let r = function_id_range(t, at);
        let id = t[r].to_string();
        edit(t, at, copy, &format!("(call r0 {id} (float 1.0)) {copy}"))
    };
    let mut cases = vec![text.clone()];
    for at in [first, split, last] {
        // Phase 2: a type error; phase 3: a register read before written.
        cases.push(edit(&text, at, copy, "(copy r1 (float 0.0))"));
        cases.push(edit(&text, at, load, "(copy r1 (int 1))"));
        cases.push(recursive(&text, at));
    }
    // Several failures: the first in sequential order wins.
    cases.push(edit(
        &edit(&text, last, copy, "(copy r1 (float 0.0))"),
        first,
        load,
        "(copy r1 (int 1))",
    ));
    cases.push(edit(
        &edit(&text, first, load, "(copy r1 (int 1))"),
        last,
        copy,
        "(copy r1 (float 0.0))",
    ));
    cases.push(edit(
        &recursive(&text, last),
        split,
        load,
        "(copy r1 (int 1))",
    ));
    // Call chains: a failing callee after its caller in list order, and a
    // caller at depth 1 whose callee (depth 0) is fine.
    let call_late = edit(
        &text,
        first,
        copy,
        "(call r0 f300 (float 1.0)) (copy r1 (int 0))",
    );
    cases.push(call_late.clone());
    let f300 = call_late.find("(function f300 ").unwrap();
    cases.push(edit(&call_late, f300, load, "(copy r1 (int 1))"));
    cases.push(edit(&call_late, split, load, "(copy r1 (int 1))"));
    for (i, case) in cases.iter().enumerate() {
        let module = parse_with(case, "t", false).expect("mutations keep the syntax");
        let one = verify_with(&module, Threads::One);
        let two = verify_with(&module, Threads::Two);
        assert_eq!(one, two, "case {i}");
        assert_eq!(
            one.is_ok(),
            i == 0 || i == cases.len() - 3,
            "case {i}: {one:?}"
        );
    }
}

/// Random edits anywhere in a large module (with a bias to the split):
/// both readers give the same module or the same first error.
#[test]
fn parallel_read_of_randomly_edited_modules() {
    use proptest::prelude::*;
    let text = generate::module_text(MODULE_BYTES);
    let split = split_offset(&text);
    let pieces = prop::sample::select(vec![
        "",
        ")",
        "(",
        "\"",
        "'",
        "/*",
        "*/",
        "//",
        "\\\n",
        "\r",
        "\r\n",
        "\n",
        "\u{e9}",
        "r9",
        "(function f1 \"x\" t1 (parameters) (registers) (block b0 (return (float 1.0))))",
        "(int 1)",
        "(bool true)",
        "f1",
        "b0",
        "t9",
        " ",
    ]);
    let config = ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(
        near_split in any::<bool>(),
        at in 0usize..1 << 20,
        remove in 0usize..4,
        insert in pieces,
    )| {
        let at = if near_split { split - 64 + at % 128 } else { at % text.len() };
        let remove = remove.min(text.len() - at);
        let m = splice(&text, at, remove, insert);
        let parallel = parse_with(&m, "t", true);
        let sequential = parse_with(&m, "t", false);
        prop_assert!(parallel == sequential, "edit at {} (-{}, {:?})", at, remove, insert);
    });
}
