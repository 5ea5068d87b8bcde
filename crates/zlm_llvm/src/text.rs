//! IR text helpers shared by the lowering's modules.

use std::fmt::Write;

/// An LLVM string constant body (`c"..."` without the quotes).
pub(crate) fn llvm_bytes(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
            o.push(b as char);
        } else {
            let _ = write!(o, "\\{b:02X}");
        }
    }
    o
}

/// A function body under construction: lines, fresh temporaries and
/// labels. The typed entries (`typed`) and the drop and render functions
/// (`types`) each add their own methods.
pub(crate) struct Body {
    /// The instructions so far.
    pub text: String,
    /// The last number handed out.
    fresh: u32,
    /// Prefix of the temporaries [`Body::v`] names (`%t`, `%x`).
    temp: &'static str,
}

impl Body {
    /// An empty body whose temporaries are `{temp}N`.
    pub fn new(temp: &'static str) -> Body {
        Body {
            text: String::new(),
            fresh: 0,
            temp,
        }
    }

    /// Appends one instruction line.
    pub fn line(&mut self, l: impl AsRef<str>) {
        self.text.push_str("  ");
        self.text.push_str(l.as_ref());
        self.text.push('\n');
    }

    /// Appends `%tN = rhs` and returns the fresh temporary.
    pub fn v(&mut self, rhs: impl AsRef<str>) -> String {
        self.fresh += 1;
        let t = format!("{}{}", self.temp, self.fresh);
        self.line(format!("{t} = {}", rhs.as_ref()));
        t
    }

    /// A fresh name `{p}N` (a label or a temporary named by the caller).
    pub fn fresh(&mut self, p: &str) -> String {
        self.fresh += 1;
        format!("{p}{}", self.fresh)
    }

    /// Starts block `l`.
    pub fn label(&mut self, l: &str) {
        self.text.push_str(l);
        self.text.push_str(":\n");
    }
}
