//! Conformance corpus for the text reader (spec section 10): for every
//! lexical and grammar rule, cases that must be accepted and cases that
//! must be rejected with a given error kind at a given position (marked
//! with `‸` in the source).

mod common;

use common::{Case, expect_error, expect_ok, position};
use vpl::ir::{InstructionKind, Literal, TypeInner, Value};
use vpl::text::ErrorKind::{Lexical, Semantic, Syntactic};

fn base() -> String {
    Case::default().text()
}

/// `base()` with `from` replaced by `to` (exactly once).
fn edit(from: &str, to: &str) -> String {
    let b = base();
    assert!(b.contains(from), "template lacks {from:?}");
    b.replacen(from, to, 1)
}

fn body(body: &str) -> Case<'_> {
    Case {
        body,
        ..Case::default()
    }
}

/// The literal of the first instruction after the template's construct.
fn first_body_literal(m: &vpl::ir::Module) -> Literal {
    let f = &m.fragment.functions[m.fragment.entry.unwrap()];
    let block = f.blocks.iter().next().unwrap().1;
    for i in &block.instructions {
        if let InstructionKind::Copy { source, .. } = &i.kind
            && let Value::Constant(c) = source.value
        {
            return c.value;
        }
    }
    panic!("no copy of a constant");
}

// ---- encoding -------------------------------------------------------------

#[test]
fn utf8_byte_order_mark_is_rejected() {
    let mut bytes = vec![0xEF, 0xBB, 0xBF];
    bytes.extend_from_slice(base().as_bytes());
    let e = vpl::text::read(&bytes, "bom.vpl").unwrap_err();
    assert_eq!(
        (
            e.kind,
            e.position.offset,
            e.position.line,
            e.position.column
        ),
        (Lexical, 0, 1, 1)
    );
    assert!(e.message.contains("byte-order mark"), "{e}");
}

fn bad_bytes_in_comment(bad: &[u8], what: &str) {
    let text = base();
    let at = text.find("(uniforms").unwrap();
    let mut bytes = text.as_bytes()[..at].to_vec();
    bytes.extend_from_slice(b"// caf\xC3\xA9 ");
    let offset = bytes.len();
    bytes.extend_from_slice(bad);
    bytes.extend_from_slice(b"\n  ");
    bytes.extend_from_slice(&text.as_bytes()[at..]);
    let e = vpl::text::read(&bytes, "utf8.vpl").unwrap_err();
    let line = text[..at].matches('\n').count() as u32 + 1;
    // Column counts code points: "  // café " is 10 code points.
    assert_eq!(
        (
            e.kind,
            e.position.offset,
            e.position.line,
            e.position.column
        ),
        (Lexical, offset as u32, line, 11),
        "{what}: {e}"
    );
    assert!(e.message.contains(what), "{what}: {e}");
}

#[test]
fn invalid_utf8_is_rejected() {
    bad_bytes_in_comment(b"\xFF", "invalid UTF-8");
    bad_bytes_in_comment(b"\x80", "invalid UTF-8");
    bad_bytes_in_comment(b"\xE2\x82", "invalid UTF-8");
    // Beyond U+10FFFF, and the old five-byte form.
    bad_bytes_in_comment(b"\xF4\x90\x80\x80", "invalid UTF-8");
    bad_bytes_in_comment(b"\xF8\x88\x80\x80\x80", "invalid UTF-8");
}

#[test]
fn overlong_encodings_are_rejected() {
    bad_bytes_in_comment(b"\xC0\xAF", "overlong");
    bad_bytes_in_comment(b"\xE0\x80\xAF", "overlong");
    bad_bytes_in_comment(b"\xF0\x80\x80\xAF", "overlong");
}

#[test]
fn encoded_surrogates_are_rejected() {
    bad_bytes_in_comment(b"\xED\xA0\x80", "surrogate");
    bad_bytes_in_comment(b"\xED\xBF\xBF", "surrogate");
}

#[test]
fn truncated_sequence_at_end_is_rejected() {
    let mut bytes = base().into_bytes();
    bytes.extend_from_slice(b"// \xF0\x9F");
    let e = vpl::text::read(&bytes, "t.vpl").unwrap_err();
    assert_eq!(e.kind, Lexical);
    assert_eq!(e.position.offset as usize, bytes.len() - 2);
}

#[test]
fn non_ascii_text_is_accepted_in_comments_and_strings() {
    let m = expect_ok(
        "unicode",
        &edit("\"fmain\"", "/* ünïcödé 🎨 */ \"f🎨main\""),
    );
    let f = &m.fragment.functions[m.fragment.entry.unwrap()];
    assert_eq!(f.name, "f🎨main");
}

// ---- trivia and positions ---------------------------------------------------

#[test]
fn line_endings_cr_lf_crlf_each_count_once() {
    for ending in ["\n", "\r", "\r\n"] {
        let text = base().replace('\n', ending);
        expect_ok("line endings", &text);
        let marked = text.replacen("(return)))))", "(return ‸x)))))", 1);
        let e = expect_error("line endings", &marked, Syntactic);
        assert_eq!(e.position.line, 18, "{ending:?}");
    }
    // Mixed endings in one file.
    let mixed = "(module 1\r\n(types)\r(uniforms)\n‸bogus";
    expect_error("mixed", mixed, Syntactic);
}

#[test]
fn columns_count_code_points() {
    let marked = edit("\"fmain\" V", "\"ça😀\" ‸\"V\"");
    let e = expect_error("columns", &marked, Syntactic);
    let line = marked.lines().find(|l| l.contains("ça")).unwrap();
    assert_eq!(
        e.position.column as usize,
        line.chars().position(|c| c == '‸').unwrap() + 1
    );
    assert!(
        e.position.offset as usize > line.len(),
        "offset is in bytes"
    );
}

