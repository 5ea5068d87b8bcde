//! Word arithmetic at the annotated width with LLVM's overflow intrinsics,
//! comparisons: nothing here executes an undefined operation.

use super::*;
use zlm::materialize::lowered::{Arith, Compare};

impl<'a, 'u, 'm> IrFunction<'a, 'u, 'm> {
    /// `x` truncated to the kind's width.
    pub(super) fn tr(&mut self, k: ScalarKind, x: &str) -> String {
        match width(k) {
            64 => x.to_string(),
            w => self.v(format!("trunc i64 {x} to i{w}")),
        }
    }

    /// `x` (of the kind's width) extended to its canonical word.
    pub(super) fn ext(&mut self, k: ScalarKind, x: &str) -> String {
        match width(k) {
            64 => x.to_string(),
            w => {
                let e = if k.is_signed() { "sext" } else { "zext" };
                self.v(format!("{e} i{w} {x} to i64"))
            }
        }
    }

    pub(super) fn canon_v(&mut self, k: ScalarKind, x: &str) -> String {
        let t = self.tr(k, x);
        self.ext(k, &t)
    }

    /// An add/sub/mul at the kind's width: (canonical result, overflow bit).
    pub(super) fn ovf(&mut self, op: &str, k: ScalarKind, a: &str, b: &str) -> (String, String) {
        let w = width(k);
        let s = if k.is_signed() { "s" } else { "u" };
        let (ta, tb) = (self.tr(k, a), self.tr(k, b));
        let r = self.v(format!(
            "call {{i{w}, i1}} @llvm.{s}{op}.with.overflow.i{w}(i{w} {ta}, i{w} {tb})"
        ));
        let x = self.v(format!("extractvalue {{i{w}, i1}} {r}, 0"));
        let o = self.v(format!("extractvalue {{i{w}, i1}} {r}, 1"));
        (self.ext(k, &x), o)
    }

