//! The dataflow pass: three-state ownership over owned paths (dead states
//! uninitialized and moved are distinguished only by how they were reached),
//! the ordered custody sequence, cleanup recipes on every edge, loan
//! liveness and conflicts, and variant refinement.

use super::cfg::Arm;
use super::context::{CResult, FnCheck, code};
use crate::hash::Id;
use crate::model::*;
use std::collections::BTreeSet;

#[derive(Clone, Debug, PartialEq, Eq)]
struct St {
    /// Per owned path: initialized.
    live: Vec<bool>,
    /// Ordered custody of owner roots/temporaries (path indices).
    custody: Vec<usize>,
    /// Live body loans (dense IDs).
    loans: BTreeSet<u32>,
    /// Refinement facts: (path index, variant ID).
    refine: BTreeSet<(usize, Id)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    Read,
    Write,
    BorrowShared,
    BorrowMut,
}

struct Flow<'a, 'r, 'm> {
    ctx: &'a FnCheck<'r, 'm>,
    children: Vec<Vec<usize>>,
    owner: Vec<bool>,
}

fn overlaps(a: &PathKey, b: &PathKey) -> bool {
    a.root == b.root && {
        let n = a.fields.len().min(b.fields.len());
        a.fields[..n] == b.fields[..n]
    }
}

/// Runs the dataflow over the function body.
pub fn run(ctx: &FnCheck<'_, '_>) -> CResult<()> {
    let paths = &ctx.f.body.paths;
    let mut children = vec![Vec::new(); paths.len()];
    for (i, p) in paths.iter().enumerate() {
        if !p.key.fields.is_empty() {
            let mut parent = p.key.clone();
            parent.fields.pop();
            if let Some(&pi) = ctx.path_ix.get(&parent) {
                children[pi].push(i);
            }
        }
    }
    let owner = paths
        .iter()
        .map(|p| {
            p.key.fields.is_empty()
                && !ctx.is_borrow_root(&p.key.root)
                && !ctx.r.is_copy(&p.ty)
                && !p.ty.is_borrow()
        })
        .collect();
    let fl = Flow {
        ctx,
        children,
        owner,
    };
    fl.run()
}

