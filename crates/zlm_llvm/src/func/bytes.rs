//! The bytes facade: slices of byte arrays and the catalog intrinsics.

use super::*;
use zlm::materialize::c::plan::SliceSource;

impl<'a, 'u, 'm> IrFunction<'a, 'u, 'm> {
    /// BORROW_SLICE_BYTE: a bounds-checked view of a byte array (a place, a
    /// loan of one, or a Bytes facade record's private storage field).
    pub(super) fn slice(&mut self, op: &'m Op, b: u32, j: u32) -> Result<(), Refusal> {
        let u = self.u;
        let lay = &u.layouts;
        let view = self.plan.slice_view(&lay.types, op, b, j)?;
        let (array, present) = match view.source {
            SliceSource::Place(pi) => {
                let c = self.present(pi);
                (self.target(pi), c)
            }
            SliceSource::Loan => {
                let o = self.plan.operand_at(op, 0, b, j)?;
                let s = self.storage_of(o, b, j)?;
                let p = self.v(format!("load ptr, ptr {s}"));
                (p, "true".to_string())
            }
        };
        let array = if view.direct() {
            array
        } else {
            let Some(fa) = lay.field(&view.holder, 0) else {
                return Err(self.refuse(b, j, "field layout"));
            };
            self.gep(&array, fa.value)
        };
        let st = match op.operands.get(1) {
            Some(o) => self.word(o, b, j)?,
            None => return Err(self.refuse(b, j, "missing operand")),
        };
        let en = match op.operands.get(2) {
            Some(o) => self.word(o, b, j)?,
            None => return Err(self.refuse(b, j, "missing operand")),
        };
        self.fault_unless(&present, fk::TAG, b, j);
        let lp = self.gep(&array, at::LEN);
        let len = self.load(&lp);
        let c1 = self.v(format!("icmp ugt i64 {st}, {en}"));
        let c2 = self.v(format!("icmp ugt i64 {en}, {len}"));
        let bad = self.v(format!("or i1 {c1}, {c2}"));
        self.fault_if(&bad, &fk::BOUNDS.to_string(), Some(b), Some(j), None);
        let dst = self.dst(b, j);
        self.i(format!("store ptr {array}, ptr {dst}"));
        let sp = self.gep(&dst, at::START);
        self.i(format!("store i64 {st}, ptr {sp}"));
        let ep = self.gep(&dst, at::END);
        self.i(format!("store i64 {en}, ptr {ep}"));
        Ok(())
    }