#[test]
fn spaces_and_tabs_are_trivia() {
    expect_ok("tabs", &base().replace("  ", "\t \t"));
}

#[test]
fn block_comments_are_trivia_and_do_not_nest() {
    expect_ok(
        "block comment",
        &edit("(uniforms", "/* a\n multi-line\r\n comment */(uniforms"),
    );
    expect_ok("comment between words", &edit("(module 1", "(module/**/1"));
    expect_error(
        "nested",
        &edit("(uniforms", "/* outer /* inner */ ‸*/ (uniforms"),
        Lexical,
    );
    expect_error("unclosed", &format!("{}‸/* never closed", base()), Lexical);
}

#[test]
fn line_comments_are_trivia() {
    expect_ok(
        "line comment",
        &edit("(uniforms", "// a comment ( \" '\n  (uniforms"),
    );
    expect_ok(
        "comment at end",
        &format!("{}// last line without newline", base()),
    );
    expect_ok(
        "comment terminates a word",
        &edit("(module 1", "(module 1// one\n"),
    );
}

#[test]
fn line_continuations_are_trivia() {
    for ending in ["\n", "\r", "\r\n"] {
        expect_ok(
            "continuation",
            &edit("(module 1", &format!("(module \\{ending}1")),
        );
    }
    // A continuation separates words instead of joining them.
    let e = expect_error("no join", &edit("(module 1", "(‸mod\\\nule 1"), Syntactic);
    assert!(e.message.contains("`mod`"), "{e}");
    // A reverse solidus not followed by a line ending is not trivia.
    expect_error(
        "stray backslash",
        &edit("(module 1", "(module ‸\\ 1"),
        Lexical,
    );
    // A continuation moves to the next line.
    let e = expect_error(
        "line count",
        &edit("(module 1", "(module \\\n‸x"),
        Syntactic,
    );
    assert_eq!(e.position.line, 2);
}

#[test]
fn parentheses_and_quotes_terminate_words() {
    // id"display"Type is three tokens.
    expect_ok(
        "quotes",
        &edit("(function fe \"fmain\" V", "(function fe\"fmain\"V"),
    );
    expect_ok(
        "single quotes",
        &edit("(function fe \"fmain\" V", "(function fe'fmain'V"),
    );
    expect_ok(
        "parens",
        &edit("(store (stage color) r0)", "(store(stage color)r0)"),
    );
}

#[test]
fn other_punctuation_is_not_a_word() {
    expect_error("semicolon", &edit("(return)))", "(return)‸;))"), Lexical);
    expect_error("at", &edit("(uniforms", "‸@ (uniforms"), Lexical);
    expect_error(
        "inside a name",
        &edit("(type I int)", "(type I‸.x int)"),
        Lexical,
    );
    expect_error("period", &edit("(type I int)", "(type I ‸. int)"), Lexical);
    expect_error(
        "brackets",
        &edit("(type I int)", "(type I ‸[int])"),
        Lexical,
    );
    expect_error(
        "non-ascii name",
        &edit("(type I int)", "(type ‸Ï int)"),
        Lexical,
    );
    expect_error(
        "lone solidus",
        &edit("(type I int)", "(type I ‸/ int)"),
        Lexical,
    );
}

// ---- strings ------------------------------------------------------------------

#[test]
fn both_quote_styles_are_accepted() {
    let m = expect_ok("single", &edit("\"fmain\"", "'it\"s'"));
    assert_eq!(
        m.fragment.functions[m.fragment.entry.unwrap()].name,
        "it\"s"
    );
}

#[test]
fn the_escape_set_decodes_exactly() {
    let m = expect_ok(
        "escapes",
        &edit(
            "\"fmain\"",
            r#""a\\b\"c\'d\be\ff\ng\rh\ti\u00e9\u00C9\u0000""#,
        ),
    );
    assert_eq!(
        m.fragment.functions[m.fragment.entry.unwrap()].name,
        "a\\b\"c'd\u{8}e\u{c}f\ng\rh\ti\u{e9}\u{c9}\u{0}"
    );
    expect_ok("non-BMP raw", &edit("\"fmain\"", "\"🦀\""));
}

#[test]
fn bad_escapes_are_rejected() {
    expect_error("unknown", &edit("\"fmain\"", "\"f‸\\xmain\""), Lexical);
    expect_error(
        "three hex digits",
        &edit("\"fmain\"", "\"f‸\\u00eg\""),
        Lexical,
    );
    expect_error("short at end", &edit("\"fmain\"", "\"f‸\\u12\""), Lexical);
    expect_error(
        "high surrogate",
        &edit("\"fmain\"", "\"f‸\\uD83E\\uDD80\""),
        Lexical,
    );
    expect_error(
        "low surrogate",
        &edit("\"fmain\"", "\"f‸\\udc00\""),
        Lexical,
    );
    expect_error("braced", &edit("\"fmain\"", "\"f‸\\u{41}\""), Lexical);
}

#[test]
fn raw_controls_and_line_endings_are_rejected_in_strings() {
    expect_error("tab", &edit("\"fmain\"", "\"f‸\tmain\""), Lexical);
    expect_error("nul", &edit("\"fmain\"", "\"f‸\u{0}main\""), Lexical);
    expect_error("lf", &edit("\"fmain\"", "\"f‸\nmain\""), Lexical);
    expect_error("cr", &edit("\"fmain\"", "\"f‸\rmain\""), Lexical);
    expect_ok("del is not C0", &edit("\"fmain\"", "\"f\u{7f}main\""));
}

#[test]
fn unclosed_strings_are_rejected_at_the_quote() {
    expect_error("unclosed", &format!("{}‸\"abc", base()), Lexical);
    expect_error("mismatched quotes", &format!("{}‸'abc\"", base()), Lexical);
}

