//! The LLVM spelling of the shared lowered form
//! (`zlm::materialize::lowered`): one printer arm per instruction kind,
//! with no decision of its own about checks, faults or cleanup.

use super::*;
use zlm::materialize::lowered::{CallInst, Dest, EdgeDrop, Inst, Loan, Site, Subject, Take, Value};

impl<'a, 'u, 'm> IrFunction<'a, 'u, 'm> {
    /// A lowered word value.
    pub(super) fn word_value(&mut self, v: &Value) -> String {
        match v {
            Value::Flow(b, j) => match self.local.get(&(*b, *j)) {
                Some(x) => x.clone(),
                None => self.load(&format!("%v{b}_{j}")),
            },
            Value::Temp(t) => self.load(&format!("%pl{t}")),
            Value::Word(w) => lit(*w),
            Value::Place(pi) => {
                let p = self.binding(*pi);
                self.load(&p)
            }
        }
    }

    /// The storage of a lowered non-word value.
    pub(super) fn storage_value(&mut self, v: &Value) -> String {
        match v {
            Value::Flow(b, j) => format!("%v{b}_{j}"),
            Value::Temp(t) => format!("%pl{t}"),
            Value::Word(w) => lit(*w),
            Value::Place(pi) => self.binding(*pi),
        }
    }

    /// A lowered argument `(IR type, value)`; an owner temporary leaves
    /// custody first when `take`.
    pub(super) fn lowered_arg(&mut self, a: &Take, take: bool) -> (String, String) {
        if take && let Some(t) = a.release {
            self.cust_remove(t);
            self.i(format!("store i64 0, ptr %ph{t}"));
        }
        if a.word {
            ("i64".into(), self.word_value(&a.value))
        } else {
            ("ptr".into(), self.storage_value(&a.value))
        }
    }

    /// Defines a result: a word value of a flow variable, or the storage
    /// of a value of type `t`.
    pub(super) fn define(&mut self, d: &Dest, t: &Type, a: (String, String)) {
        match d {
            Dest::Flow(b, j) if is_word(t) => self.def(*b, *j, a.1),
            Dest::Flow(b, j) => {
                let dst = format!("%v{b}_{j}");
                self.put(&dst, t, &a);
            }
            Dest::Owner(o) => {
                let dst = format!("%pl{o}");
                self.put(&dst, t, &a);
            }
        }
    }

    /// The storage of a non-word result.
    pub(super) fn storage_dest(&self, d: &Dest) -> String {
        match d {
            Dest::Flow(b, j) => format!("%v{b}_{j}"),
            Dest::Owner(o) => format!("%pl{o}"),
        }
    }

    pub(super) fn define_word(&mut self, d: &Dest, v: String) {
        self.define(d, &Type::Scalar(ScalarKind::UInt64), ("i64".into(), v));
    }

    pub(super) fn fault_at(&mut self, cond: &str, kind: &str, site: Site) {
        self.fault_if(cond, kind, Some(site.block), Some(site.op), None);
    }

    /// An edge's cleanup drops, each with its own step tick at (block,
    /// recipe).
    pub(super) fn edge_drops(&mut self, b: u32, drops: &[EdgeDrop]) {
        for d in drops {
            self.tick(Some(b), Some(d.recipe));
            self.drop_place(d.path);
        }
    }