    /// Arithmetic tag `t` at kind `k`: the canonical result and an `i32`
    /// fault kind (0: none). Nothing here executes an undefined operation.
    pub(super) fn arith(
        &mut self,
        t: Arith,
        k: ScalarKind,
        profile: NumericProfile,
        a: &str,
        b: &str,
    ) -> (String, String) {
        let w = width(k);
        let modular = profile == NumericProfile::Modular;
        let faulting = |me: &mut Self, o: &str| -> String {
            if modular {
                "0".to_string()
            } else {
                me.v(format!("select i1 {o}, i32 {}, i32 0", fk::OVERFLOW))
            }
        };
        match t {
            Arith::Add | Arith::Sub | Arith::Mul | Arith::Neg => {
                let (name, a, b) = match t {
                    Arith::Add => ("add", a, b),
                    Arith::Sub => ("sub", a, b),
                    Arith::Mul => ("mul", a, b),
                    _ => ("sub", "0", a),
                };
                let (x, o) = self.ovf(name, k, a, b);
                (x, faulting(self, &o))
            }
            Arith::Div | Arith::Rem => {
                let rem = t == Arith::Rem;
                let zero = self.v(format!("icmp eq i64 {b}, 0"));
                if k.is_signed() {
                    let m1 = self.v(format!("icmp eq i64 {b}, -1"));
                    let bad = self.v(format!("or i1 {zero}, {m1}"));
                    let safe = self.v(format!("select i1 {bad}, i64 1, i64 {b}"));
                    let ins = if rem { "srem" } else { "sdiv" };
                    let q = self.v(format!("{ins} i64 {a}, {safe}"));
                    let q = self.canon_v(k, &q);
                    let (res, fk1) = if rem {
                        (
                            self.v(format!("select i1 {m1}, i64 0, i64 {q}")),
                            "0".into(),
                        )
                    } else {
                        let (n, o) = self.ovf("sub", k, "0", a);
                        let r = self.v(format!("select i1 {m1}, i64 {n}, i64 {q}"));
                        let f = if modular {
                            "0".to_string()
                        } else {
                            let of = self.v(format!("and i1 {m1}, {o}"));
                            self.v(format!("select i1 {of}, i32 {}, i32 0", fk::OVERFLOW))
                        };
                        (r, f)
                    };
                    let f = self.v(format!("select i1 {zero}, i32 {}, i32 {fk1}", fk::DIV_ZERO));
                    (res, f)
                } else {
                    let safe = self.v(format!("select i1 {zero}, i64 1, i64 {b}"));
                    let ins = if rem { "urem" } else { "udiv" };
                    let q = self.v(format!("{ins} i64 {a}, {safe}"));
                    let f = self.v(format!("select i1 {zero}, i32 {}, i32 0", fk::DIV_ZERO));
                    (q, f)
                }
            }
            Arith::Shl | Arith::Shr => {
                let big = self.v(format!("icmp uge i64 {b}, {w}"));
                let amt = self.v(format!("select i1 {big}, i64 0, i64 {b}"));
                if t == Arith::Shl {
                    let sh = self.v(format!("shl i64 {a}, {amt}"));
                    let r = self.canon_v(k, &sh);
                    if modular {
                        (
                            self.v(format!("select i1 {big}, i64 0, i64 {r}")),
                            "0".into(),
                        )
                    } else {
                        let ov = if k.is_signed() {
                            let e = self.v(format!("sub i64 {}, {amt}", w - 1));
                            let p = self.v(format!("shl i64 1, {e}"));
                            let hi = self.v(format!("sub i64 {p}, 1"));
                            let lo = self.v(format!("xor i64 {hi}, -1"));
                            let c1 = self.v(format!("icmp slt i64 {a}, {lo}"));
                            let c2 = self.v(format!("icmp sgt i64 {a}, {hi}"));
                            self.v(format!("or i1 {c1}, {c2}"))
                        } else {
                            let umax = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                            let lim = self.v(format!("lshr i64 {}, {amt}", lit(umax)));
                            self.v(format!("icmp ugt i64 {a}, {lim}"))
                        };
                        let f1 = self.v(format!("select i1 {ov}, i32 {}, i32 0", fk::OVERFLOW));
                        let f = self.v(format!("select i1 {big}, i32 {}, i32 {f1}", fk::SHIFT));
                        (r, f)
                    }
                } else {
                    let ins = if k.is_signed() { "ashr" } else { "lshr" };
                    let sh = self.v(format!("{ins} i64 {a}, {amt}"));
                    let r = self.canon_v(k, &sh);
                    if modular {
                        let fill = if k.is_signed() {
                            self.v(format!("ashr i64 {a}, 63"))
                        } else {
                            "0".to_string()
                        };
                        (
                            self.v(format!("select i1 {big}, i64 {fill}, i64 {r}")),
                            "0".into(),
                        )
                    } else {
                        let f = self.v(format!("select i1 {big}, i32 {}, i32 0", fk::SHIFT));
                        (r, f)
                    }
                }
            }
            Arith::And | Arith::Or | Arith::Xor => {
                let ins = match t {
                    Arith::And => "and",
                    Arith::Or => "or",
                    _ => "xor",
                };
                let x = self.v(format!("{ins} i64 {a}, {b}"));
                (self.canon_v(k, &x), "0".into())
            }
        }
    }

    pub(super) fn cmp(&mut self, t: Compare, signed: bool, a: &str, b: &str) -> String {
        let s = if signed { "s" } else { "u" };
        let pred = match t {
            Compare::Eq => "eq".to_string(),
            Compare::Ne => "ne".to_string(),
            Compare::Lt => format!("{s}lt"),
            Compare::Le => format!("{s}le"),
            Compare::Gt => format!("{s}gt"),
            Compare::Ge => format!("{s}ge"),
        };
        let c = self.v(format!("icmp {pred} i64 {a}, {b}"));
        self.v(format!("zext i1 {c} to i64"))
    }
}