// ---- numbers ------------------------------------------------------------------

fn int_case(literal: &str) -> String {
    let body = format!("\n          (copy r1 (int {literal}))");
    Case {
        regs: " (register r1 I)",
        body: &body,
        ..Case::default()
    }
    .text()
}

#[test]
fn signed_int32_operands() {
    for (text, value) in [
        ("0", 0),
        ("-2147483648", i32::MIN),
        ("2147483647", i32::MAX),
        ("+7", 7),
        ("-0", 0),
        ("007", 7),
    ] {
        let m = expect_ok(text, &int_case(text));
        assert_eq!(first_body_literal(&m), Literal::Int(value), "{text}");
    }
    for bad in ["2147483648", "-2147483649", "99999999999999999999999"] {
        let e = expect_error(bad, &int_case(&format!("‸{bad}")), Lexical);
        assert!(e.message.contains("range"), "{e}");
    }
    expect_error("fraction", &int_case("‸1.0"), Syntactic);
    expect_error("exponent", &int_case("‸1e3"), Syntactic);
    expect_error("name", &int_case("‸one"), Syntactic);
}

#[test]
fn signed_locations() {
    expect_ok("location", &edit("\"color\" C 0", "\"color\" C +0"));
    expect_error(
        "location range",
        &edit("\"color\" C 0", "\"color\" C ‸4294967296"),
        Lexical,
    );
    expect_error(
        "location fraction",
        &edit("\"color\" C 0", "\"color\" C ‸0.5"),
        Syntactic,
    );
}

#[test]
fn unsigned_sizes_within_the_bound() {
    let m = expect_ok(
        "huge unused array",
        &Case {
            types: "\n    (type Big array I 18446744073709551615)",
            ..Case::default()
        }
        .text(),
    );
    assert!(m.types.iter().any(|(_, t)| matches!(
        t.inner,
        TypeInner::Array {
            length: u64::MAX,
            ..
        }
    )));
    let e = expect_error(
        "beyond u64",
        &Case {
            types: "\n    (type Big array I ‸18446744073709551616)",
            ..Case::default()
        }
        .text(),
        Lexical,
    );
    assert!(e.message.contains("range"), "{e}");
    expect_error(
        "array length 0",
        &Case {
            types: "\n    (type Empty array I ‸0)",
            ..Case::default()
        }
        .text(),
        Semantic,
    );
    expect_error(
        "signed size",
        &Case {
            types: "\n    (type A array I ‸+2)",
            ..Case::default()
        }
        .text(),
        Syntactic,
    );
    expect_error(
        "fractional size",
        &Case {
            types: "\n    (type A array I ‸2.0)",
            ..Case::default()
        }
        .text(),
        Syntactic,
    );
    expect_ok("leading zeros", &edit("(module 1", "(module 0001"));
}

fn float_case(literal: &str) -> String {
    let body = format!("\n          (copy r1 (float {literal}))");
    Case {
        regs: " (register r1 F)",
        body: &body,
        ..Case::default()
    }
    .text()
}

