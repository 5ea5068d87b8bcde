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
struct FlowState {
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

fn overlaps(left: &PathKey, right: &PathKey) -> bool {
    left.root == right.root && {
        let shared = left.fields.len().min(right.fields.len());
        left.fields[..shared] == right.fields[..shared]
    }
}

/// Runs the dataflow over the function body.
pub fn run(ctx: &FnCheck<'_, '_>) -> CResult<()> {
    let paths = &ctx.function.body.paths;
    let mut children = vec![Vec::new(); paths.len()];
    for (path_index, path) in paths.iter().enumerate() {
        if !path.key.fields.is_empty() {
            let mut parent = path.key.clone();
            parent.fields.pop();
            if let Some(&parent_index) = ctx.path_ix.get(&parent) {
                children[parent_index].push(path_index);
            }
        }
    }
    let owner = paths
        .iter()
        .map(|path| {
            path.key.fields.is_empty()
                && !ctx.is_borrow_root(&path.key.root)
                && !ctx.r.is_copy(&path.ty)
                && !path.ty.is_borrow()
        })
        .collect();
    let flow = Flow {
        ctx,
        children,
        owner,
    };
    flow.run()
}

impl Flow<'_, '_, '_> {
    fn path_index_of(&self, key: &PathKey) -> Option<usize> {
        self.ctx.path_ix.get(key).copied()
    }

    fn set_tree(&self, state: &mut FlowState, path_index: usize, live: bool) {
        state.live[path_index] = live;
        for &child in &self.children[path_index] {
            self.set_tree(state, child, live);
        }
        if !live {
            state.refine.retain(|(p, _)| *p != path_index);
        }
    }

    fn whole_live(&self, state: &FlowState, path_index: usize) -> bool {
        state.live[path_index]
            && self.children[path_index]
                .iter()
                .all(|&child| self.whole_live(state, child))
    }

    fn kill(&self, state: &mut FlowState, path_index: usize) {
        self.set_tree(state, path_index, false);
        state.custody.retain(|&c| c != path_index);
    }

    fn entry(&self) -> FlowState {
        let function = self.ctx.function;
        let mut state = FlowState {
            live: vec![false; function.body.paths.len()],
            custody: Vec::new(),
            loans: BTreeSet::new(),
            refine: BTreeSet::new(),
        };
        let mut roots: Vec<(u32, usize)> = Vec::new();
        for (path_index, path) in function.body.paths.iter().enumerate() {
            if !path.key.fields.is_empty() {
                continue;
            }
            let slot = match path.key.root {
                Root::Receiver => 0,
                Root::Param(ordinal) => ordinal + 1,
                _ => continue,
            };
            roots.push((slot, path_index));
        }
        roots.sort();
        for (_, path_index) in roots {
            self.set_tree(&mut state, path_index, true);
            if self.owner[path_index] {
                state.custody.push(path_index);
            }
        }
        state
    }

