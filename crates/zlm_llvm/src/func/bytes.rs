//! The bytes facade's lowered instructions: slice windows of byte arrays
//! and the catalog intrinsics.

use super::*;
use zlm::materialize::lowered::{
    ByteArg, ByteArray, ByteOp, ByteSource, ByteView, Dest, Site, Value,
};

impl<'a, 'u, 'm> IrFunction<'a, 'u, 'm> {
    /// A slice window of `array` from `start` to `end` into `dst`.
    pub(super) fn print_slice(
        &mut self,
        dst: &Dest,
        array: &ByteArray,
        (start, end): (&Value, &Value),
        site: Site,
    ) -> Result<(), Refusal> {
        let (base, present) = match &array.source {
            ByteSource::Place(pi) => {
                let c = self.present(*pi);
                (self.target(*pi), c)
            }
            ByteSource::Loan(v) => {
                let s = self.storage_value(v);
                let p = self.v(format!("load ptr, ptr {s}"));
                (p, "true".to_string())
            }
        };
        let base = match &array.holder {
            None => base,
            Some(holder) => {
                let Some(fa) = self.u.layouts.field(holder, 0) else {
                    return Err(self.refuse(site.block, site.op, "field layout"));
                };
                self.gep(&base, fa.value)
            }
        };
        let (st, en) = (self.word_value(start), self.word_value(end));
        self.fault_unless(&present, fk::TAG, site.block, site.op);
        let lp = self.gep(&base, at::LEN);
        let len = self.load(&lp);
        let c1 = self.v(format!("icmp ugt i64 {st}, {en}"));
        let c2 = self.v(format!("icmp ugt i64 {en}, {len}"));
        let bad = self.v(format!("or i1 {c1}, {c2}"));
        self.fault_at(&bad, &fk::BOUNDS.to_string(), site);
        let dst = self.storage_dest(dst);
        self.i(format!("store ptr {base}, ptr {dst}"));
        let sp = self.gep(&dst, at::START);
        self.i(format!("store i64 {st}, ptr {sp}"));
        let ep = self.gep(&dst, at::END);
        self.i(format!("store i64 {en}, ptr {ep}"));
        Ok(())
    }

    /// (length, buffer start) of the byte view held at `a`.
    pub(super) fn byte_view(&mut self, view: ByteView, a: &str) -> (String, String) {
        match view {
            ByteView::Slice => {
                let arr = self.v(format!("load ptr, ptr {a}"));
                let sp = self.gep(a, at::START);
                let s = self.load(&sp);
                let ep = self.gep(a, at::END);
                let e = self.load(&ep);
                let len = self.v(format!("sub i64 {e}, {s}"));
                let buf = self.v(format!("load ptr, ptr {arr}"));
                let start = self.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {s}"));
                (len, start)
            }
            ByteView::Array => {
                let arr = self.v(format!("load ptr, ptr {a}"));
                let lp = self.gep(&arr, at::LEN);
                let len = self.load(&lp);
                let buf = self.v(format!("load ptr, ptr {arr}"));
                (len, buf)
            }
        }
    }

    /// The byte budget left.
    pub(super) fn bytes_left(&mut self) -> String {
        let pb = self.zfield(zf::BYTES);
        let used = self.load(&pb);
        let pl = self.zfield(zf::BYTE_LIMIT);
        let lim = self.load(&pl);
        let ge = self.v(format!("icmp uge i64 {lim}, {used}"));
        let d = self.v(format!("sub i64 {lim}, {used}"));
        self.v(format!("select i1 {ge}, i64 {d}, i64 0"))
    }

    /// The byte at index `i` of a view (length, buffer start): a bounds
    /// fault at (`b`, `o`) past the end.
    pub(super) fn byte_at(
        &mut self,
        (len, buf): (String, String),
        i: &str,
        b: Option<u32>,
        o: Option<u32>,
    ) -> String {
        let bad = self.v(format!("icmp uge i64 {i}, {len}"));
        self.fault_if(&bad, &fk::BOUNDS.to_string(), b, o, None);
        let p = self.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {i}"));
        let by = self.v(format!("load i8, ptr {p}"));
        self.v(format!("zext i8 {by} to i64"))
    }

    /// A catalog byte intrinsic over `args`.
    pub(super) fn print_bytes(
        &mut self,
        dst: &Dest,
        op: &ByteOp,
        args: &[ByteArg],
        site: Site,
    ) -> Result<(), Refusal> {
        let mut vals = Vec::new();
        for a in args {
            vals.push(match a {
                ByteArg::Array(pi) => {
                    // The place's address, held as a loan of it is.
                    let loan = self.scratch(1);
                    let addr = self.target(*pi);
                    self.i(format!("store ptr {addr}, ptr {loan}"));
                    loan
                }
                ByteArg::Value(t) => self.lowered_arg(t, true).1,
            });
        }
        // The lowering checked the arity.
        let arg = |k: usize| vals.get(k).cloned().unwrap_or_default();
        let word = |me: &mut Self, w: String| me.define_word(dst, w);
        match op {
            ByteOp::Len(v) => {
                let (len, _) = self.byte_view(*v, &arg(0));
                word(self, len);
            }
            ByteOp::At(v) => {
                let view = self.byte_view(*v, &arg(0));
                let w = self.byte_at(view, &arg(1), Some(site.block), Some(site.op));
                word(self, w);
            }
            ByteOp::Alloc { ty, ok } => {
                let dst = self.storage_dest(dst);
                let n = self.size(ty);
                self.zero(&dst, n);
                let okp = self.gep(&dst, at::OK);
                let errp = self.gep(&dst, self.u.layouts.err_at(ok));
                let k = self.v(format!(
                    "call i32 @zlm_bytes_alloc(ptr %z, i64 {}, ptr {dst}, ptr {okp}, ptr {errp})",
                    arg(1)
                ));
                let bad = self.v(format!("icmp ne i32 {k}, 0"));
                self.fault_at(&bad, &k, site);
            }
            ByteOp::Push { ty, ok } => {
                let arr = self.v(format!("load ptr, ptr {}", arg(0)));
                let dst = self.storage_dest(dst);
                let n = self.size(ty);
                self.zero(&dst, n);
                let errp = self.gep(&dst, self.u.layouts.err_at(ok));
                let k = self.v(format!(
                    "call i32 @zlm_bytes_push(ptr %z, ptr {arr}, i64 {}, ptr {dst}, ptr {errp})",
                    arg(2)
                ));
                let bad = self.v(format!("icmp ne i32 {k}, 0"));
                self.fault_at(&bad, &k, site);
            }
            ByteOp::Poke => {
                let (i, byte) = (arg(1), arg(2));
                let arr = self.v(format!("load ptr, ptr {}", arg(0)));
                let lp = self.gep(&arr, at::LEN);
                let len = self.load(&lp);
                let bad = self.v(format!("icmp uge i64 {i}, {len}"));
                self.fault_at(&bad, &fk::BOUNDS.to_string(), site);
                let buf = self.v(format!("load ptr, ptr {arr}"));
                let p = self.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {i}"));
                let by = self.v(format!("trunc i64 {byte} to i8"));
                self.i(format!("store i8 {by}, ptr {p}"));
                word(self, "0".into());
            }
            ByteOp::Clear => {
                let arr = self.v(format!("load ptr, ptr {}", arg(0)));
                let lp = self.gep(&arr, at::LEN);
                self.i(format!("store i64 0, ptr {lp}"));
                word(self, "0".into());
            }
            ByteOp::Left => {
                let w = self.bytes_left();
                word(self, w);
            }
        }
        Ok(())
    }
}
