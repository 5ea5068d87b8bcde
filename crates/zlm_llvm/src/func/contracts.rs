//! Requires/ensures clauses, evaluated lazily from the root as the
//! interpreter does.

use super::*;
use zlm::materialize::c::plan::ContractBytes;

impl<'a, 'u, 'm> IrFunction<'a, 'u, 'm> {
    /// Whether the receiver takes a runtime slot.
    pub(super) fn receiver_bound(&self) -> bool {
        self.u.receiver_binding(self.at).is_some()
    }

    /// Runtime slots before the parameters (one for a runtime receiver).
    pub(super) fn recv_slots(&self) -> usize {
        usize::from(self.receiver_bound())
    }

    /// A slot's value: a word, or the storage of its binding.
    pub(super) fn slot_value(&mut self, slot: usize) -> (String, String) {
        match self.plan.frame.slots.get(slot).copied().flatten() {
            Some(pi) if is_word(&self.places[pi].ty.clone()) && !self.places[pi].borrowed => {
                ("i64".into(), self.load(&format!("%pl{pi}")))
            }
            Some(pi) => ("ptr".into(), format!("%pl{pi}")),
            None => ("i64".into(), "0".into()),
        }
    }

    /// Contract operation `i` of `e`, evaluated lazily from the root as the
    /// interpreter does; returns a pointer to its (word) value.
    pub(super) fn cexpr(&mut self, e: &'m Expr, i: usize, result: bool) -> Result<String, Refusal> {
        let op = e
            .ops
            .get(i)
            .ok_or_else(|| self.u.refuse(self.at, None, None, "contract operand order"))?;
        self.fresh += 1;
        let v = format!("c{}", self.fresh);
        self.alloca(&v);
        let v = format!("%{v}");
        self.tick(None, Some(i as u32));
        let refuse = |me: &Self, m: &str| me.u.refuse(me.at, None, None, m.to_string());
        if matches!(op.tag, 23 | 24) {
            let a = self.coperand(e, &op.operands[0], result)?.1;
            let short = if op.tag == 23 {
                self.v(format!("icmp eq i64 {a}, 0"))
            } else {
                self.v(format!("icmp ne i64 {a}, 0"))
            };
            let (ls, li, lj) = (self.l(), self.l(), self.l());
            self.term(format!("br i1 {short}, label %{ls}, label %{li}"));
            self.label(&ls);
            let nz = self.v(format!("icmp ne i64 {a}, 0"));
            let w = self.v(format!("zext i1 {nz} to i64"));
            self.i(format!("store i64 {w}, ptr {v}"));
            self.term(format!("br label %{lj}"));
            self.label(&li);
            let c = self.coperand(e, &op.operands[1], result)?.1;
            self.i(format!("store i64 {c}, ptr {v}"));
            self.label(&lj);
            return Ok(v);
        }
        if op.tag == 1 {
            // A field of a receiver or parameter (through its loan).
            let (pi, fld) = self.plan.contract_field(op, self.receiver_bound())?;
            let pty = self.places[pi].ty.clone();
            let Some(fa) = self.u.layouts.field(&pty, fld.ordinal) else {
                return Err(refuse(self, "contract field copy of a non-record"));
            };
            let t = self.target(pi);
            let hp = self.gep(&t, fa.flag);
            let h = self.load(&hp);
            let gone = self.v(format!("icmp eq i64 {h}, 0"));
            self.fault_if(&gone, &fk::TAG.to_string(), None, None, None);
            let fp = self.gep(&t, fa.value);
            let x = self.load(&fp);
            self.i(format!("store i64 {x}, ptr {v}"));
            return Ok(v);
        }
        let mut vals = Vec::new();
        for o in &op.operands {
            vals.push(self.coperand(e, o, result)?);
        }
        let kind = self.plan.contract_kind(op)?;
        let w = |k: usize| {
            vals.get(k)
                .map(|x| x.1.clone())
                .unwrap_or_else(|| "0".into())
        };
        match op.tag {
            0 => self.i(format!("store i64 {}, ptr {v}", w(0))),
            4 => {
                let c = self.v(format!("icmp eq i64 {}, 0", w(0)));
                let x = self.v(format!("zext i1 {c} to i64"));
                self.i(format!("store i64 {x}, ptr {v}"));
            }
            5 | 7..=16 => {
                let t = zlm::materialize::lowered::Arith::of_tag(self.plan.contract_flow_tag(op)?)
                    .ok_or_else(|| refuse(self, "contract arithmetic"))?;
                let profile = self.u.r.profile_of(self.at.0);
                let (x, f) = self.arith(t, kind, profile, &w(0), &w(1));
                if f != "0" {
                    let bad = self.v(format!("icmp ne i32 {f}, 0"));
                    self.fault_if(&bad, &f, None, None, None);
                }
                self.i(format!("store i64 {x}, ptr {v}"));
            }
            17..=22 => {
                let (t, k) = self.plan.contract_compare(e, op)?;
                let t = zlm::materialize::lowered::Compare::of_tag(t)
                    .ok_or_else(|| refuse(self, "contract comparison"))?;
                let r = self.cmp(t, k.is_signed(), &w(0), &w(1));
                self.i(format!("store i64 {r}, ptr {v}"));
            }
            3 if op.aux0 == 0 => {
                let index = &self.u.index;
                let (callee, binding) =
                    self.plan
                        .contract_callee(op, self.receiver_bound(), |at| index.contains_key(&at))?;
                // A synchronous shared child loan of the binding.
                if let Some(pi) = binding
                    && !self.places[pi].borrowed
                {
                    let loan = self.scratch(1);
                    self.i(format!("store ptr %pl{pi}, ptr {loan}"));
                    vals[0] = ("ptr".into(), loan);
                }
                // The callee's slots decide how each value is passed.
                let want = self.u.slot_types(callee);
                if want.len() != vals.len()
                    || want.iter().zip(&vals).any(|(t, (a, _))| arg_ty(t) != a)
                {
                    return Err(refuse(self, "contract call arguments"));
                }
                self.call(callee, &v, &vals);
            }
            3 if op.aux0 == 1 => {
                let (sel, bytes) = self.plan.contract_catalog(op)?;
                let a = w(0);
                // (length, buffer start) of the binding's bytes.
                let view = |me: &mut Self| match &bytes {
                    Some(ContractBytes::ArrayLoan) => {
                        let arr = me.v(format!("load ptr, ptr {a}"));
                        let lp = me.gep(&arr, crate::types::at::LEN);
                        let len = me.load(&lp);
                        let buf = me.v(format!("load ptr, ptr {arr}"));
                        (len, buf)
                    }
                    _ => {
                        let arr = me.v(format!("load ptr, ptr {a}"));
                        let sp = me.gep(&a, crate::types::at::START);
                        let st = me.load(&sp);
                        let ep = me.gep(&a, crate::types::at::END);
                        let en = me.load(&ep);
                        let len = me.v(format!("sub i64 {en}, {st}"));
                        let buf = me.v(format!("load ptr, ptr {arr}"));
                        let start = me.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {st}"));
                        (len, start)
                    }
                };
                let x = match sel {
                    8 => {
                        let pb = self.zfield(zf::BYTES);
                        let used = self.load(&pb);
                        let pl = self.zfield(zf::BYTE_LIMIT);
                        let lim = self.load(&pl);
                        let ge = self.v(format!("icmp uge i64 {lim}, {used}"));
                        let d = self.v(format!("sub i64 {lim}, {used}"));
                        self.v(format!("select i1 {ge}, i64 {d}, i64 0"))
                    }
                    2 | 10 => {
                        let (len, buf) = view(self);
                        let ix = w(1);
                        let bad = self.v(format!("icmp uge i64 {ix}, {len}"));
                        self.fault_if(&bad, &fk::BOUNDS.to_string(), None, Some(i as u32), None);
                        let p = self.v(format!("getelementptr inbounds i8, ptr {buf}, i64 {ix}"));
                        let by = self.v(format!("load i8, ptr {p}"));
                        self.v(format!("zext i8 {by} to i64"))
                    }
                    _ => view(self).0,
                };
                self.i(format!("store i64 {x}, ptr {v}"));
            }
            _ => return Err(self.plan.contract_unlowered()),
        }
        Ok(v)
    }

