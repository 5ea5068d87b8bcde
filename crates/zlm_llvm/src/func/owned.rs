//! Owned values: drop-log names and drops, the custody list, recipes on
//! edges, replacements, and the reverse-custody unwind.

use super::*;
use zlm::materialize::lowered::ReplaceInst;

impl<'a, 'u, 'm> IrFunction<'a, 'u, 'm> {
    /// A drop-log name node `{up, segment}` for `s`; returns its address.
    pub(super) fn name_node(&mut self, up: &str, s: &str) -> String {
        self.fresh += 1;
        let n = format!("%nm{}", self.fresh);
        self.allocas
            .push(format!("  {n} = alloca {{ptr, ptr}}, align 8"));
        let g = self.u.string(s);
        self.i(format!("store ptr {up}, ptr {n}"));
        let p = self.v(format!(
            "getelementptr inbounds {{ptr, ptr}}, ptr {n}, i64 0, i32 1"
        ));
        self.i(format!("store ptr {g}, ptr {p}"));
        n
    }

    /// Destroys the value of `t` at `v` under the root name `name`.
    pub(super) fn drop_value(&mut self, t: &Type, name: &str, v: &str) {
        if !self.u.layouts.drops(self.u.r, t) {
            return;
        }
        let n = self.name_node("null", name);
        let call = self
            .u
            .layouts
            .drop_call(self.u.r, t, &self.fnix.to_string(), &n, v);
        self.i(call);
    }

    /// Drops the protected result while a fault leaves the ensures.
    pub(super) fn ensures_drop(&mut self) {
        if self.in_ensures {
            let t = self.f.result.clone();
            self.drop_value(&t, "result", "%zr");
        }
    }

    /// Brings root `pi` into custody.
    pub(super) fn push(&mut self, pi: usize, b: u32, j: u32) {
        let cap = self.f.body.paths.len() + 1;
        let n = self.load("%zcn");
        let full = self.v(format!("icmp uge i64 {n}, {cap}"));
        self.fault_if(&full, &fk::INTERNAL.to_string(), Some(b), Some(j), None);
        let p = self.v(format!("getelementptr inbounds i64, ptr %zc, i64 {n}"));
        self.i(format!("store i64 {pi}, ptr {p}"));
        let n1 = self.v(format!("add i64 {n}, 1"));
        self.i(format!("store i64 {n1}, ptr %zcn"));
    }

    pub(super) fn cust_remove(&mut self, pi: usize) {
        self.i(format!(
            "call void @zlm_cust_remove(ptr %zc, ptr %zcn, i64 {pi})"
        ));
    }

    pub(super) fn cust_pos(&mut self, pi: usize) -> String {
        let n = self.load("%zcn");
        self.v(format!(
            "call i64 @zlm_cust_pos(ptr %zc, i64 {n}, i64 {pi})"
        ))
    }

    /// The interpreter's `drop_place`: takes the value at path `pi` (root:
    /// out of custody) and destroys it under the path's name.
    pub(super) fn drop_place(&mut self, pi: usize) {
        let p = &self.places[pi];
        if p.owner || (p.agg && p.flag == Some(Flag::Root(pi))) {
            self.cust_remove(pi);
        }
        if self.places[pi].flag.is_none() {
            return;
        }
        let c = self.present(pi);
        let (go, skip) = (self.l(), self.l());
        self.term(format!("br i1 {c}, label %{go}, label %{skip}"));
        self.label_cont(&go);
        self.set_flag(pi, 0);
        let v = self.target(pi);
        let (t, name) = (self.places[pi].ty.clone(), self.places[pi].name.clone());
        self.drop_value(&t, &name, &v);
        self.term(format!("br label %{skip}"));
        // The step counter's SSA value is unchanged on both paths.
        let zl = self.zl_cur.clone();
        self.label(&skip);
        self.zl_cur = zl;
    }

