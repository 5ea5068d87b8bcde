//! Requires/ensures clauses of the lowered form, evaluated lazily from
//! the root as the interpreter does.

use super::*;
use zlm::materialize::c::plan::ContractBytes;
use zlm::materialize::lowered::{ByteView, Clause, ContractExpr, ContractNode, ContractValue};

impl<'a, 'u, 'm> IrFunction<'a, 'u, 'm> {
    /// A contract value `(IR type, value)`: a word, or the storage of a
    /// binding or result.
    fn cvalue(&mut self, v: &ContractValue) -> Result<(String, String), Refusal> {
        Ok(match v {
            ContractValue::Word(w) => ("i64".into(), lit(*w)),
            ContractValue::Slot { path, word: true } => {
                ("i64".into(), self.load(&format!("%pl{path}")))
            }
            ContractValue::Slot { path, word: false } => ("ptr".into(), format!("%pl{path}")),
            ContractValue::Result { word: true } => ("i64".into(), self.load("%zr")),
            ContractValue::Result { word: false } => ("ptr".into(), "%zr".into()),
            ContractValue::Expr(e) => {
                let p = self.cexpr(e)?;
                ("i64".into(), self.load(&p))
            }
        })
    }

    /// A lowered contract operation; returns a pointer to its (word)
    /// value.
    fn cexpr(&mut self, e: &ContractExpr) -> Result<String, Refusal> {
        self.fresh += 1;
        let v = format!("c{}", self.fresh);
        self.alloca(&v);
        let v = format!("%{v}");
        self.tick(None, Some(e.index));
        let mut vals = Vec::new();
        for o in &e.operands {
            vals.push(self.cvalue(o)?);
        }
        // The lowering checked each node's operand count.
        let w = |k: usize| {
            vals.get(k)
                .map(|x| x.1.clone())
                .unwrap_or_else(|| "0".into())
        };
        let x = match &e.node {
            ContractNode::Short { or, rest } => {
                let a = w(0);
                let short = if *or {
                    self.v(format!("icmp ne i64 {a}, 0"))
                } else {
                    self.v(format!("icmp eq i64 {a}, 0"))
                };
                let (ls, li, lj) = (self.l(), self.l(), self.l());
                self.term(format!("br i1 {short}, label %{ls}, label %{li}"));
                self.label(&ls);
                let nz = self.v(format!("icmp ne i64 {a}, 0"));
                let x = self.v(format!("zext i1 {nz} to i64"));
                self.i(format!("store i64 {x}, ptr {v}"));
                self.term(format!("br label %{lj}"));
                self.label(&li);
                let c = self.cvalue(rest)?.1;
                self.i(format!("store i64 {c}, ptr {v}"));
                self.label(&lj);
                return Ok(v);
            }
            ContractNode::Field { path, ordinal } => {
                let pty = self.places[*path].ty.clone();
                let Some(fa) = self.u.layouts.field(&pty, *ordinal) else {
                    return Err(self.u.refuse(
                        self.at,
                        None,
                        None,
                        "contract field copy of a non-record",
                    ));
                };
                let t = self.target(*path);
                let hp = self.gep(&t, fa.flag);
                let h = self.load(&hp);
                let gone = self.v(format!("icmp eq i64 {h}, 0"));
                self.fault_if(&gone, &fk::TAG.to_string(), None, None, None);
                let fp = self.gep(&t, fa.value);
                self.load(&fp)
            }
            ContractNode::Copy => w(0),
            ContractNode::Not => {
                let c = self.v(format!("icmp eq i64 {}, 0", w(0)));
                self.v(format!("zext i1 {c} to i64"))
            }
            ContractNode::Arith { op, kind, profile } => {
                let (x, f) = self.arith(*op, *kind, *profile, &w(0), &w(1));
                if f != "0" {
                    let bad = self.v(format!("icmp ne i32 {f}, 0"));
                    self.fault_if(&bad, &f, None, None, None);
                }
                x
            }
            ContractNode::Compare { op, signed } => self.cmp(*op, *signed, &w(0), &w(1)),
            ContractNode::Call { callee, loan } => {
                // A synchronous shared child loan of the binding.
                if let Some(pi) = loan
                    && let Some(first) = vals.first_mut()
                {
                    let l = self.scratch(1);
                    self.i(format!("store ptr %pl{pi}, ptr {l}"));
                    *first = ("ptr".into(), l);
                }
                self.call(*callee, &v, &vals);
                return Ok(v);
            }
            ContractNode::ByteLen(bytes) => self.byte_view(view_of(*bytes), &w(0)).0,
            ContractNode::ByteAt(bytes) => {
                let view = self.byte_view(view_of(*bytes), &w(0));
                self.byte_at(view, &w(1), None, Some(e.index))
            }
            ContractNode::BytesLeft => self.bytes_left(),
        };
        self.i(format!("store i64 {x}, ptr {v}"));
        Ok(v)
    }

    /// A lowered clause: a contract fault with its detail when the root is
    /// zero.
    pub(super) fn clause(&mut self, c: &Result<Clause, Refusal>) -> Result<(), Refusal> {
        let c = c.clone()?;
        let p = self.cexpr(&c.root)?;
        let x = self.load(&p);
        let z = self.v(format!("icmp eq i64 {x}, 0"));
        let d = self.u.detail(c.detail);
        self.fault_if(&z, &fk::CONTRACT.to_string(), None, None, Some(d));
        Ok(())
    }
}

/// How a contract binding's bytes are viewed.
fn view_of(bytes: ContractBytes) -> ByteView {
    match bytes {
        ContractBytes::ArrayLoan => ByteView::Array,
        ContractBytes::Slice => ByteView::Slice,
    }
}