    fn run(&self) -> CResult<()> {
        let block_count = self.ctx.cfg.blocks.len();
        let mut ins: Vec<Option<FlowState>> = vec![None; block_count];
        ins[0] = Some(self.entry());
        let mut work = BTreeSet::from([0usize]);
        let mut guard = 0usize;
        while let Some(block) = work.pop_first() {
            guard += 1;
            if guard
                > 64 * (block_count + 1)
                    * (self.ctx.function.body.loans.len() + self.ctx.function.body.paths.len() + 2)
            {
                return Err(self.ctx.err(
                    code::UNSUPPORTED,
                    None,
                    None,
                    "dataflow did not converge",
                ));
            }
            let Some(state) = ins[block].clone() else {
                continue;
            };
            for (succ, out) in self.block(block, state)? {
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
                                    "predecessor block {block} presents a different initialized set or custody sequence at this join ([{}] vs [{}])",
                                    self.names(&out.custody).join(", "),
                                    self.names(&have.custody).join(", ")
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

    fn names(&self, custody: &[usize]) -> Vec<String> {
        custody
            .iter()
            .map(|&i| self.ctx.place(&self.ctx.function.body.paths[i].key))
            .collect()
    }

    fn loan(&self, id: u32) -> Option<&Loan> {
        self.ctx.function.body.loans.iter().find(|l| l.id == id)
    }

    /// Place-based conflict with live loans, and suspension of a borrowed
    /// root by a live child loan.
    fn conflict(
        &self,
        state: &FlowState,
        block: u32,
        ordinal: u32,
        place: &PathKey,
        acc: Access,
    ) -> CResult<()> {
        let here = OpRef::Flow { block, ordinal };
        for &lid in &state.loans {
            let Some(loan) = self.loan(lid) else { continue };
            if loan.creation == Some(here) {
                continue;
            }
            let via_entry = loan
                .parent
                .and_then(|p| self.loan(p))
                .is_some_and(|p| p.creation.is_none() && overlaps(&p.origin, place));
            if !overlaps(&loan.origin, place) && !via_entry {
                continue;
            }
            let bad = match acc {
                Access::Read | Access::BorrowShared => loan.kind == LoanKind::Exclusive,
                Access::Write | Access::BorrowMut => true,
            };
            if bad {
                return Err(self.ctx.err(
                    code::LOAN,
                    Some(block),
                    Some(ordinal),
                    format!(
                        "access conflicts with live {} loan {}",
                        loan.kind.text(),
                        loan.id
                    ),
                ));
            }
        }
        Ok(())
    }

    fn use_value(
        &self,
        state: &FlowState,
        block: u32,
        ordinal: u32,
        op_ref: &OpRef,
    ) -> CResult<()> {
        let Some(loan) = self.ctx.loan_created_by(op_ref) else {
            return Ok(());
        };
        if !state.loans.contains(&loan.id) {
            return Err(self.ctx.err(
                code::LOAN,
                Some(block),
                Some(ordinal),
                format!("use of loan {} after its last use", loan.id),
            ));
        }
        let here = OpRef::Flow { block, ordinal };
        for &child_id in &state.loans {
            if let Some(child) = self.loan(child_id)
                && child.parent == Some(loan.id)
                && child.creation != Some(here)
                && loan.kind == LoanKind::Exclusive
            {
                return Err(self.ctx.err(
                    code::LOAN,
                    Some(block),
                    Some(ordinal),
                    format!(
                        "exclusive loan {} is suspended by live child loan {}",
                        loan.id, child.id
                    ),
                ));
            }
        }
        Ok(())
    }

    fn consume(
        &self,
        state: &mut FlowState,
        block: u32,
        ordinal: u32,
        operand: &Operand,
    ) -> CResult<Option<usize>> {
        let Operand::Value(op_ref) = operand else {
            return Ok(None);
        };
        // The producer's result type, borrowed (`operand_type` would clone it).
        let Some(ty) = self.ctx.index.op(op_ref).and_then(|op| op.result.as_ref()) else {
            return Ok(None);
        };
        if ty.is_borrow() || self.ctx.r.is_copy(ty) {
            return Ok(None);
        }
        let key = PathKey {
            root: Root::Temp(*op_ref),
            fields: vec![],
        };
        let Some(path_index) = self.path_index_of(&key) else {
            return Err(self.ctx.err(
                code::OWNERSHIP,
                Some(block),
                Some(ordinal),
                "owner value without a temporary path",
            ));
        };
        if !state.live[path_index] {
            return Err(self.ctx.err(
                code::OWNERSHIP,
                Some(block),
                Some(ordinal),
                format!("owner value {op_ref} was already consumed"),
            ));
        }
        self.kill(state, path_index);
        Ok(Some(path_index))
    }

    fn produce(&self, state: &mut FlowState, block: u32, ordinal: u32) {
        let key = PathKey {
            root: Root::Temp(OpRef::Flow { block, ordinal }),
            fields: vec![],
        };
        if let Some(path_index) = self.path_index_of(&key) {
            self.set_tree(state, path_index, true);
            state.custody.push(path_index);
        }
    }

    fn place(
        &self,
        state: &FlowState,
        block: u32,
        ordinal: u32,
        key: &PathKey,
        whole: bool,
    ) -> CResult<usize> {
        let path_index = self.path_index_of(key).ok_or_else(|| {
            self.ctx
                .err(code::OWNERSHIP, Some(block), Some(ordinal), "unknown place")
        })?;
        let ok = if whole {
            self.whole_live(state, path_index)
        } else {
            state.live[path_index]
        };
        if !ok {
            return Err(self.ctx.err(
                code::OWNERSHIP,
                Some(block),
                Some(ordinal),
                format!(
                    "place ${} is {}",
                    key.root,
                    if state.live[path_index] {
                        "partially moved"
                    } else {
                        "not initialized (uninitialized or moved)"
                    }
                ),
            ));
        }
        Ok(path_index)
    }

    /// Applies the recipe list of cleanup edge `edge`, which operation
    /// `ordinal` of block `source` takes; `all` demands that every owner
    /// dies. A recipe that fails is reported at its own operation (`%rE.O`),
    /// owners left alive at the operation that takes the edge.
    fn recipes(
        &self,
        state: &mut FlowState,
        (source, ordinal): (u32, u32),
        edge: u32,
        all: bool,
    ) -> CResult<()> {
        let cleanup_edge = self
            .ctx
            .function
            .body
            .edges
            .iter()
            .find(|cleanup_edge| cleanup_edge.id == edge)
            .ok_or_else(|| {
                self.ctx.err(
                    code::CLEANUP,
                    Some(source),
                    Some(ordinal),
                    format!("missing cleanup edge {edge}"),
                )
            })?;
        let mut last_pos = usize::MAX;
        for (recipe_index, drop) in cleanup_edge.drops.iter().enumerate() {
            let err = |message: String| {
                self.ctx
                    .err_recipe(code::CLEANUP, source, edge, recipe_index as u32, message)
            };
            let Some(Operand::Place(key)) = drop.operands.first() else {
                return Err(err("a recipe drops one place".into()));
            };
            let place = self.ctx.place(key);
            let path_index = self
                .path_index_of(key)
                .ok_or_else(|| err(format!("{place} is not an owned path of the function")))?;
            let pos = state
                .custody
                .iter()
                .position(|&c| c == path_index)
                .ok_or_else(|| {
                    err(format!(
                        "drops {place}, which is not a live owner in custody here (dropped or moved before)"
                    ))
                })?;
            if pos >= last_pos {
                return Err(err(format!(
                    "drops {place} out of order: recipes drop owners in reverse custody order"
                )));
            }
            last_pos = pos;
            self.kill(state, path_index);
        }
        if all && !state.custody.is_empty() {
            return Err(self.ctx.err(
                code::CLEANUP,
                Some(source),
                Some(ordinal),
                format!(
                    "cleanup edge {edge} ({}) leaves live owners [{}] at function exit: its recipes must drop them",
                    cleanup_edge.kind.text(),
                    self.names(&state.custody).join(", ")
                ),
            ));
        }
        Ok(())
    }

    fn block(&self, block_index: usize, mut state: FlowState) -> CResult<Vec<(usize, FlowState)>> {
        let ctx = self.ctx;
        let block = block_index as u32;
        let ops = &ctx.cfg.blocks[block_index].ops;
        let mut pending_refine: Option<(usize, Id)> = None;
        let mut out = Vec::new();
        for (op_position, op) in ops.iter().enumerate() {
            let ordinal = op_position as u32;
            let here = OpRef::Flow { block, ordinal };
            let fail = |error_code: &'static str, message: String| {
                ctx.err(error_code, Some(block), Some(ordinal), message)
            };
            for operand in &op.operands {
                match operand {
                    Operand::Value(op_ref) => self.use_value(&state, block, ordinal, op_ref)?,
                    Operand::Place(place) if op.tag != tag::STORE_LOCAL => {
                        if let Some(loan) = ctx.slice_local_loan(place)
                            && !state.loans.contains(&loan.id)
                        {
                            return Err(fail(
                                code::LOAN,
                                format!(
                                    "use of a transient Slice<Byte> local outside its loan {} (uninitialized or after the last use)",
                                    loan.id
                                ),
                            ));
                        }
                    }
                    _ => {}
                }
            }
            match op.tag {
                tag::LOAD_LOCAL | tag::ENUM_IS_VARIANT => {
                    if let Some(Operand::Place(place)) = op.operands.first() {
                        self.conflict(&state, block, ordinal, place, Access::Read)?;
                        let path_index = self.place(&state, block, ordinal, place, false)?;
                        if op.tag == tag::ENUM_IS_VARIANT
                            && let (Aux::Variant(variant), Some(next)) =
                                (&op.aux0, ops.get(op_position + 1))
                            && next.tag == tag::JUMP_IF_FALSE
                            && next.operands.first() == Some(&Operand::Value(here))
                        {
                            pending_refine = Some((path_index, *variant));
                        }
                    }
                }
                tag::FIELD_COPY | tag::FIELD_MOVE => {
                    let Some(Operand::Place(place)) = op.operands.first() else {
                        continue;
                    };
                    let Aux::Field(fid) = &op.aux0 else { continue };
                    let acc = if op.tag == tag::FIELD_MOVE {
                        Access::Write
                    } else {
                        Access::Read
                    };
                    self.conflict(&state, block, ordinal, place, acc)?;
                    let place_index = self.place(&state, block, ordinal, place, false)?;
                    let mut field_key = place.clone();
                    field_key.fields.push(*fid);
                    let field_path_index = self.path_index_of(&field_key);
                    if let Some(info) = ctx.r.ids.fields.get(fid)
                        && let Some(variant_index) = info.variant
                    {
                        let vid = ctx.r.ids.decls[info.decl].variants[variant_index].0;
                        if !state.refine.contains(&(place_index, vid)) {
                            return Err(fail(
                                code::VARIANT,
                                "payload field access without a proven active variant".into(),
                            ));
                        }
                    }
                    match (op.tag, field_path_index) {
                        (tag::FIELD_COPY, Some(field_path_index))
                            if !state.live[field_path_index] =>
                        {
                            return Err(fail(code::OWNERSHIP, "read of a moved field".into()));
                        }
                        (tag::FIELD_MOVE, None) => {
                            return Err(fail(
                                code::OWNERSHIP,
                                "FIELD_MOVE needs the field's owned path".into(),
                            ));
                        }
                        (tag::FIELD_MOVE, Some(field_path_index)) => {
                            if !self.whole_live(&state, field_path_index) {
                                return Err(fail(code::OWNERSHIP, "move of a moved field".into()));
                            }
                            self.set_tree(&mut state, field_path_index, false);
                            self.produce(&mut state, block, ordinal);
                        }
                        _ => {}
                    }
                }
                tag::STORE_LOCAL => {
                    let Some(Operand::Place(place)) = op.operands.first() else {
                        continue;
                    };
                    self.conflict(&state, block, ordinal, place, Access::Write)?;
                    let path_index = self
                        .path_index_of(place)
                        .ok_or_else(|| fail(code::OWNERSHIP, "unknown place".into()))?;
                    let copy = ctx.r.is_copy(&ctx.function.body.paths[path_index].ty);
                    if !copy && state.live[path_index] {
                        return Err(fail(
                            code::OWNERSHIP,
                            "STORE_LOCAL over an initialized owner (use REPLACE_COMMIT)".into(),
                        ));
                    }
                    let facts = self.value_facts(&state, &op.operands[1]);
                    self.consume(&mut state, block, ordinal, &op.operands[1])?;
                    self.set_tree(&mut state, path_index, true);
                    if self.owner[path_index] {
                        state.custody.push(path_index);
                    }
                    for fact in facts {
                        state.refine.insert((path_index, fact));
                    }
                }
                tag::PLACE_MOVE | tag::PLACE_DROP => {
                    let Some(Operand::Place(place)) = op.operands.first() else {
                        continue;
                    };
                    self.conflict(&state, block, ordinal, place, Access::Write)?;
                    let path_index =
                        self.place(&state, block, ordinal, place, op.tag == tag::PLACE_MOVE)?;
                    let facts: Vec<Id> = state
                        .refine
                        .iter()
                        .filter(|(p, _)| *p == path_index)
                        .map(|(_, v)| *v)
                        .collect();
                    self.kill(&mut state, path_index);
                    if op.tag == tag::PLACE_MOVE {
                        self.produce(&mut state, block, ordinal);
                        if let Some(temp_index) = self.path_index_of(&PathKey {
                            root: Root::Temp(here),
                            fields: vec![],
                        }) {
                            for fact in facts {
                                state.refine.insert((temp_index, fact));
                            }
                        }
                    }
                }
                tag::REPLACE_COMMIT => {
                    let Some(Operand::Place(place)) = op.operands.first() else {
                        continue;
                    };
                    self.conflict(&state, block, ordinal, place, Access::Write)?;
                    let path_index = self.place(&state, block, ordinal, place, false)?;
                    let cand_pos = match &op.operands[1] {
                        Operand::Value(op_ref) => self
                            .path_index_of(&PathKey {
                                root: Root::Temp(*op_ref),
                                fields: vec![],
                            })
                            .and_then(|t| state.custody.iter().position(|&entry| entry == t)),
                        _ => None,
                    };
                    let had = state.custody.iter().position(|&entry| entry == path_index);
                    let facts = self.value_facts(&state, &op.operands[1]);
                    self.consume(&mut state, block, ordinal, &op.operands[1])?;
                    state.refine.retain(|(p, _)| *p != path_index);
                    self.set_tree(&mut state, path_index, true);
                    if had.is_some() {
                        // Retarget the candidate's entry: the destination takes
                        // the candidate's custody position.
                        state.custody.retain(|&entry| entry != path_index);
                        let pos = cand_pos
                            .map(|p| p.saturating_sub(usize::from(had.is_some_and(|h| h < p))))
                            .unwrap_or(state.custody.len())
                            .min(state.custody.len());
                        state.custody.insert(pos, path_index);
                    }
                    for fact in facts {
                        state.refine.insert((path_index, fact));
                    }
                }
                tag::BORROW_SHARED | tag::BORROW_MUT | tag::BORROW_SLICE_BYTE => {
                    if let Some(Operand::Place(place)) = op.operands.first() {
                        let acc = if op.tag == tag::BORROW_MUT {
                            Access::BorrowMut
                        } else {
                            Access::BorrowShared
                        };
                        self.conflict(&state, block, ordinal, place, acc)?;
                        self.place(&state, block, ordinal, place, true)?;
                    }
                }
                tag::BYTE_BUILDER_FINISH => {
                    let Some(Operand::Place(place)) = op.operands.first() else {
                        continue;
                    };
                    self.conflict(&state, block, ordinal, place, Access::Write)?;
                    let path_index = self.place(&state, block, ordinal, place, true)?;
                    let temp_index = self.path_index_of(&PathKey {
                        root: Root::Temp(here),
                        fields: vec![],
                    });
                    // Metadata relabel: the Builder's custody entry is
                    // retagged in place as the Bytes result.
                    let pos = state.custody.iter().position(|&entry| entry == path_index);
                    self.set_tree(&mut state, path_index, false);
                    if let (Some(temp_index), Some(pos)) = (temp_index, pos) {
                        state.custody[pos] = temp_index;
                        self.set_tree(&mut state, temp_index, true);
                    } else {
                        return Err(fail(
                            code::OWNERSHIP,
                            "BYTE_BUILDER_FINISH consumes an owner in custody into its Bytes temporary".into(),
                        ));
                    }
                }
                tag::RESULT_TRY | tag::RESULT_TRY_RICH => {
                    let mut err_st = state.clone();
                    self.consume(&mut err_st, block, ordinal, &op.operands[0])?;
                    let eid = ctx
                        .cfg
                        .edge_id(block, Arm::Try, Some(ordinal))
                        .unwrap_or(u32::MAX);
                    err_st.loans.clear();
                    self.recipes(&mut err_st, (block, ordinal), eid, true)?;
                    self.consume(&mut state, block, ordinal, &op.operands[0])?;
                    self.produce(&mut state, block, ordinal);
                }
                tag::RETURN => {
                    self.consume(&mut state, block, ordinal, &op.operands[0])?;
                    let eid = ctx
                        .cfg
                        .edge_id(block, Arm::Return, None)
                        .unwrap_or(u32::MAX);
                    state.loans.clear();
                    self.recipes(&mut state, (block, ordinal), eid, true)?;
                }
                tag::JUMP => {
                    let eid = ctx.cfg.edge_id(block, Arm::Jump, None).unwrap_or(u32::MAX);
                    self.end_loans(&mut state, here);
                    self.recipes(&mut state, (block, ordinal), eid, false)?;
                    out.push((ctx.cfg.succ[block_index][0], state.clone()));
                }
                tag::JUMP_IF_FALSE => {
                    self.end_loans(&mut state, here);
                    let mut true_state = state.clone();
                    if let Some(fact) = pending_refine.take() {
                        true_state.refine.insert(fact);
                    }
                    let true_edge = ctx.cfg.edge_id(block, Arm::True, None).unwrap_or(u32::MAX);
                    self.recipes(&mut true_state, (block, ordinal), true_edge, false)?;
                    out.push((ctx.cfg.succ[block_index][0], true_state));
                    let mut false_state = state.clone();
                    let false_edge = ctx.cfg.edge_id(block, Arm::False, None).unwrap_or(u32::MAX);
                    self.recipes(&mut false_state, (block, ordinal), false_edge, false)?;
                    out.push((ctx.cfg.succ[block_index][1], false_state));
                }
                tag::CALL
                | tag::INTRINSIC_CALL
                | tag::AGGREGATE_CONSTRUCT
                | tag::VARIANT_CONSTRUCT
                | tag::RESULT_OK_RICH
                | tag::RESULT_ERR_RICH => {
                    for operand in &op.operands {
                        if let Operand::Place(place) = operand {
                            let acc = if matches!(ctx.binding_type(place), Some(Type::Mut(_))) {
                                Access::Write
                            } else {
                                Access::Read
                            };
                            self.conflict(&state, block, ordinal, place, acc)?;
                        }
                        self.consume(&mut state, block, ordinal, operand)?;
                    }
                    self.produce(&mut state, block, ordinal);
                    if op.tag == tag::VARIANT_CONSTRUCT
                        && let (Aux::Variant(variant), Some(temp_index)) = (
                            &op.aux0,
                            self.path_index_of(&PathKey {
                                root: Root::Temp(here),
                                fields: vec![],
                            }),
                        )
                    {
                        state.refine.insert((temp_index, *variant));
                    }
                }
                _ => {
                    // Scalar operations: a non-Copy owner value cannot appear.
                    for operand in &op.operands {
                        if let Operand::Value(op_ref) = operand
                            && let Some(ty) = ctx.index.op(op_ref).and_then(|op| op.result.as_ref())
                            && !ty.is_borrow()
                            && !ctx.r.is_copy(ty)
                        {
                            return Err(fail(
                                code::OWNERSHIP,
                                "an owner value used by a non-consuming operation".into(),
                            ));
                        }
                    }
                }
            }
            // Loans created here begin; loans whose last use is here end.
            for loan in &ctx.function.body.loans {
                if loan.creation == Some(here) {
                    state.loans.insert(loan.id);
                }
            }
            self.end_loans(&mut state, here);
        }
        Ok(out)
    }

    fn end_loans(&self, state: &mut FlowState, here: OpRef) {
        for loan in &self.ctx.function.body.loans {
            if loan.last_use == Some(here) {
                state.loans.remove(&loan.id);
            }
        }
    }

    /// Refinement facts carried by an SSA owner value.
    fn value_facts(&self, state: &FlowState, operand: &Operand) -> Vec<Id> {
        let Operand::Value(op_ref) = operand else {
            return Vec::new();
        };
        match self.path_index_of(&PathKey {
            root: Root::Temp(*op_ref),
            fields: vec![],
        }) {
            Some(temp_index) => state
                .refine
                .iter()
                .filter(|(p, _)| *p == temp_index)
                .map(|(_, variant)| *variant)
                .collect(),
            None => match self.ctx.index.op(op_ref) {
                Some(op) if op.tag == tag::VARIANT_CONSTRUCT => match &op.aux0 {
                    Aux::Variant(variant) => vec![*variant],
                    _ => Vec::new(),
                },
                _ => Vec::new(),
            },
        }
    }
}