fn float_bits(literal: &str) -> u32 {
    match first_body_literal(&expect_ok(literal, &float_case(literal))) {
        Literal::Float(f) => f.to_bits(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn floats_round_once_to_nearest_even_binary32() {
    assert_eq!(float_bits("1.0"), 1.0f32.to_bits());
    assert_eq!(float_bits("0.1"), 0.1f32.to_bits());
    assert_eq!(float_bits(".5"), 0.5f32.to_bits());
    assert_eq!(float_bits("5."), 5.0f32.to_bits());
    assert_eq!(float_bits("+2.5E-3"), 2.5e-3f32.to_bits());
    assert_eq!(float_bits("3"), 3.0f32.to_bits());
    // Just above the midpoint between 1 and the next binary32: rounding
    // through binary64 first would land on the midpoint and then round to
    // even (1.0); a single rounding gives 1 + 2^-23.
    assert_eq!(float_bits("1.000000059604644775390625000001"), 0x3F80_0001);
    // Exactly the midpoint: ties to even.
    assert_eq!(float_bits("1.000000059604644775390625"), 0x3F80_0000);
    assert_eq!(float_bits("1.000000178813934326171875"), 0x3F80_0002);
}

#[test]
fn signed_zero_subnormals_and_underflow() {
    assert_eq!(float_bits("-0.0"), 0x8000_0000);
    assert_eq!(float_bits("0.0"), 0);
    assert_eq!(float_bits("1e-45"), 1, "smallest subnormal");
    assert_eq!(
        float_bits("1.1754942e-38"),
        0x007F_FFFF,
        "largest subnormal"
    );
    assert_eq!(float_bits("1e-50"), 0, "underflow to zero");
    assert_eq!(
        float_bits("-1e-50"),
        0x8000_0000,
        "underflow keeps the sign"
    );
    assert_eq!(float_bits("3.4028235e38"), f32::MAX.to_bits());
}

#[test]
fn float_overflow_is_rejected() {
    for bad in ["1e39", "-3.5e38", "340282357000000000000000000000000000000"] {
        let e = expect_error(bad, &float_case(&format!("‸{bad}")), Lexical);
        assert!(e.message.contains("overflow"), "{e}");
    }
}

#[test]
fn malformed_numbers_are_lexical_errors() {
    for bad in [
        "1.2.3", "1e", "1e+", "--1", "+", ".", ".e5", "1x", "0x10", "1_000", "+-1", "1e5.0",
    ] {
        expect_error(bad, &float_case(&format!("‸{bad}")), Lexical);
    }
    expect_error("not a number", &float_case("‸pi"), Syntactic);
}

// ---- names ----------------------------------------------------------------------

#[test]
fn reserved_words_cannot_be_ids() {
    for word in ["true", "false", "void"] {
        expect_error(
            word,
            &edit("(type I int)", &format!("(type ‸{word} int)")),
            Syntactic,
        );
    }
    expect_ok(
        "reserved as prefix",
        &edit(
            "(type I int)",
            "(type I int) (type void_t void) (type truth bool)",
        ),
    );
}

#[test]
fn names_are_ascii_and_case_sensitive() {
    expect_error("keyword case", &edit("(module 1", "(‸Module 1"), Syntactic);
    expect_error(
        "id case",
        &edit(
            "(register r0 C))\n        (block entry\n          (construct r0 (float 0.0)",
            "(register r0 ‸c))\n        (block entry\n          (construct r0 (float 0.0)",
        ),
        Semantic,
    );
    expect_ok(
        "distinct by case",
        &Case {
            types: "\n    (type c vector float 4) (type v void)",
            ..Case::default()
        }
        .text(),
    );
    expect_ok(
        "underscores and digits",
        &edit("(type I int)", "(type _I_2 int) (type I int)"),
    );
    expect_error(
        "leading digit",
        &edit("(type I int)", "(type ‸2I int)"),
        Lexical,
    );
    expect_error(
        "only underscores",
        &edit("(type I int)", "(type ‸__ int)"),
        Lexical,
    );
}

#[test]
fn register_spellings() {
    // r0 and r00 are the same register.
    let text = body("\n          (copy r00 r0)");
    expect_ok("r00 is r0", &text.text());
    expect_error(
        "duplicate via r00",
        &Case {
            regs: " (register ‸r00 C)",
            ..Case::default()
        }
        .text(),
        Semantic,
    );
    expect_error(
        "bare r",
        &body("\n          (copy ‸r r0)").text(),
        Syntactic,
    );
    expect_error(
        "r + name",
        &body("\n          (copy ‸rx r0)").text(),
        Syntactic,
    );
    expect_error(
        "non-register",
        &body("\n          (copy ‸x0 r0)").text(),
        Syntactic,
    );
    expect_error(
        "register range",
        &Case {
            regs: " (register ‸r18446744073709551616 C)",
            ..Case::default()
        }
        .text(),
        Lexical,
    );
    let m = expect_ok(
        "large register",
        &Case {
            regs: " (register r18446744073709551615 C)",
            ..Case::default()
        }
        .text(),
    );
    let f = &m.fragment.functions[m.fragment.entry.unwrap()];
    assert!(f.declared_registers().any(|i| matches!(i.kind, InstructionKind::DeclareLocal { register } if register.index == u64::MAX)));
}

// ---- grammar --------------------------------------------------------------------

#[test]
fn version_must_be_one() {
    expect_error("version 2", &edit("(module 1", "(module ‸2"), Semantic);
    expect_error("version 0", &edit("(module 1", "(module ‸0"), Semantic);
    expect_error(
        "version missing",
        &edit("(module 1\n  (types", "(module\n  ‸(types"),
        Syntactic,
    );
    expect_error("negative", &edit("(module 1", "(module ‸-1"), Syntactic);
}

#[test]
fn empty_and_truncated_inputs() {
    expect_error("empty", "‸", Syntactic);
    expect_error("only trivia", "  // nothing\n‸", Syntactic);
    let b = base();
    let cut = &b[..b.find("(store (stage color)").unwrap()];
    expect_error("truncated", &format!("{cut}‸"), Syntactic);
}

#[test]
fn trailing_input_is_rejected_at_the_first_trailing_token() {
    expect_error(
        "trailing form",
        &format!("{}\n// fine\n  ‸(module 1)", base()),
        Syntactic,
    );
    expect_error("trailing word", &format!("{} ‸x y", base()), Syntactic);
    expect_error("trailing paren", &format!("{}‸)", base()), Syntactic);
    expect_ok(
        "trailing trivia",
        &format!("{}\n  /* done */ // end\n\n", base()),
    );
}

#[test]
fn type_shapes() {
    let t = |types: &str| {
        Case {
            types,
            ..Case::default()
        }
        .text()
    };
    expect_ok(
        "all shapes",
        &t(
            "\n    (type S sampler2D) (type M matrix 2 4) (type M2 matrix 4 4) (type IV vector int 2) (type BV vector bool 3) (type R record \"R\" (field \"a\" I) (field \"b\" M)) (type ER record \"E\") (type A array R 2)",
        ),
    );
    expect_error("vector 5", &t("\n    (type X vector float ‸5)"), Semantic);
    expect_error("vector 1", &t("\n    (type X vector float ‸1)"), Semantic);
    expect_error("matrix rows", &t("\n    (type X matrix ‸1 2)"), Semantic);
    expect_error("matrix columns", &t("\n    (type X matrix 2 ‸5)"), Semantic);
    expect_error(
        "vector kind",
        &t("\n    (type X vector ‸double 2)"),
        Syntactic,
    );
    expect_error(
        "vector of void",
        &t("\n    (type X vector ‸void 2)"),
        Syntactic,
    );
    expect_error("unknown shape", &t("\n    (type X ‸double)"), Syntactic);
    expect_error(
        "record without name",
        &t("\n    (type X record ‸(field \"a\" I))"),
        Syntactic,
    );
    expect_error(
        "field shape",
        &t("\n    (type X record \"X\" (field ‸a I))"),
        Syntactic,
    );
    expect_error(
        "field type unknown",
        &t("\n    (type X record \"X\" (field \"a\" ‸Nope))"),
        Semantic,
    );
    expect_error(
        "array element unknown",
        &t("\n    (type X array ‸Nope 2)"),
        Semantic,
    );
    expect_error("extra atom", &t("\n    (type X int ‸int)"), Syntactic);
}

#[test]
fn duplicate_type_ids_are_rejected() {
    let t = |types: &str| {
        Case {
            types,
            ..Case::default()
        }
        .text()
    };
    expect_error("same shape", &t("\n    (type ‸I int)"), Semantic);
    expect_error("other shape", &t("\n    (type ‸C record \"C\")"), Semantic);
    // Equal shapes under different IDs are fine (and one type).
    expect_ok("aliases", &t("\n    (type Int2 int)"));
}

#[test]
fn type_forward_references_and_nominal_records() {
    let m = expect_ok("forward", &Case {
        types: "\n    (type Pair array Cell 2)\n    (type Cell record \"Cell\" (field \"v\" C))\n    (type Twin record \"Cell\" (field \"v\" C))",
        uniforms: " (record a \"a\" Cell) (record b \"b\" Twin) (record c \"c\" Cell) (array d \"d\" Cell 2) (array e \"e\" Cell 2)",
        ..Case::default()
    }.text());
    let u = &m.uniforms;
    assert_eq!(u[0].ty, u[2].ty, "one declaration, one type");
    assert_ne!(u[0].ty, u[1].ty, "equal declarations are distinct types");
    assert_eq!(u[3].ty, u[4].ty, "array types are structural");
}

#[test]
fn recursive_types_are_rejected_even_unused() {
    let t = |types: &str| {
        Case {
            types,
            ..Case::default()
        }
        .text()
    };
    expect_error(
        "self",
        &t("\n    ‸(type X record \"X\" (field \"x\" X))"),
        Semantic,
    );
    expect_error(
        "through array",
        &t("\n    ‸(type L array N 2)\n    (type N record \"N\" (field \"next\" L))"),
        Semantic,
    );
}

#[test]
fn type_dependency_depth_is_limited_to_128() {
    let chain = |n: usize| {
        let mut s = String::new();
        // Declared in reverse so that every reference is a forward one.
        for i in (1..=n).rev() {
            s.push_str(&format!("\n    (type D{i} array D{} 1)", i - 1));
        }
        s.push_str("\n    (type D0 int)");
        s
    };
    expect_ok(
        "depth 128",
        &Case {
            types: &chain(128),
            ..Case::default()
        }
        .text(),
    );
    let deep = chain(129);
    let text = Case {
        types: &deep,
        ..Case::default()
    }
    .text()
    .replacen("(type D129", "‸(type D129", 1);
    let e = expect_error("depth 129", &text, Semantic);
    assert!(e.message.contains("depth"), "{e}");
}

#[test]
fn uniform_forms() {
    let u = |uniforms: &str| {
        Case {
            types: "\n    (type R record \"R\" (field \"x\" F))",
            uniforms,
            ..Case::default()
        }
        .text()
    };
    expect_ok(
        "all kinds",
        &u(" (scalar a \"a\" C) (record b \"b\" R) (array c \"c\" F 3) (scalar s \"s\" S)")
            .replace("(type R ", "(type S sampler2D) (type R "),
    );
    expect_error(
        "record kind, scalar type",
        &u(" (record b \"b\" ‸F)"),
        Semantic,
    );
    expect_error(
        "scalar kind, record type",
        &u(" (scalar b \"b\" ‸R)"),
        Semantic,
    );
    expect_error("array count 0", &u(" (array c \"c\" F ‸0)"), Semantic);
    expect_error("array without count", &u(" (array c \"c\" F‸)"), Syntactic);
    expect_error("unknown kind", &u(" (‸matrix c \"c\" F)"), Syntactic);
    expect_error(
        "duplicate id",
        &u(" (scalar a \"a\" F) (scalar ‸a \"b\" F)"),
        Semantic,
    );
    expect_error("unknown type", &u(" (scalar a \"a\" ‸G)"), Semantic);
}

#[test]
fn interface_forms() {
    expect_ok(
        "in",
        &Case {
            iface: " (in uv \"uv\" C 1 texcoord)",
            ..Case::default()
        }
        .text()
        .replace(
            "(out pos \"pos\" C -1 position)",
            "(out pos \"pos\" C -1 position) (out uv \"uv\" C 1 texcoord)",
        )
        // Every vertex output is assigned before the entry returns.
        .replacen(
            "(store (stage pos) r0)",
            "(store (stage pos) r0)\n          (store (stage uv) r0)",
            1,
        ),
    );
    expect_error(
        "direction",
        &Case {
            iface: " (‸inout uv \"uv\" C 1 none)",
            ..Case::default()
        }
        .text(),
        Syntactic,
    );
    expect_error(
        "semantic",
        &Case {
            iface: " (out uv \"uv\" C 1 ‸normal)",
            ..Case::default()
        }
        .text(),
        Syntactic,
    );
    expect_error(
        "duplicate across directions",
        &Case {
            iface: " (in ‸color \"c2\" C 1 none)",
            ..Case::default()
        }
        .text(),
        Semantic,
    );
    expect_error(
        "display name must be a string",
        &Case {
            iface: " (out uv ‸uv C 1 none)",
            ..Case::default()
        }
        .text(),
        Syntactic,
    );
}

#[test]
fn interface_ids_are_stage_local() {
    // Both stages may use the same interface ID.
    expect_ok(
        "same id",
        &edit(
            "(out pos \"pos\" C -1 position))\n    (functions\n      (function ve \"vmain\" V\n        (parameters)\n        (registers (register r0 C))\n        (block entry\n          (construct r0 (float 1.0))\n          (store (stage pos) r0)",
            "(out color \"pos\" C -1 position))\n    (functions\n      (function ve \"vmain\" V\n        (parameters)\n        (registers (register r0 C))\n        (block entry\n          (construct r0 (float 1.0))\n          (store (stage color) r0)",
        ),
    );
    // A stage cannot name the other stage's interface.
    expect_error(
        "other stage",
        &body("\n          (store (stage ‸pos) r0)").text(),
        Semantic,
    );
}

const HELPER: &str = "\n      (function helper \"helper\" F\n        (parameters (parameter x F))\n        (registers (register r0 F))\n        (block entry\n          (load r0 (parameter x))\n          (return r0)))";

#[test]
fn function_forward_references_and_scopes() {
    let c = Case {
        regs: " (register r1 F)",
        body: "\n          (call r1 helper (float 2.0))",
        funcs: HELPER,
        ..Case::default()
    };
    let m = expect_ok("forward call", &c.text());
    assert_eq!(m.fragment.functions.len(), 2);
    // Registers and blocks are function-local: helper reuses r0 and `entry`.
    let c = Case {
        regs: " (register r1 F)",
        body: "\n          (call r1 ‸nothere (float 2.0))",
        funcs: HELPER,
        ..Case::default()
    };
    expect_error("unknown callee", &c.text(), Semantic);
    let c = Case {
        regs: " (register r1 F)",
        body: "\n          (call r1 ‸ve (float 2.0))",
        ..Case::default()
    };
    expect_error("other stage's function", &c.text(), Semantic);
    let c = Case {
        funcs: "\n      (function ‸fe \"other\" V (parameters) (registers) (block b (return)))",
        ..Case::default()
    };
    expect_error("duplicate function id", &c.text(), Semantic);
    expect_error(
        "unknown entry",
        &edit("(fragment fe", "(fragment ‸fx"),
        Semantic,
    );
    expect_error(
        "void call result",
        &body("\n          (call ‸vo helper)").text(),
        Syntactic,
    );
}

#[test]
fn parameters() {
    let f = |params: &str| {
        let funcs = format!(
            "\n      (function h \"h\" V (parameters{params}) (registers) (block b (return)))"
        );
        Case {
            funcs: &funcs,
            ..Case::default()
        }
        .text()
    };
    expect_ok("params", &f(" (parameter a F) (parameter b C)"));
    // Parameter IDs are function-local: a second function reuses `a`.
    let two = Case {
        funcs: "\n      (function h \"h\" V (parameters (parameter a F)) (registers) (block b (return)))\n      (function g \"g\" V (parameters (parameter a C)) (registers (register r0 C)) (block b (load r0 (parameter a)) (return)))",
        ..Case::default()
    };
    let m = expect_ok("function-local parameter IDs", &two.text());
    assert_eq!(m.fragment.functions.len(), 3);
    expect_error(
        "duplicate",
        &f(" (parameter a F) (parameter ‸a C)"),
        Semantic,
    );
    expect_error("unknown type", &f(" (parameter a ‸G)"), Semantic);
    expect_error("shape", &f(" (parameter a‸)"), Syntactic);
    let c = Case {
        body: "\n          (load r0 (parameter ‸x))",
        ..Case::default()
    };
    expect_error("unknown parameter", &c.text(), Semantic);
}

#[test]
fn registers_form_the_entry_block_prefix() {
    let m = expect_ok(
        "regs",
        &Case {
            regs: " (register r7 F) (register r3 I)",
            ..Case::default()
        }
        .text(),
    );
    let f = &m.fragment.functions[m.fragment.entry.unwrap()];
    let first = &f.blocks.iter().next().unwrap().1.instructions;
    let declared: Vec<u64> = first
        .iter()
        .take(3)
        .map(|i| match i.kind {
            InstructionKind::DeclareLocal { register } => register.index,
            ref other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(declared, [0, 7, 3]);
    assert!(!matches!(
        first[3].kind,
        InstructionKind::DeclareLocal { .. }
    ));
    expect_error(
        "duplicate",
        &Case {
            regs: " (register ‸r0 F)",
            ..Case::default()
        }
        .text(),
        Semantic,
    );
    expect_error(
        "undeclared",
        &body("\n          (copy ‸r9 r0)").text(),
        Semantic,
    );
    expect_error(
        "undeclared operand",
        &body("\n          (copy r0 ‸r9)").text(),
        Semantic,
    );
    expect_error(
        "unknown type",
        &Case {
            regs: " (register r1 ‸G)",
            ..Case::default()
        }
        .text(),
        Semantic,
    );
}

#[test]
fn blocks_and_terminators() {
    let loop_body =
        "\n          (branch next))\n        (block next\n          (construct r0 (float 1.0))";
    expect_ok("forward block", &body(loop_body).text());
    expect_error("unknown block", &body("\n          (branch ‸nowhere))\n        (block next\n          (construct r0 (float 1.0))").text(), Semantic);
    expect_error("duplicate block", &body("\n          (branch entry))\n        (block ‸entry\n          (construct r0 (float 1.0))").text(), Semantic);
    expect_error(
        "no terminator",
        &edit(
            "(store (stage color) r0)\n          (return)))",
            "(store (stage color) r0)‸)))",
        ),
        Syntactic,
    );
    expect_error(
        "instruction after terminator",
        &edit(
            "(store (stage color) r0)\n          (return)",
            "(store (stage color) r0)\n          (return)\n          ‸(copy r0 r0)",
        ),
        Syntactic,
    );
    expect_error(
        "two terminators",
        &edit(
            "(store (stage color) r0)\n          (return)",
            "(store (stage color) r0)\n          (return)\n          ‸(return)",
        ),
        Syntactic,
    );
    expect_error(
        "unknown instruction",
        &body("\n          (‸move r0 r0)").text(),
        Syntactic,
    );
    expect_error(
        "function without block",
        &Case {
            funcs: "\n      (function h \"h\" V (parameters) (registers)‸)",
            ..Case::default()
        }
        .text(),
        Syntactic,
    );
    expect_error(
        "return with two values",
        &edit(
            "(store (stage color) r0)\n          (return)",
            "(store (stage color) r0)\n          (return r0 ‸r0)",
        ),
        Syntactic,
    );
    expect_error(
        "branch_if shape",
        &body("\n          (branch_if (bool true) next‸)").text(),
        Syntactic,
    );
}

#[test]
fn instruction_shapes() {
    let regs = " (register r1 F) (register r2 B) (register r3 I) (register r4 S) (register r5 P)";
    let types = "\n    (type S sampler2D) (type P vector float 2)";
    let ok = |b: &str| {
        expect_ok(
            b,
            &Case {
                types,
                regs,
                body: b,
                ..Case::default()
            }
            .text(),
        )
    };
    ok(
        "\n          (copy r1 (float 1.0)) (add r1 r1 (float 2.0)) (less r2 r1 (float 3.0)) (equal r2 r2 (bool false))",
    );
    ok(
        "\n          (swizzle r1 r0 \"x\") (swizzle r5 r0 \"wz\") (copy r3 (int 1)) (multiply r3 r3 (int -3))",
    );
    for op in ["add", "subtract", "multiply", "divide"] {
        ok(&format!(
            "\n          (copy r1 (float 1.0)) ({op} r1 r1 (float 2.0))"
        ));
    }
    for op in [
        "equal",
        "not_equal",
        "less",
        "less_equal",
        "greater",
        "greater_equal",
    ] {
        ok(&format!(
            "\n          (copy r3 (int 1)) ({op} r2 r3 (int 2))"
        ));
    }
    let bad = |b: &str, kind| {
        expect_error(
            b,
            &Case {
                types,
                regs,
                body: b,
                ..Case::default()
            }
            .text(),
            kind,
        )
    };
    bad("\n          (texture ‸void r4 r5)", Syntactic);
    bad("\n          (copy r1 (‸double 1.0))", Syntactic);
    bad("\n          (copy r1 (bool ‸yes))", Syntactic);
    bad("\n          (copy r1 ‸\"s\")", Syntactic);
    bad("\n          (copy r1 (float 1.0) ‸r1)", Syntactic);
    bad("\n          (add r1 r1‸)", Syntactic);
    bad("\n          (load r1 ‸r1)", Syntactic);
    bad("\n          (load r1 (‸register r1))", Syntactic);
    bad("\n          (swizzle r1 r0 ‸x)", Syntactic);
    bad("\n          (swizzle r1 r0 ‸\"xq\")", Semantic);
    bad("\n          (member r1 r0 ‸x)", Syntactic);
    bad(
        "\n          (store (stage color) (‸stage color))",
        Syntactic,
    );
}

#[test]
fn references_bind_declared_slot_types() {
    let types = "\n    (type Cell record \"Cell\" (field \"color\" C) (field \"n\" I))\n    (type Cells array Cell 2)";
    let regs = " (register r1 Cells) (register r2 Cell) (register r3 I)";
    let ok = |b: &str| {
        expect_ok(
            b,
            &Case {
                types,
                regs,
                body: b,
                ..Case::default()
            }
            .text(),
        )
    };
    let m = ok(
        "\n          (construct r2 r0 (int 1)) (construct r1 r2 r2) (copy r3 (int 1))\n          (store (member_ref (index_ref (local r1) r3) \"color\") r0)\n          (load r0 (member_ref (index_ref (local r1) (int 0)) \"color\"))",
    );
    let f = &m.fragment.functions[m.fragment.entry.unwrap()];
    let store = f
        .blocks
        .iter()
        .next()
        .unwrap()
        .1
        .instructions
        .iter()
        .find_map(|i| match &i.kind {
            InstructionKind::Store { target, .. } if target.is_derived() => Some(target.clone()),
            _ => None,
        });
    let target = store.unwrap();
    assert_eq!(target.path.len(), 2);
    assert_eq!(
        m.types.inner(target.ty()),
        Some(&TypeInner::Vector {
            kind: vpl::ir::ScalarKind::Float,
            size: 4
        })
    );
    let bad = |b: &str, kind| {
        expect_error(
            b,
            &Case {
                types,
                regs,
                body: b,
                ..Case::default()
            }
            .text(),
            kind,
        )
    };
    bad(
        "\n          (load r0 ‸(member_ref (local r1) \"color\"))",
        Semantic,
    );
    bad(
        "\n          (load r3 ‸(index_ref (local r2) (int 0)))",
        Semantic,
    );
    bad(
        "\n          (load r0 (member_ref (local r2) ‸\"colour\"))",
        Semantic,
    );
    bad(
        "\n          (load r0 (member_ref (local r2) ‸color))",
        Syntactic,
    );
    bad("\n          (load r0 (local ‸r9))", Semantic);
    bad("\n          (load r0 (uniform ‸u))", Semantic);
    bad("\n          (load r0 (‸global r1))", Syntactic);
}

#[test]
fn form_nesting_is_limited_to_128() {
    // Records N0..Nk, each with one field "x"; N0.x is a vec4.
    let deep_types = |k: usize| {
        let mut s = String::from("\n    (type N0 record \"N\" (field \"x\" C))");
        for i in 1..=k {
            s.push_str(&format!(
                "\n    (type N{i} record \"N\" (field \"x\" N{}))",
                i - 1
            ));
        }
        s
    };
    // `k` member selectors from a uniform of type N(k-1) down to the vec4.
    let reference = |k: usize| {
        format!(
            "{}(uniform u){}",
            "(member_ref ".repeat(k),
            " \"x\")".repeat(k)
        )
    };
    let case = |k: usize, reference: &str| {
        let types = deep_types(k - 1);
        let uniforms = format!(" (record u \"u\" N{})", k - 1);
        let body = format!("\n          (load r0 {reference})");
        Case {
            types: &types,
            uniforms: &uniforms,
            body: &body,
            ..Case::default()
        }
        .text()
    };
    // The instruction form is at level 6, so 120 selectors put the root
    // form at level 127 and its atoms at 128.
    for k in [1usize, 120] {
        let m = expect_ok("deep reference", &case(k, &reference(k)));
        let written = vpl::text::write(&m).expect("writes");
        assert_eq!(
            vpl::text::write(&expect_ok("reread", &written)).unwrap(),
            written
        );
    }
    // With 121 selectors the root form would be at level 128.
    let r = reference(121);
    let at = r.match_indices('(').nth(121).unwrap().0;
    let marked = format!("{}‸{}", &r[..at], &r[at..]);
    let e = expect_error("too deep", &case(121, &marked), Syntactic);
    assert!(e.message.contains("128"), "{e}");
}

#[test]
fn hostile_nesting_gives_a_clean_error() {
    let deep = "(".repeat(100_000);
    let e = vpl::text::read(deep.as_bytes(), "deep.vpl").unwrap_err();
    assert_eq!(e.kind, Syntactic);
    let mut inside = base();
    let at = inside
        .find("(load")
        .unwrap_or(inside.find("(store (stage color)").unwrap());
    inside.insert_str(at, &"(member_ref ".repeat(100_000));
    let e = vpl::text::read(inside.as_bytes(), "deep.vpl").unwrap_err();
    assert_eq!(e.kind, Syntactic);
    let deep_close = format!("{}{}", "(".repeat(100_000), ")".repeat(100_000));
    assert!(vpl::text::read(deep_close.as_bytes(), "x").is_err());
}

#[test]
fn verifier_failures_are_semantic_and_located() {
    // A void record field passes the reader's binding and fails verification;
    // the error points into the declaration (the verifier picks the object).
    let decl = "(type X record \"X\" (field \"a\" V))";
    let text = Case {
        types: &format!("\n    {decl}"),
        ..Case::default()
    }
    .text();
    let e = vpl::text::read(text.as_bytes(), "case.vpl").unwrap_err();
    assert_eq!(e.kind, Semantic, "{e}");
    assert!(e.verify.is_some());
    let start = text.find(decl).unwrap() as u32;
    assert!(
        (start..start + decl.len() as u32).contains(&e.position.offset),
        "{e}"
    );
    assert_eq!(e.position.line, 8, "{e}");
    assert_eq!(e.code(), "VPL-V-TYPE", "{e}");
}

#[test]
fn each_error_class_has_its_stable_code() {
    let mut bom = vec![0xEF, 0xBB, 0xBF];
    bom.extend_from_slice(base().as_bytes());
    let lexical = vpl::text::read(&bom, "bom.vpl").unwrap_err();
    assert_eq!((lexical.kind, lexical.code()), (Lexical, "VPL-LEXICAL"));
    let marked = base().replacen("(return)))))", "(return ‸x)))))", 1);
    let syntactic = expect_error("trailing operand", &marked, Syntactic);
    assert_eq!(syntactic.code(), "VPL-SYNTACTIC");
    let semantic = expect_error("version 2", &edit("(module 1", "(module ‸2"), Semantic);
    assert!(semantic.verify.is_none());
    assert_eq!(semantic.code(), "VPL-SEMANTIC");
}

#[test]
fn position_helper_matches_reader_conventions() {
    assert_eq!(position("a\r\nb\rc\nd", 7), (7, 4, 1));
    assert_eq!(position("é", 2), (2, 1, 2));
}

#[test]
fn member_references_into_large_records() {
    let mut types = String::from("\n    (type Big record \"Big\"");
    for i in 0..100 {
        let ty = if i == 57 { "C" } else { "F" };
        types.push_str(&format!(" (field \"f{i}\" {ty})"));
    }
    types.push(')');
    let uniforms = " (record u \"u\" Big)";
    let ok = Case {
        types: &types,
        uniforms,
        body: "\n          (load r0 (member_ref (uniform u) \"f57\"))",
        ..Case::default()
    };
    expect_ok("field 57", &ok.text());
    let bad = Case {
        types: &types,
        uniforms,
        body: "\n          (load r0 (member_ref (uniform u) ‸\"f100\"))",
        ..Case::default()
    };
    expect_error("no field 100", &bad.text(), Semantic);
}

#[test]
fn texture_sampling_reads_as_a_builtin_call_and_round_trips() {
    let c = Case {
        types: "\n    (type S sampler2D) (type P vector float 2)",
        uniforms: " (scalar tex \"tex\" S)",
        regs: " (register r4 S) (register r5 P)",
        body: "\n          (load r4 (uniform tex))\n          (swizzle r5 r0 \"xy\")\n          (texture r0 r4 r5)",
        ..Case::default()
    };
    let m = expect_ok("texture", &c.text());
    let f = &m.fragment.functions[m.fragment.entry.unwrap()];
    let call = f
        .blocks
        .iter()
        .flat_map(|(_, b)| b.instructions.iter())
        .find_map(|i| match &i.kind {
            InstructionKind::Call {
                result,
                callee,
                arguments,
            } => Some((*result, *callee, arguments.len())),
            _ => None,
        })
        .expect("a call");
    assert_eq!(call.1, vpl::ir::Callee::Builtin(vpl::ir::Builtin::Texture));
    assert_eq!(call.0.map(|r| r.index), Some(0));
    assert_eq!(call.2, 2);
    let text = vpl::text::write(&m).unwrap();
    assert!(text.contains("(texture r0 r4 r5)"), "{text}");
    assert!(text.contains("(scalar u0 \"tex\" t"), "{text}");
}
