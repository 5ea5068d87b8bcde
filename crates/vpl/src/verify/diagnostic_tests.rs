//! The verifier's messages read from text name the objects they mention by
//! the text's identifiers ([`super::VerifyError::user_message`]).

use super::replace_numbered;

/// A module with a vertex stage that passes a point through and a fragment
/// stage whose function list, uniforms and types are given.
fn module(types: &str, uniforms: &str, fragment: &str) -> String {
    format!(
        r#"(module 1
  (types
    (type Unit void)
    (type I32 int)
    (type F32 float)
    (type Point vector float 2)
    (type Rgba vector float 4){types})
  (uniforms{uniforms})
  (vertex vs
    (interface
      (in corner "corner" Point 0 none)
      (out pos "pos" Rgba -1 position))
    (functions
      (function vs "vertex_main" Unit
        (parameters)
        (registers (register r1 Point) (register r2 Rgba))
        (block only
          (load r1 (stage corner))
          (construct r2 r1 (float 0.0) (float 1.0))
          (store (stage pos) r2)
          (return)))))
  (fragment fs
    (interface (out color "color" Rgba 0 fragment_color))
    (functions{fragment})))
"#
    )
}

const MAIN: &str = r#"
      (function fs "fragment_main" Unit
        (parameters)
        (registers (register r0 Rgba))
        (block only
          (construct r0 (float 1.0) (float 1.0) (float 1.0) (float 1.0))
          (store (stage color) r0)
          (return)))"#;

fn message(text: &str) -> String {
    match crate::text::read(text.as_bytes(), "t.vpl") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.message,
    }
}

#[test]
fn a_duplicate_function_name_names_the_first_function_by_its_identifier() {
    let helper = r#"
      (function helper "fragment_main" I32
        (parameters)
        (registers)
        (block only (return (int 1))))"#;
    let m = message(&module("", "", &format!("{MAIN}{helper}")));
    assert!(
        m.contains("is already used by function `fs` of this stage"),
        "{m}"
    );
    assert!(m.starts_with("function `helper` (fragment stage)"), "{m}");
}

#[test]
fn a_duplicate_uniform_name_names_the_first_uniform_by_its_identifier() {
    let uniforms = r#" (scalar steps "steps" I32) (scalar count "steps" I32)"#;
    let m = message(&module("", uniforms, MAIN));
    assert!(m.contains("already used by uniform `steps`"), "{m}");
    assert!(!m.contains(" u0"), "{m}");
}

#[test]
fn a_record_type_is_named_by_its_identifier() {
    let types = r#"
    (type Tint record "Tint" (field "rgb" F32))
    (type Shade record "Colour" (field "v" F32))"#;
    let fragment = r#"
      (function fs "fragment_main" Unit
        (parameters)
        (registers (register r0 Tint) (register r1 Shade))
        (block only
          (construct r0 (float 1.0))
          (copy r1 r0)
          (return)))"#;
    let m = message(&module(types, "", fragment));
    assert!(!m.contains("type entry"), "{m}");
    assert!(m.contains("record `Tint`"), "{m}");
    assert!(m.contains("record `Shade` (\"Colour\")"), "{m}");
}

#[test]
fn numbered_names_are_replaced_only_as_whole_words() {
    let spell = |n: usize| Some(format!("<{n}>"));
    assert_eq!(
        replace_numbered(
            "uniform u1 and uniform u12, not uniform u1x",
            "uniform u",
            "",
            spell
        ),
        "<1> and <12>, not uniform u1x"
    );
    assert_eq!(
        replace_numbered(
            "function f2 of this stage; function f3 of that",
            "function f",
            " of this stage",
            spell
        ),
        "<2>; function f3 of that"
    );
    assert_eq!(
        replace_numbered("uniform u", "uniform u", "", spell),
        "uniform u"
    );
}