impl Flow<'_, '_, '_> {
    fn ix(&self, k: &PathKey) -> Option<usize> {
        self.ctx.path_ix.get(k).copied()
    }

    fn set_tree(&self, st: &mut St, i: usize, v: bool) {
        st.live[i] = v;
        for &c in &self.children[i] {
            self.set_tree(st, c, v);
        }
        if !v {
            st.refine.retain(|(p, _)| *p != i);
        }
    }

    fn whole_live(&self, st: &St, i: usize) -> bool {
        st.live[i] && self.children[i].iter().all(|&c| self.whole_live(st, c))
    }

    fn kill(&self, st: &mut St, i: usize) {
        self.set_tree(st, i, false);
        st.custody.retain(|&c| c != i);
    }

    fn entry(&self) -> St {
        let f = self.ctx.f;
        let mut st = St {
            live: vec![false; f.body.paths.len()],
            custody: Vec::new(),
            loans: BTreeSet::new(),
            refine: BTreeSet::new(),
        };
        let mut roots: Vec<(u32, usize)> = Vec::new();
        for (i, p) in f.body.paths.iter().enumerate() {
            if !p.key.fields.is_empty() {
                continue;
            }
            let slot = match p.key.root {
                Root::Receiver => 0,
                Root::Param(o) => o + 1,
                _ => continue,
            };
            roots.push((slot, i));
        }
        roots.sort();
        for (_, i) in roots {
            self.set_tree(&mut st, i, true);
            if self.owner[i] {
                st.custody.push(i);
            }
        }
        st
    }

    fn run(&self) -> CResult<()> {
        let n = self.ctx.cfg.blocks.len();
        let mut ins: Vec<Option<St>> = vec![None; n];
        ins[0] = Some(self.entry());
        let mut work = BTreeSet::from([0usize]);
        let mut guard = 0usize;
        while let Some(b) = work.pop_first() {
            guard += 1;
            if guard
                > 64 * (n + 1) * (self.ctx.f.body.loans.len() + self.ctx.f.body.paths.len() + 2)
            {
                return Err(self.ctx.err(
                    code::UNSUPPORTED,
                    None,
                    None,
                    "dataflow did not converge",
                ));
            }
            let Some(st) = ins[b].clone() else { continue };
            for (succ, out) in self.block(b, st)? {
                match &mut ins[succ] {
                    slot @ None => {
                        *slot = Some(out);
                        work.insert(succ);
                    }
                    Some(have) => {
                        if have.live != out.live || have.custody != out.custody {
                            return Err(self.ctx.err(
                                code::CUSTODY,
                                Some(succ as u32),
                                None,
                                format!(
                                    "predecessor block {b} presents a different initialized set or custody sequence at this join ({:?} vs {:?})",
                                    self.names(&out.custody),
                                    self.names(&have.custody)
                                ),
                            ));
                        }
                        let loans: BTreeSet<u32> = have.loans.union(&out.loans).copied().collect();
                        let refine: BTreeSet<(usize, Id)> =
                            have.refine.intersection(&out.refine).cloned().collect();
                        if loans != have.loans || refine != have.refine {
                            have.loans = loans;
                            have.refine = refine;
                            work.insert(succ);
                        }
                    }
                }
            }
        }
        Ok(())
    }

    fn names(&self, c: &[usize]) -> Vec<String> {
        c.iter()
            .map(|&i| format!("{:?}", self.ctx.f.body.paths[i].key.root))
            .collect()
    }

    fn loan(&self, id: u32) -> Option<&Loan> {
        self.ctx.f.body.loans.iter().find(|l| l.id == id)
    }

    /// Place-based conflict with live loans, and suspension of a borrowed
    /// root by a live child loan.
    fn conflict(&self, st: &St, b: u32, j: u32, k: &PathKey, acc: Access) -> CResult<()> {
        let here = OpRef::Flow {
            block: b,
            ordinal: j,
        };
        for &lid in &st.loans {
            let Some(l) = self.loan(lid) else { continue };
            if l.creation == Some(here) {
                continue;
            }
            let via_entry = l
                .parent
                .and_then(|p| self.loan(p))
                .is_some_and(|p| p.creation.is_none() && overlaps(&p.origin, k));
            if !overlaps(&l.origin, k) && !via_entry {
                continue;
            }
            let bad = match acc {
                Access::Read | Access::BorrowShared => l.kind == LoanKind::Exclusive,
                Access::Write | Access::BorrowMut => true,
            };
            if bad {
                return Err(self.ctx.err(
                    code::LOAN,
                    Some(b),
                    Some(j),
                    format!("access conflicts with live {} loan {}", l.kind.text(), l.id),
                ));
            }
        }
        Ok(())
    }

    fn use_value(&self, st: &St, b: u32, j: u32, r: &OpRef) -> CResult<()> {
        let Some(l) = self.ctx.loan_created_by(r) else {
            return Ok(());
        };
        if !st.loans.contains(&l.id) {
            return Err(self.ctx.err(
                code::LOAN,
                Some(b),
                Some(j),
                format!("use of loan {} after its last use", l.id),
            ));
        }
        let here = OpRef::Flow {
            block: b,
            ordinal: j,
        };
        for &c in &st.loans {
            if let Some(child) = self.loan(c)
                && child.parent == Some(l.id)
                && child.creation != Some(here)
                && l.kind == LoanKind::Exclusive
            {
                return Err(self.ctx.err(
                    code::LOAN,
                    Some(b),
                    Some(j),
                    format!(
                        "exclusive loan {} is suspended by live child loan {}",
                        l.id, child.id
                    ),
                ));
            }
        }
        Ok(())
    }

    fn consume(&self, st: &mut St, b: u32, j: u32, o: &Operand) -> CResult<Option<usize>> {
        let Operand::Value(r) = o else {
            return Ok(None);
        };
        let Some(t) = self.ctx.operand_type(o) else {
            return Ok(None);
        };
        if t.is_borrow() || self.ctx.r.is_copy(&t) {
            return Ok(None);
        }
        let key = PathKey {
            root: Root::Temp(*r),
            fields: vec![],
        };
        let Some(i) = self.ix(&key) else {
            return Err(self.ctx.err(
                code::OWNERSHIP,
                Some(b),
                Some(j),
                "owner value without a temporary path",
            ));
        };
        if !st.live[i] {
            return Err(self.ctx.err(
                code::OWNERSHIP,
                Some(b),
                Some(j),
                format!("owner value {r:?} was already consumed"),
            ));
        }
        self.kill(st, i);
        Ok(Some(i))
    }

    fn produce(&self, st: &mut St, b: u32, j: u32) {
        let key = PathKey {
            root: Root::Temp(OpRef::Flow {
                block: b,
                ordinal: j,
            }),
            fields: vec![],
        };
        if let Some(i) = self.ix(&key) {
            self.set_tree(st, i, true);
            st.custody.push(i);
        }
    }

    fn place(&self, st: &St, b: u32, j: u32, k: &PathKey, whole: bool) -> CResult<usize> {
        let i = self.ix(k).ok_or_else(|| {
            self.ctx
                .err(code::OWNERSHIP, Some(b), Some(j), "unknown place")
        })?;
        let ok = if whole {
            self.whole_live(st, i)
        } else {
            st.live[i]
        };
        if !ok {
            return Err(self.ctx.err(
                code::OWNERSHIP,
                Some(b),
                Some(j),
                format!(
                    "place {:?} is {}",
                    k.root,
                    if st.live[i] {
                        "partially moved"
                    } else {
                        "not initialized (uninitialized or moved)"
                    }
                ),
            ));
        }
        Ok(i)
    }

    /// Applies an edge's recipe list; `all` demands that every owner dies.
    fn recipes(&self, st: &mut St, source: u32, edge: u32, all: bool) -> CResult<()> {
        let e = self
            .ctx
            .f
            .body
            .edges
            .iter()
            .find(|e| e.id == edge)
            .ok_or_else(|| {
                self.ctx.err(
                    code::CLEANUP,
                    Some(source),
                    None,
                    format!("missing cleanup edge {edge}"),
                )
            })?;
        let mut last_pos = usize::MAX;
        for (ri, d) in e.drops.iter().enumerate() {
            let err = |m: String| {
                self.ctx.err(
                    code::CLEANUP,
                    Some(source),
                    None,
                    format!("cleanup edge {edge} recipe {ri}: {m}"),
                )
            };
            let Some(Operand::Place(k)) = d.operands.first() else {
                return Err(err("a recipe drops one place".into()));
            };
            let i = self.ix(k).ok_or_else(|| err("unknown place".into()))?;
            let pos =
                st.custody.iter().position(|&c| c == i).ok_or_else(|| {
                    err("drops a path that is not a live owner in custody".into())
                })?;
            if pos >= last_pos {
                return Err(err("recipes must drop in reverse custody order".into()));
            }
            last_pos = pos;
            self.kill(st, i);
        }
        if all && !st.custody.is_empty() {
            return Err(self.ctx.err(
                code::CLEANUP,
                Some(source),
                None,
                format!(
                    "cleanup edge {edge} leaves live owners {:?} at function exit",
                    self.names(&st.custody)
                ),
            ));
        }
        Ok(())
    }

    fn block(&self, block_index: usize, mut st: St) -> CResult<Vec<(usize, St)>> {
        let ctx = self.ctx;
        let b = block_index as u32;
        let ops = &ctx.cfg.blocks[block_index].ops;
        let mut pending_refine: Option<(usize, Id)> = None;
        let mut out = Vec::new();
        for (jj, op) in ops.iter().enumerate() {
            let j = jj as u32;
            let here = OpRef::Flow {
                block: b,
                ordinal: j,
            };
            let e = |c: &'static str, m: String| ctx.err(c, Some(b), Some(j), m);
            for o in &op.operands {
                match o {
                    Operand::Value(r) => self.use_value(&st, b, j, r)?,
                    Operand::Place(k) if op.tag != tag::STORE_LOCAL => {
                        if let Some(l) = ctx.slice_local_loan(k)
                            && !st.loans.contains(&l.id)
                        {
                            return Err(e(
                                code::LOAN,
                                format!(
                                    "use of a transient Slice<Byte> local outside its loan {} (uninitialized or after the last use)",
                                    l.id
                                ),
                            ));
                        }
                    }
                    _ => {}
                }
            }
            match op.tag {
                tag::LOAD_LOCAL | tag::ENUM_IS_VARIANT => {
                    if let Some(Operand::Place(k)) = op.operands.first() {
                        self.conflict(&st, b, j, k, Access::Read)?;
                        let i = self.place(&st, b, j, k, false)?;
                        if op.tag == tag::ENUM_IS_VARIANT
                            && let (Aux::Variant(v), Some(next)) = (&op.aux0, ops.get(jj + 1))
                            && next.tag == tag::JUMP_IF_FALSE
                            && next.operands.first() == Some(&Operand::Value(here))
                        {
                            pending_refine = Some((i, *v));
                        }
                    }
                }
                tag::FIELD_COPY | tag::FIELD_MOVE => {
                    let Some(Operand::Place(k)) = op.operands.first() else {
                        continue;
                    };
                    let Aux::Field(fid) = &op.aux0 else { continue };
                    let acc = if op.tag == tag::FIELD_MOVE {
                        Access::Write
                    } else {
                        Access::Read
                    };
                    self.conflict(&st, b, j, k, acc)?;
                    let op_index = self.place(&st, b, j, k, false)?;
                    let mut fk = k.clone();
                    fk.fields.push(*fid);
                    let fn_index = self.ix(&fk);
                    if let Some(info) = ctx.r.ids.fields.get(fid)
                        && let Some(v) = info.variant
                    {
                        let vid = ctx.r.ids.decls[info.decl].variants[v].0;
                        if !st.refine.contains(&(op_index, vid)) {
                            return Err(e(
                                code::VARIANT,
                                "payload field access without a proven active variant".into(),
                            ));
                        }
                    }
                    match (op.tag, fn_index) {
                        (tag::FIELD_COPY, Some(fn_index)) if !st.live[fn_index] => {
                            return Err(e(code::OWNERSHIP, "read of a moved field".into()));
                        }
                        (tag::FIELD_MOVE, None) => {
                            return Err(e(
                                code::OWNERSHIP,
                                "FIELD_MOVE needs the field's owned path".into(),
                            ));
                        }
                        (tag::FIELD_MOVE, Some(fn_index)) => {
                            if !self.whole_live(&st, fn_index) {
                                return Err(e(code::OWNERSHIP, "move of a moved field".into()));
                            }
                            self.set_tree(&mut st, fn_index, false);
                            self.produce(&mut st, b, j);
                        }
                        _ => {}
                    }
                }
                tag::STORE_LOCAL => {
                    let Some(Operand::Place(k)) = op.operands.first() else {
                        continue;
                    };
                    self.conflict(&st, b, j, k, Access::Write)?;
                    let i = self
                        .ix(k)
                        .ok_or_else(|| e(code::OWNERSHIP, "unknown place".into()))?;
                    let copy = ctx.r.is_copy(&ctx.f.body.paths[i].ty);
                    if !copy && st.live[i] {
                        return Err(e(
                            code::OWNERSHIP,
                            "STORE_LOCAL over an initialized owner (use REPLACE_COMMIT)".into(),
                        ));
                    }
                    let facts = self.value_facts(&st, &op.operands[1]);
                    self.consume(&mut st, b, j, &op.operands[1])?;
                    self.set_tree(&mut st, i, true);
                    if self.owner[i] {
                        st.custody.push(i);
                    }
                    for v in facts {
                        st.refine.insert((i, v));
                    }
                }
                tag::PLACE_MOVE | tag::PLACE_DROP => {
                    let Some(Operand::Place(k)) = op.operands.first() else {
                        continue;
                    };
                    self.conflict(&st, b, j, k, Access::Write)?;
                    let i = self.place(&st, b, j, k, op.tag == tag::PLACE_MOVE)?;
                    let facts: Vec<Id> = st
                        .refine
                        .iter()
                        .filter(|(p, _)| *p == i)
                        .map(|(_, v)| *v)
                        .collect();
                    self.kill(&mut st, i);
                    if op.tag == tag::PLACE_MOVE {
                        self.produce(&mut st, b, j);
                        if let Some(t) = self.ix(&PathKey {
                            root: Root::Temp(here),
                            fields: vec![],
                        }) {
                            for v in facts {
                                st.refine.insert((t, v));
                            }
                        }
                    }
                }
                tag::REPLACE_COMMIT => {
                    let Some(Operand::Place(k)) = op.operands.first() else {
                        continue;
                    };
                    self.conflict(&st, b, j, k, Access::Write)?;
                    let i = self.place(&st, b, j, k, false)?;
                    let cand_pos = match &op.operands[1] {
                        Operand::Value(r) => self
                            .ix(&PathKey {
                                root: Root::Temp(*r),
                                fields: vec![],
                            })
                            .and_then(|t| st.custody.iter().position(|&c| c == t)),
                        _ => None,
                    };
                    let had = st.custody.iter().position(|&c| c == i);
                    let facts = self.value_facts(&st, &op.operands[1]);
                    self.consume(&mut st, b, j, &op.operands[1])?;
                    st.refine.retain(|(p, _)| *p != i);
                    self.set_tree(&mut st, i, true);
                    if had.is_some() {
                        // Retarget the candidate's entry: the destination takes
                        // the candidate's custody position.
                        st.custody.retain(|&c| c != i);
                        let pos = cand_pos
                            .map(|p| p.saturating_sub(usize::from(had.is_some_and(|h| h < p))))
                            .unwrap_or(st.custody.len())
                            .min(st.custody.len());
                        st.custody.insert(pos, i);
                    }
                    for v in facts {
                        st.refine.insert((i, v));
                    }
                }
                tag::BORROW_SHARED | tag::BORROW_MUT | tag::BORROW_SLICE_BYTE => {
                    if let Some(Operand::Place(k)) = op.operands.first() {
                        let acc = if op.tag == tag::BORROW_MUT {
                            Access::BorrowMut
                        } else {
                            Access::BorrowShared
                        };
                        self.conflict(&st, b, j, k, acc)?;
                        self.place(&st, b, j, k, true)?;
                    }
                }
                tag::BYTE_BUILDER_FINISH => {
                    let Some(Operand::Place(k)) = op.operands.first() else {
                        continue;
                    };
                    self.conflict(&st, b, j, k, Access::Write)?;
                    let i = self.place(&st, b, j, k, true)?;
                    let t = self.ix(&PathKey {
                        root: Root::Temp(here),
                        fields: vec![],
                    });
                    // Metadata relabel: the Builder's custody entry is
                    // retagged in place as the Bytes result.
                    let pos = st.custody.iter().position(|&c| c == i);
                    self.set_tree(&mut st, i, false);
                    if let (Some(t), Some(pos)) = (t, pos) {
                        st.custody[pos] = t;
                        self.set_tree(&mut st, t, true);
                    } else {
                        return Err(e(
                            code::OWNERSHIP,
                            "BYTE_BUILDER_FINISH consumes an owner in custody into its Bytes temporary".into(),
                        ));
                    }
                }
                tag::RESULT_TRY | tag::RESULT_TRY_RICH => {
                    let mut err_st = st.clone();
                    self.consume(&mut err_st, b, j, &op.operands[0])?;
                    let eid = ctx.cfg.edge_id(b, Arm::Try, Some(j)).unwrap_or(u32::MAX);
                    err_st.loans.clear();
                    self.recipes(&mut err_st, b, eid, true)?;
                    self.consume(&mut st, b, j, &op.operands[0])?;
                    self.produce(&mut st, b, j);
                }
                tag::RETURN => {
                    self.consume(&mut st, b, j, &op.operands[0])?;
                    let eid = ctx.cfg.edge_id(b, Arm::Return, None).unwrap_or(u32::MAX);
                    st.loans.clear();
                    self.recipes(&mut st, b, eid, true)?;
                }
                tag::JUMP => {
                    let eid = ctx.cfg.edge_id(b, Arm::Jump, None).unwrap_or(u32::MAX);
                    self.end_loans(&mut st, here);
                    self.recipes(&mut st, b, eid, false)?;
                    out.push((ctx.cfg.succ[block_index][0], st.clone()));
                }
                tag::JUMP_IF_FALSE => {
                    self.end_loans(&mut st, here);
                    let mut t = st.clone();
                    if let Some(f) = pending_refine.take() {
                        t.refine.insert(f);
                    }
                    let te = ctx.cfg.edge_id(b, Arm::True, None).unwrap_or(u32::MAX);
                    self.recipes(&mut t, b, te, false)?;
                    out.push((ctx.cfg.succ[block_index][0], t));
                    let mut f = st.clone();
                    let fe = ctx.cfg.edge_id(b, Arm::False, None).unwrap_or(u32::MAX);
                    self.recipes(&mut f, b, fe, false)?;
                    out.push((ctx.cfg.succ[block_index][1], f));
                }
                tag::CALL
                | tag::INTRINSIC_CALL
                | tag::AGGREGATE_CONSTRUCT
                | tag::VARIANT_CONSTRUCT
                | tag::RESULT_OK_RICH
                | tag::RESULT_ERR_RICH => {
                    for o in &op.operands {
                        if let Operand::Place(k) = o {
                            let acc = if matches!(ctx.binding_type(k), Some(Type::Mut(_))) {
                                Access::Write
                            } else {
                                Access::Read
                            };
                            self.conflict(&st, b, j, k, acc)?;
                        }
                        self.consume(&mut st, b, j, o)?;
                    }
                    self.produce(&mut st, b, j);
                    if op.tag == tag::VARIANT_CONSTRUCT
                        && let (Aux::Variant(v), Some(t)) = (
                            &op.aux0,
                            self.ix(&PathKey {
                                root: Root::Temp(here),
                                fields: vec![],
                            }),
                        )
                    {
                        st.refine.insert((t, *v));
                    }
                }
                _ => {
                    // Scalar operations: a non-Copy owner value cannot appear.
                    for o in &op.operands {
                        if let Some(t) = ctx.operand_type(o)
                            && matches!(o, Operand::Value(_))
                            && !t.is_borrow()
                            && !ctx.r.is_copy(&t)
                        {
                            return Err(e(
                                code::OWNERSHIP,
                                "an owner value used by a non-consuming operation".into(),
                            ));
                        }
                    }
                }
            }
            // Loans created here begin; loans whose last use is here end.
            for l in &ctx.f.body.loans {
                if l.creation == Some(here) {
                    st.loans.insert(l.id);
                }
            }
            self.end_loans(&mut st, here);
        }
        Ok(out)
    }

    fn end_loans(&self, st: &mut St, here: OpRef) {
        for l in &self.ctx.f.body.loans {
            if l.last_use == Some(here) {
                st.loans.remove(&l.id);
            }
        }
    }

    /// Refinement facts carried by an SSA owner value.
    fn value_facts(&self, st: &St, o: &Operand) -> Vec<Id> {
        let Operand::Value(r) = o else {
            return Vec::new();
        };
        match self.ix(&PathKey {
            root: Root::Temp(*r),
            fields: vec![],
        }) {
            Some(t) => st
                .refine
                .iter()
                .filter(|(p, _)| *p == t)
                .map(|(_, v)| *v)
                .collect(),
            None => match self.ctx.index.op(r) {
                Some(op) if op.tag == tag::VARIANT_CONSTRUCT => match &op.aux0 {
                    Aux::Variant(v) => vec![*v],
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            },
        }
    }
}