    /// Prints one lowered instruction of block `b`.
    pub(super) fn print(
        &mut self,
        inst: &Inst,
        b: u32,
        j: u32,
        careful: bool,
    ) -> Result<(), Refusal> {
        let lay = &self.u.layouts;
        match inst {
            Inst::Copy { dst, src, ty } => {
                let a = self.lowered_arg(src, false);
                self.define(dst, ty, a);
            }
            Inst::Unit { dst } => self.define_word(dst, "0".into()),
            Inst::Arith(arith) => {
                let (x, y) = (self.word_value(&arith.a), self.word_value(&arith.b));
                let (r, f) = self.arith(arith.op, arith.kind, arith.profile, &x, &y);
                if f != "0" {
                    let bad = self.v(format!("icmp ne i32 {f}, 0"));
                    self.fault_at(&bad, &f, arith.site);
                }
                self.define_word(&arith.dst, r);
            }
            Inst::Compare(compare) => {
                let (x, y) = (self.word_value(&compare.a), self.word_value(&compare.b));
                let r = self.cmp(compare.op, compare.signed, &x, &y);
                self.define_word(&compare.dst, r);
            }
            Inst::Not { dst, a } => {
                let x = self.word_value(a);
                let c = self.v(format!("icmp eq i64 {x}, 0"));
                let r = self.v(format!("zext i1 {c} to i64"));
                self.define_word(dst, r);
            }
            Inst::AssertTrue { a, site } => {
                let x = self.word_value(a);
                let c = self.v(format!("icmp eq i64 {x}, 0"));
                self.fault_at(&c, &fk::ASSERT.to_string(), *site);
            }
            Inst::AssertEq { a, b: c, site } => {
                let (x, y) = (self.word_value(a), self.word_value(c));
                let c = self.v(format!("icmp ne i64 {x}, {y}"));
                self.fault_at(&c, &fk::ASSERT.to_string(), *site);
            }
            Inst::Jump { edge } => {
                self.edge_drops(b, &edge.drops);
                let l = self.block_label(edge.target, careful);
                self.term(format!("br label %{l}"));
            }
            Inst::Branch(branch) => {
                let (on_true, on_false) = (&branch.on_true, &branch.on_false);
                let c = self.word_value(&branch.cond);
                let yes = self.block_label(on_true.target, careful);
                let no = self.block_label(on_false.target, careful);
                let nz = self.v(format!("icmp ne i64 {c}, 0"));
                if on_true.drops.is_empty() && on_false.drops.is_empty() {
                    self.term(format!("br i1 {nz}, label %{yes}, label %{no}"));
                } else {
                    let (lt, lf) = (self.l(), self.l());
                    self.term(format!("br i1 {nz}, label %{lt}, label %{lf}"));
                    self.label(&lt);
                    self.edge_drops(b, &on_true.drops);
                    self.term(format!("br label %{yes}"));
                    self.label(&lf);
                    self.edge_drops(b, &on_false.drops);
                    self.term(format!("br label %{no}"));
                }
            }
            Inst::Return { value, drops } => {
                let a = self.lowered_arg(value, true);
                let t = self.f.result.clone();
                self.put("%zr", &t, &a);
                self.edge_drops(b, drops);
                self.term("br label %ZEXIT");
            }
            Inst::Call(call) => {
                let CallInst {
                    dst,
                    callee,
                    args,
                    site,
                } = call;
                let pd = self.zfield(zf::DEPTH);
                let d = self.load(&pd);
                let pm = self.zfield(zf::MAX_DEPTH);
                let md = self.load(&pm);
                let c = self.v(format!("icmp uge i64 {d}, {md}"));
                self.fault_at(&c, &fk::DEPTH.to_string(), *site);
                let args: Vec<(String, String)> =
                    args.iter().map(|a| self.lowered_arg(a, true)).collect();
                let dst = match dst {
                    Dest::Flow(b, j) => format!("%v{b}_{j}"),
                    Dest::Owner(o) => format!("%pl{o}"),
                };
                self.call(*callee, &dst, &args);
            }
            Inst::Store {
                path,
                value,
                ty,
                flag,
                custody,
                site,
            } => {
                let a = self.lowered_arg(value, true);
                self.put(&format!("%pl{path}"), ty, &a);
                if *flag {
                    self.i(format!("store i64 1, ptr %ph{path}"));
                }
                if *custody {
                    self.push(*path, site.block, site.op);
                }
            }
            Inst::Move {
                dst,
                path,
                ty,
                release,
            } => {
                if *release {
                    self.cust_remove(*path);
                }
                let v = self.target(*path);
                let a = if is_word(ty) {
                    ("i64".to_string(), self.load(&v))
                } else {
                    ("ptr".to_string(), v)
                };
                self.define(dst, ty, a);
                self.set_flag(*path, 0);
            }
            Inst::Drop { path } => self.drop_place(*path),
            Inst::Variant {
                dst,
                ty,
                variant,
                tag,
                built,
                fields,
            } => {
                let vals: Vec<(String, String)> = fields
                    .iter()
                    .map(|(a, _)| self.lowered_arg(a, true))
                    .collect();
                let dst = self.storage_dest(dst);
                let n = self.size(ty);
                self.zero(&dst, n);
                let tg = self.gep(&dst, at::TAG);
                self.i(format!("store i64 {tag}, ptr {tg}"));
                if *built {
                    let bp = self.gep(&dst, at::BUILT);
                    self.i(format!("store i64 1, ptr {bp}"));
                    for (k, (a, (_, ft))) in vals.iter().zip(fields).enumerate() {
                        let Some(fa) = lay.variant_field(ty, *variant, k as u32) else {
                            return Err(self.refuse(b, j, "variant field layout"));
                        };
                        let vp = self.gep(&dst, fa.value);
                        self.put(&vp, ft, a);
                        let hp = self.gep(&dst, fa.flag);
                        self.i(format!("store i64 1, ptr {hp}"));
                    }
                }
            }
            Inst::Record { dst, ty, fields } => {
                let vals: Vec<(String, String)> = fields
                    .iter()
                    .map(|(a, _)| self.lowered_arg(a, true))
                    .collect();
                let dst = self.storage_dest(dst);
                for (k, (a, (_, ft))) in vals.iter().zip(fields).enumerate() {
                    let Some(fa) = lay.field(ty, k as u32) else {
                        return Err(self.refuse(b, j, "aggregate field layout"));
                    };
                    let vp = self.gep(&dst, fa.value);
                    self.put(&vp, ft, a);
                    let hp = self.gep(&dst, fa.flag);
                    self.i(format!("store i64 1, ptr {hp}"));
                }
            }
            Inst::Carrier {
                dst,
                ty,
                ok,
                err,
                value,
                payload,
            } => {
                let a = self.lowered_arg(value, true);
                let dst = self.storage_dest(dst);
                let n = self.size(ty);
                self.zero(&dst, n);
                let (t, off) = if *err {
                    (1, lay.err_at(ok))
                } else {
                    (0, at::OK)
                };
                let tg = self.gep(&dst, at::TAG);
                self.i(format!("store i64 {t}, ptr {tg}"));
                let pp = self.gep(&dst, off);
                self.put(&pp, payload, &a);
            }
            Inst::IsVariant(test) => {
                let (dst, tag) = (&test.dst, test.tag);
                let subject = match &test.subject {
                    Subject::Place(pi) => {
                        let c = self.present(*pi);
                        self.fault_unless(&c, fk::TAG, test.site.block, test.site.op);
                        self.target(*pi)
                    }
                    Subject::Value(v) => self.storage_value(v),
                };
                let t = self.load(&subject);
                let c = self.v(format!("icmp eq i64 {t}, {tag}"));
                let w = self.v(format!("zext i1 {c} to i64"));
                self.define_word(dst, w);
            }
            Inst::Field {
                dst,
                path,
                variant,
                ordinal,
                ty,
                take,
                site,
            } => {
                let pi = *path;
                let pty = self.places[pi].ty.clone();
                let off = self.places[pi].off;
                let mut cond = self.places[pi].present.clone();
                let fa = match variant {
                    Some((vi, t)) => {
                        cond.push(Flag::Tag(off + at::TAG, u64::from(*t)));
                        cond.push(Flag::Slot(off + at::BUILT));
                        lay.variant_field(&pty, *vi, *ordinal)
                    }
                    None => lay.field(&pty, *ordinal),
                };
                let Some(fa) = fa else {
                    return Err(self.refuse(b, j, "field layout"));
                };
                let c = self.test(pi, &cond);
                self.fault_unless(&c, fk::TAG, site.block, site.op);
                let base = self.target(pi);
                let member = self.gep(&base, fa.value);
                let a = if is_word(ty) {
                    ("i64".to_string(), self.load(&member))
                } else {
                    ("ptr".to_string(), member)
                };
                self.define(dst, ty, a);
                if *take {
                    let hp = self.gep(&base, fa.flag);
                    self.i(format!("store i64 0, ptr {hp}"));
                }
            }
            Inst::Borrow { dst, ty, source } => {
                let dst = self.storage_dest(dst);
                match source {
                    Loan::SliceView(pi) => {
                        // The shared child of a Slice local: the same view.
                        let v = self.binding(*pi);
                        let n = self.size(&Type::SliceByte);
                        self.copy(&dst, &v, n);
                    }
                    Loan::Place(pi) => {
                        let t = self.target(*pi);
                        self.i(format!("store ptr {t}, ptr {dst}"));
                    }
                    Loan::Value(v) => {
                        let a = self.lowered_arg(v, false);
                        self.put(&dst, ty, &a);
                    }
                }
            }
            Inst::Slice(slice) => self.print_slice(
                &slice.dst,
                &slice.array,
                (&slice.start, &slice.end),
                slice.site,
            )?,
            Inst::Bytes {
                dst,
                op,
                args,
                site,
            } => self.print_bytes(dst, op, args, *site)?,
            Inst::Finish {
                builder: pi,
                result: t,
                ty,
                site,
                ..
            } => {
                // One relabel: the builder's custody position now holds the
                // result, and its storage moves without a copy of the bytes.
                let (pi, t) = (*pi, *t);
                let pos = self.cust_pos(pi);
                let h = self.load(&format!("%ph{pi}"));
                let none = self.v(format!("icmp slt i64 {pos}, 0"));
                let gone = self.v(format!("icmp eq i64 {h}, 0"));
                let bad = self.v(format!("or i1 {none}, {gone}"));
                self.fault_at(&bad, &fk::INTERNAL.to_string(), *site);
                let cp = self.v(format!("getelementptr inbounds i64, ptr %zc, i64 {pos}"));
                self.i(format!("store i64 {t}, ptr {cp}"));
                let n = self.size(ty);
                self.copy(&format!("%pl{t}"), &format!("%pl{pi}"), n);
                self.i(format!("store i64 1, ptr %ph{t}"));
                self.i(format!("store i64 0, ptr %ph{pi}"));
            }
            Inst::Replace(replace) => self.replace(replace),
            Inst::Try {
                dst,
                value,
                ok,
                err,
                result_ok,
                drops,
                site,
            } => {
                let a = self.lowered_arg(value, true);
                let v = a.1.clone();
                let tg = self.load(&v);
                let (lok, lnot, lerr, lbad) = (self.l(), self.l(), self.l(), self.l());
                let is_ok = self.v(format!("icmp eq i64 {tg}, 0"));
                self.term(format!("br i1 {is_ok}, label %{lok}, label %{lnot}"));
                self.label_cont(&lnot);
                let is_err = self.v(format!("icmp eq i64 {tg}, 1"));
                self.term(format!("br i1 {is_err}, label %{lerr}, label %{lbad}"));
                self.label_cont(&lbad);
                self.fault_call(&fk::TAG.to_string(), Some(site.block), Some(site.op), None);
                self.label(&lerr);
                self.edge_drops(b, drops);
                let n = self.size(&self.f.result.clone());
                self.zero("%zr", n);
                self.i("store i64 1, ptr %zr");
                let dst_err = self.gep("%zr", lay.err_at(result_ok));
                let src_err = self.gep(&v, lay.err_at(ok));
                let en = self.size(err);
                self.copy(&dst_err, &src_err, en);
                self.term("br label %ZEXIT");
                self.label(&lok);
                let okp = self.gep(&v, at::OK);
                let a = if is_word(ok) {
                    ("i64".to_string(), self.load(&okp))
                } else {
                    ("ptr".to_string(), okp)
                };
                self.define(dst, ok, a);
            }
        }
        Ok(())
    }
}