    /// A replacement: the new value goes in, the old one is dropped as
    /// `dropped_as`; a root keeps its custody position rule.
    pub(super) fn replace(&mut self, replace: &ReplaceInst) {
        let ReplaceInst {
            path: pi,
            value,
            ty,
            site,
            ..
        } = replace;
        let (pi, root, dropped_as, site) = (*pi, replace.root, replace.dropped_as.as_str(), *site);
        let zcand = match replace.candidate {
            Some(c) => self.cust_pos(c),
            None => "-1".to_string(),
        };
        let a = self.lowered_arg(value, true);
        let n = self.size(ty);
        let old = self.scratch(n);
        if root {
            self.copy(&old, &format!("%pl{pi}"), n);
            let had = self.load(&format!("%ph{pi}"));
            self.i(format!(
                "call void @zlm_cust_replace(ptr %zc, ptr %zcn, i64 {pi}, i64 {zcand})"
            ));
            self.put(&format!("%pl{pi}"), ty, &a);
            self.i(format!("store i64 1, ptr %ph{pi}"));
            if self.u.layouts.drops(self.u.r, ty) {
                let c = self.v(format!("icmp ne i64 {had}, 0"));
                let (go, skip) = (self.l(), self.l());
                self.term(format!("br i1 {c}, label %{go}, label %{skip}"));
                self.label_cont(&go);
                self.drop_value(ty, dropped_as, &old);
                self.term(format!("br label %{skip}"));
                let zl = self.zl_cur.clone();
                self.label(&skip);
                self.zl_cur = zl;
            }
        } else {
            let c = self.present(pi);
            self.fault_unless(&c, fk::TAG, site.block, site.op);
            let t = self.target(pi);
            self.copy(&old, &t, n);
            self.put(&t, ty, &a);
            self.drop_value(ty, dropped_as, &old);
        }
    }

    /// The abrupt unwind: owners in reverse custody order, then the frame
    /// leaves with the fault kind in `%zk`.
    pub(super) fn unwind(&mut self) {
        self.label("ZUNWIND");
        self.term("br label %ZU_loop");
        self.label("ZU_loop");
        let n = self.load("%zcn");
        let e = self.v(format!("icmp eq i64 {n}, 0"));
        self.term(format!("br i1 {e}, label %ZU_done, label %ZU_pop"));
        self.label("ZU_pop");
        let n1 = self.v(format!("sub i64 {n}, 1"));
        self.i(format!("store i64 {n1}, ptr %zcn"));
        let cp = self.v(format!("getelementptr inbounds i64, ptr %zc, i64 {n1}"));
        let pi = self.load(&cp);
        let mut cases = String::new();
        let owners: Vec<usize> = (0..self.places.len())
            .filter(|&i| self.places[i].owner && self.places[i].agg)
            .collect();
        for &i in &owners {
            let _ = write!(cases, " i64 {i}, label %ZU_{i}");
        }
        self.term(format!("switch i64 {pi}, label %ZU_loop [{cases} ]"));
        for &i in &owners {
            self.label(&format!("ZU_{i}"));
            let h = self.load(&format!("%ph{i}"));
            let c = self.v(format!("icmp ne i64 {h}, 0"));
            self.term(format!("br i1 {c}, label %ZU_d{i}, label %ZU_loop"));
            self.label(&format!("ZU_d{i}"));
            self.i(format!("store i64 0, ptr %ph{i}"));
            let t = self.f.body.paths[i].ty.clone();
            let name = root_name(&self.f.body.paths[i].key.root);
            self.drop_value(&t, &name, &format!("%pl{i}"));
            self.term("br label %ZU_loop");
        }
        self.label("ZU_done");
        let zl = self.load("%zl");
        self.i(format!("store i64 {zl}, ptr %z"));
        let pd = self.zfield(zf::DEPTH);
        let d = self.load(&pd);
        let d1 = self.v(format!("sub i64 {d}, 1"));
        self.i(format!("store i64 {d1}, ptr {pd}"));
        let k = self.v("load i32, ptr %zk");
        self.term(format!("ret i32 {k}"));
    }
}
