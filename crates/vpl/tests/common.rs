//! Shared helpers for the text tests.
#![allow(dead_code)]

use vpl::text::{Error, ErrorKind};

/// Marks the expected error position in a case; removed before reading.
pub const MARK: char = '‸';

/// The minimal valid module the cases modify. Placeholders: `{TYPES}`
/// (extra type declarations), `{UNIFORMS}`, `{IFACE}` (extra fragment
/// interface variables), `{PARAMS}`... see [`Case`].
pub const TEMPLATE: &str = r#"(module 1
  (types
    (type V void)
    (type I int)
    (type F float)
    (type B bool)
    (type C vector float 4){TYPES})
  (uniforms{UNIFORMS})
  (vertex ve
    (interface (out pos "pos" C -1 position))
    (functions
      (function ve "vmain" V
        (parameters)
        (registers (register r0 C))
        (block entry
          (construct r0 (float 1.0))
          (store (stage pos) r0)
          (return)))))
  (fragment fe
    (interface (out color "color" C 0 fragment_color){IFACE})
    (functions
      (function fe "fmain" V
        (parameters)
        (registers (register r0 C){REGS})
        (block entry
          (construct r0 (float 0.0) (float 1.0) (float 0.0) (float 1.0)){BODY}
          (store (stage color) r0)
          (return))){FUNCS})))
"#;

/// Pieces substituted into [`TEMPLATE`].
#[derive(Default, Clone, Copy)]
pub struct Case<'a> {
    pub types: &'a str,
    pub uniforms: &'a str,
    pub iface: &'a str,
    pub regs: &'a str,
    pub body: &'a str,
    pub funcs: &'a str,
}

impl Case<'_> {
    pub fn text(&self) -> String {
        TEMPLATE
            .replace("{TYPES}", self.types)
            .replace("{UNIFORMS}", self.uniforms)
            .replace("{IFACE}", self.iface)
            .replace("{REGS}", self.regs)
            .replace("{BODY}", self.body)
            .replace("{FUNCS}", self.funcs)
    }
}

/// Offset, line and column (code points; CR, LF, CRLF end one line) of
/// byte `offset` in `text`.
pub fn position(text: &str, offset: usize) -> (u32, u32, u32) {
    let mut line = 1;
    let mut column = 1;
    let mut chars = text[..offset].chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' => {
                if chars.peek() == Some(&'\n') {
                    chars.next();
                }
                line += 1;
                column = 1;
            }
            '\n' => {
                line += 1;
                column = 1;
            }
            _ => column += 1,
        }
    }
    (offset as u32, line, column)
}

/// Reads `marked` (which contains one [`MARK`]) and asserts an error of
/// `kind` at the mark, returning the error.
pub fn expect_error(name: &str, marked: &str, kind: ErrorKind) -> Error {
    let offset = marked
        .find(MARK)
        .unwrap_or_else(|| panic!("{name}: case has no mark"));
    let text = marked.replacen(MARK, "", 1);
    let err = match vpl::text::read(text.as_bytes(), "case.vpl") {
        Ok(_) => panic!("{name}: expected a {kind} error, but the text was accepted"),
        Err(e) => e,
    };
    let (o, l, c) = position(&text, offset);
    assert_eq!(
        (
            err.kind,
            err.position.offset,
            err.position.line,
            err.position.column
        ),
        (kind, o, l, c),
        "{name}: wrong error: {err}"
    );
    assert_eq!(err.label, "case.vpl", "{name}");
    err
}

/// Reads `text` and asserts success.
pub fn expect_ok(name: &str, text: &str) -> vpl::ir::Module {
    match vpl::text::read(text.as_bytes(), "case.vpl") {
        Ok(m) => m,
        Err(e) => panic!("{name}: expected success, got {e}"),
    }
}