    pub(super) fn coperand(
        &mut self,
        e: &'m Expr,
        o: &ContractOperand,
        result: bool,
    ) -> Result<(String, String), Refusal> {
        Ok(match o {
            ContractOperand::Const(c) => ("i64".into(), lit(canon(c.kind, c.bits))),
            ContractOperand::Receiver => self.slot_value(0),
            ContractOperand::Param(k) => self.slot_value(*k as usize + self.recv_slots()),
            ContractOperand::Result if result => {
                if is_word(&self.f.result) {
                    ("i64".into(), self.load("%zr"))
                } else {
                    ("ptr".into(), "%zr".into())
                }
            }
            ContractOperand::Result => ("i64".into(), "0".into()),
            ContractOperand::Value(i) => {
                let p = self.cexpr(e, *i as usize, result)?;
                ("i64".into(), self.load(&p))
            }
        })
    }

    pub(super) fn clause(
        &mut self,
        e: &'m Expr,
        result: bool,
        what: String,
    ) -> Result<(), Refusal> {
        let root = e.ops.len().saturating_sub(1);
        let p = self.cexpr(e, root, result)?;
        let x = self.load(&p);
        let c = self.v(format!("icmp eq i64 {x}, 0"));
        let d = self.u.detail(what);
        self.fault_if(&c, &fk::CONTRACT.to_string(), None, None, Some(d));
        Ok(())
    }
}