    /// INTRINSIC_CALL of the catalog's bytes facade.
    pub(super) fn intrinsic(&mut self, op: &'m Op, b: u32, j: u32) -> Result<(), Refusal> {
        let u = self.u;
        let lay = &u.layouts;
        let Aux::CatalogFunc(sig) = &op.aux0 else {
            return Err(self.refuse(b, j, "intrinsic without its catalog function"));
        };
        let Some(e) = zlm::catalog::by_signature(sig) else {
            return Err(self.refuse(b, j, "intrinsic outside the catalog"));
        };
        let mut args = Vec::new();
        let mut tys = Vec::new();
        for (o, (t, array_place)) in op.operands.iter().zip(self.plan.intrinsic_operands(op)) {
            args.push(match array_place {
                Some(pi) => {
                    // The place's address, held as a loan of it is.
                    let loan = self.scratch(1);
                    let addr = self.target(pi);
                    self.i(format!("store ptr {addr}, ptr {loan}"));
                    ("ptr".to_string(), loan)
                }
                None => self.take(o, b, j)?,
            });
            tys.push(t);
        }
        let arg = |me: &Self, k: usize| {
            args.get(k)
                .map(|a| a.1.clone())
                .ok_or_else(|| me.refuse(b, j, "intrinsic arity"))
        };
        let is_slice = |k: usize| matches!(tys.get(k), Some(Some(t)) if slice_loan(t) || *t == Type::SliceByte);
        let is_array = |k: usize| matches!(tys.get(k), Some(Some(Type::Ref(t) | Type::Mut(t))) if **t == Type::ArrayByte);
        // (length, buffer start) of a byte view.
        let view = |me: &mut Self, k: usize| -> Result<(String, String), Refusal> {
            let a = arg(me, k)?;
            if is_slice(k) {
                let arr = me.v(format!("load ptr, ptr {a}"));
                let sp = me.gep(&a, at::START);
                let s = me.load(&sp);
                let ep = me.gep(&a, at::END);
                let e = me.load(&ep);
                let len = me.v(format!("sub i64 {e}, {s}"));
                let buf = me.v(format!("load ptr, ptr {arr}"));
                let start = me.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {s}"));
                Ok((len, start))
            } else if is_array(k) {
                let arr = me.v(format!("load ptr, ptr {a}"));
                let lp = me.gep(&arr, at::LEN);
                let len = me.load(&lp);
                let buf = me.v(format!("load ptr, ptr {arr}"));
                Ok((len, buf))
            } else {
                Err(me.refuse(b, j, "byte read of a non-byte value"))
            }
        };
        let rty = op.result.clone().unwrap_or(Type::Unit);
        let result_struct = matches!(lay.types.shape(&rty), Some(Shape::Result(..)));
        let ok_ty = match lay.types.shape(&rty) {
            Some(Shape::Result(a, _)) => a.clone(),
            _ => Type::Unit,
        };
        let here = (Some(b), Some(j));
        match e.selector {
            1 | 9 => {
                let (len, _) = view(self, 0)?;
                self.def(b, j, len);
            }
            2 | 10 => {
                let (len, buf) = view(self, 0)?;
                let i = arg(self, 1)?;
                let bad = self.v(format!("icmp uge i64 {i}, {len}"));
                self.fault_if(&bad, &fk::BOUNDS.to_string(), here.0, here.1, None);
                let p = self.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {i}"));
                let by = self.v(format!("load i8, ptr {p}"));
                let w = self.v(format!("zext i8 {by} to i64"));
                self.def(b, j, w);
            }
            3 if result_struct => {
                let cap = arg(self, 1)?;
                let dst = self.dst(b, j);
                let n = self.size(&rty);
                self.zero(&dst, n);
                let okp = self.gep(&dst, at::OK);
                let errp = self.gep(&dst, lay.err_at(&ok_ty));
                let k = self.v(format!(
                    "call i32 @zlm_bytes_alloc(ptr %z, i64 {cap}, ptr {dst}, ptr {okp}, ptr {errp})"
                ));
                let bad = self.v(format!("icmp ne i32 {k}, 0"));
                self.fault_if(&bad, &k, here.0, here.1, None);
            }
            4 if result_struct && is_array(0) => {
                let a = arg(self, 0)?;
                let byte = arg(self, 2)?;
                let arr = self.v(format!("load ptr, ptr {a}"));
                let dst = self.dst(b, j);
                let n = self.size(&rty);
                self.zero(&dst, n);
                let errp = self.gep(&dst, lay.err_at(&ok_ty));
                let k = self.v(format!(
                    "call i32 @zlm_bytes_push(ptr %z, ptr {arr}, i64 {byte}, ptr {dst}, ptr {errp})"
                ));
                let bad = self.v(format!("icmp ne i32 {k}, 0"));
                self.fault_if(&bad, &k, here.0, here.1, None);
            }
            5 if is_array(0) => {
                let a = arg(self, 0)?;
                let (i, byte) = (arg(self, 1)?, arg(self, 2)?);
                let arr = self.v(format!("load ptr, ptr {a}"));
                let lp = self.gep(&arr, at::LEN);
                let len = self.load(&lp);
                let bad = self.v(format!("icmp uge i64 {i}, {len}"));
                self.fault_if(&bad, &fk::BOUNDS.to_string(), here.0, here.1, None);
                let buf = self.v(format!("load ptr, ptr {arr}"));
                let p = self.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {i}"));
                let by = self.v(format!("trunc i64 {byte} to i8"));
                self.i(format!("store i8 {by}, ptr {p}"));
                self.def(b, j, "0".into());
            }
            7 if is_array(0) => {
                let a = arg(self, 0)?;
                let arr = self.v(format!("load ptr, ptr {a}"));
                let lp = self.gep(&arr, at::LEN);
                self.i(format!("store i64 0, ptr {lp}"));
                self.def(b, j, "0".into());
            }
            8 => {
                let pb = self.zfield(zf::BYTES);
                let used = self.load(&pb);
                let pl = self.zfield(zf::BYTE_LIMIT);
                let lim = self.load(&pl);
                let ge = self.v(format!("icmp uge i64 {lim}, {used}"));
                let d = self.v(format!("sub i64 {lim}, {used}"));
                let w = self.v(format!("select i1 {ge}, i64 {d}, i64 0"));
                self.def(b, j, w);
            }
            sel => {
                return Err(self.refuse(
                    b,
                    j,
                    format!("intrinsic selector {sel} is not lowered yet"),
                ));
            }
        }
        Ok(())
    }
}
