//! The control-flow graph of one body: terminators, successors in semantic
//! arm order, preorder numbering, dominators, postdominators and the
//! reconstructed cleanup-edge list.

use crate::model::*;

type CfgErr = (Option<u32>, Option<u32>, String);

/// Which CFG transfer an edge represents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm {
    /// JUMP target.
    Jump,
    /// JUMP_IF_FALSE true fallthrough.
    True,
    /// JUMP_IF_FALSE false target.
    False,
    /// RETURN exit.
    Return,
    /// RESULT_TRY error exit.
    Try,
}

/// One reconstructed cleanup edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpEdge {
    /// Source block.
    pub source: u32,
    /// Successor, `None` for exit.
    pub successor: Option<u32>,
    /// The transfer.
    pub arm: Arm,
    /// For a try-error edge, the owning operation ordinal.
    pub try_op: Option<u32>,
}

/// CFG facts of one body.
pub struct Cfg<'m> {
    /// Blocks by dense ID.
    pub blocks: Vec<&'m Block>,
    /// Successors in semantic arm order.
    pub succ: Vec<Vec<usize>>,
    /// Predecessors (with multiplicity).
    pub preds: Vec<Vec<usize>>,
    /// Immediate dominators (entry maps to itself).
    pub idom: Vec<usize>,
    /// Immediate postdominators (`usize::MAX` is the virtual exit).
    pub ipdom: Vec<usize>,
    /// Dominator-tree interval of each block (entry and exit clock of a
    /// depth-first walk of the tree), for O(1) dominance queries.
    tree_interval: Vec<(u32, u32)>,
    edges: Vec<ExpEdge>,
}

/// Whether `tag` ends a block.
pub fn is_terminator(tag: u32) -> bool {
    matches!(tag, tag::JUMP | tag::JUMP_IF_FALSE | tag::RETURN)
}

impl<'m> Cfg<'m> {
    /// Builds and checks the CFG.
    pub fn build(function: &'m Function) -> Result<Self, CfgErr> {
        let (blocks, succ, edges) = terminators(function)?;
        let block_count = blocks.len();
        // Depth-first preorder from the entry must reproduce the dense IDs.
        let mut seen = vec![false; block_count];
        let mut order = Vec::with_capacity(block_count);
        let mut stack = vec![0usize];
        while let Some(block) = stack.pop() {
            if seen[block] {
                continue;
            }
            seen[block] = true;
            order.push(block);
            for &successor in succ[block].iter().rev() {
                if !seen[successor] {
                    stack.push(successor);
                }
            }
        }
        if let Some(unreached) = seen.iter().position(|visited| !visited) {
            return Err((Some(unreached as u32), None, "unreachable block".into()));
        }
        if let Some(pos) = order.iter().enumerate().position(|(i, &block)| i != block) {
            return Err((
                Some(order[pos] as u32),
                None,
                format!(
                    "block IDs are not the depth-first preorder of the CFG (block {} is visited {}th)",
                    order[pos], pos
                ),
            ));
        }
        let mut preds = vec![Vec::new(); block_count];
        for (i, successors) in succ.iter().enumerate() {
            for &successor in successors {
                preds[successor].push(i);
            }
        }
        let idom = dominators(block_count, 0, &succ, &preds);
        let tree_interval = tree_intervals(&idom);
        // Postdominators over the reverse graph with a virtual exit node n.
        let mut rsucc = vec![Vec::new(); block_count + 1];
        let mut rpreds = vec![Vec::new(); block_count + 1];
        for (i, block) in blocks.iter().enumerate() {
            if block.ops.last().map(|o| o.tag) == Some(tag::RETURN) {
                rsucc[block_count].push(i);
                rpreds[i].push(block_count);
            }
            for &successor in &succ[i] {
                rsucc[successor].push(i);
                rpreds[i].push(successor);
            }
        }
        let postdom = dominators(block_count + 1, block_count, &rsucc, &rpreds);
        let ipdom = (0..block_count)
            .map(|i| {
                if postdom[i] == block_count {
                    usize::MAX
                } else {
                    postdom[i]
                }
            })
            .collect();
        Ok(Cfg {
            blocks,
            succ,
            preds,
            idom,
            ipdom,
            tree_interval,
            edges,
        })
    }

    /// The reconstructed cleanup-edge list in dense-ID order.
    pub fn expected_edges(&self) -> &[ExpEdge] {
        &self.edges
    }

    /// Dense ID of the reconstructed edge from `source` to `successor` with `arm`.
    pub fn edge_id(&self, source: u32, arm: Arm, try_op: Option<u32>) -> Option<u32> {
        self.edges
            .iter()
            .position(|edge| edge.source == source && edge.arm == arm && edge.try_op == try_op)
            .map(|position| position as u32)
    }

    /// The derived edge kind (priority order of the spec).
    pub fn derive_kind(&self, edge: &ExpEdge, has_drops: bool) -> EdgeKind {
        match edge.arm {
            Arm::Return => EdgeKind::Return,
            Arm::Try => EdgeKind::TryError,
            _ => {
                let successor = edge.successor.unwrap_or_default() as usize;
                if self.dominates(successor, edge.source as usize) {
                    EdgeKind::Backedge
                } else if self.preds[successor].len() > 1 && has_drops {
                    EdgeKind::Join
                } else if matches!(edge.arm, Arm::True | Arm::False) {
                    EdgeKind::Branch
                } else {
                    EdgeKind::Fallthrough
                }
            }
        }
    }

    /// The edge kinds admitted for a reconstructed edge. Exit and
    /// conditional kinds are derived exactly. The artifact records no loop
    /// structure and different source transfers lower to the same JUMP, so
    /// for a JUMP the recorded kind is checked for consistency instead:
    /// a JUMP to a block that dominates its source (a CFG back-edge) is
    /// `backedge` or `continue`; any other JUMP is the derived `join` /
    /// `fallthrough`, or `break` when a natural-loop header dominates the
    /// source and the target lies outside that loop's body. See
    /// docs/zlm/semantics.md.
    pub fn admitted_kinds(&self, edge: &ExpEdge, has_drops: bool) -> Vec<EdgeKind> {
        let derived = self.derive_kind(edge, has_drops);
        if edge.arm != Arm::Jump {
            return vec![derived];
        }
        let successor = edge.successor.unwrap_or_default() as usize;
        let src = edge.source as usize;
        if self.dominates(successor, src) {
            vec![EdgeKind::Backedge, EdgeKind::Continue]
        } else if self.exits_loop(src, successor) {
            vec![derived, EdgeKind::Break]
        } else {
            vec![derived]
        }
    }

    /// Whether a transfer from `src` to `dst` can be a structured loop exit:
    /// some natural-loop header dominates `src` and `dst` lies outside that
    /// loop's body (the header plus every block that reaches one of its
    /// back-edge sources without passing the header).
    pub fn exits_loop(&self, src: usize, dst: usize) -> bool {
        let block_count = self.blocks.len();
        for header in 0..block_count {
            if !self.dominates(header, src) {
                continue;
            }
            let latches: Vec<usize> = self.preds[header]
                .iter()
                .copied()
                .filter(|&p| self.dominates(header, p))
                .collect();
            if latches.is_empty() {
                continue;
            }
            let mut body = vec![false; block_count];
            body[header] = true;
            let mut stack = latches;
            while let Some(block) = stack.pop() {
                if body[block] {
                    continue;
                }
                body[block] = true;
                stack.extend(self.preds[block].iter().copied());
            }
            if !body[dst] {
                return true;
            }
        }
        false
    }

    /// Whether block `dominator` dominates block `dominated`.
    pub fn dominates(&self, dominator: usize, dominated: usize) -> bool {
        let (outer, inner) = (self.tree_interval[dominator], self.tree_interval[dominated]);
        outer.0 <= inner.0 && inner.1 <= outer.1
    }

    /// Whether flow operation `earlier` strictly precedes-and-dominates `later`.
    pub fn dominates_op(&self, earlier: OpRef, later: OpRef) -> bool {
        match (earlier, later) {
            (
                OpRef::Flow {
                    block: earlier_block,
                    ordinal: earlier_ordinal,
                },
                OpRef::Flow {
                    block: later_block,
                    ordinal: later_ordinal,
                },
            ) => {
                if earlier_block == later_block {
                    earlier_ordinal < later_ordinal
                } else {
                    self.dominates(earlier_block as usize, later_block as usize)
                }
            }
            _ => false,
        }
    }

    /// Whether flow operation `post` postdominates (or is) flow operation `op_ref`.
    pub fn postdominates(&self, post: OpRef, op_ref: OpRef) -> bool {
        let (
            OpRef::Flow {
                block: post_block,
                ordinal: post_ordinal,
            },
            OpRef::Flow {
                block: op_block,
                ordinal: op_ordinal,
            },
        ) = (post, op_ref)
        else {
            return false;
        };
        if post_block == op_block {
            return post_ordinal >= op_ordinal;
        }
        let mut block = op_block as usize;
        loop {
            if block == usize::MAX {
                return false;
            }
            if block == post_block as usize {
                return true;
            }
            let next = self.ipdom[block];
            if next == block {
                return false;
            }
            block = next;
        }
    }
}

/// The blocks in dense-ID order, their successors in semantic arm order and
/// the reconstructed cleanup-edge list, from the terminators alone (no
/// reachability, preorder or dominance: [`Cfg::build`] adds those).
#[allow(clippy::type_complexity)]
fn terminators(
    function: &Function,
) -> Result<(Vec<&Block>, Vec<Vec<usize>>, Vec<ExpEdge>), CfgErr> {
    let mut blocks: Vec<&Block> = function.body.blocks.iter().collect();
    blocks.sort_by_key(|block| block.id);
    let block_count = blocks.len();
    if block_count == 0 {
        return Err((None, None, "a body needs an entry block".into()));
    }
    for (i, block) in blocks.iter().enumerate() {
        if block.id as usize != i {
            return Err((Some(block.id), None, "block IDs must be dense".into()));
        }
    }
    let mut succ = vec![Vec::new(); block_count];
    let mut edges = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let bid = i as u32;
        let Some(last) = block.ops.last() else {
            return Err((Some(bid), None, "an empty block has no terminator".into()));
        };
        for (j, op) in block.ops.iter().enumerate() {
            if is_terminator(op.tag) && j + 1 != block.ops.len() {
                return Err((
                    Some(bid),
                    Some(j as u32),
                    "a terminator must be the final operation of its block".into(),
                ));
            }
            if matches!(op.tag, tag::RESULT_TRY | tag::RESULT_TRY_RICH) {
                edges.push(ExpEdge {
                    source: bid,
                    successor: None,
                    arm: Arm::Try,
                    try_op: Some(j as u32),
                });
            }
        }
        let at = Some(block.ops.len() as u32 - 1);
        let target = |o: Option<&Operand>| -> Result<usize, CfgErr> {
            match o {
                Some(Operand::Block(target_index)) if (*target_index as usize) < block_count => {
                    Ok(*target_index as usize)
                }
                _ => Err((
                    Some(bid),
                    at,
                    "jump target is not a block of this body".into(),
                )),
            }
        };
        match last.tag {
            tag::JUMP => {
                let target_index = target(last.operands.first())?;
                succ[i].push(target_index);
                edges.push(ExpEdge {
                    source: bid,
                    successor: Some(target_index as u32),
                    arm: Arm::Jump,
                    try_op: None,
                });
            }
            tag::JUMP_IF_FALSE => {
                let target_index = target(last.operands.get(1))?;
                if i + 1 >= block_count {
                    return Err((
                            Some(bid),
                            at,
                            "the true fallthrough of JUMP_IF_FALSE is the next dense block, which does not exist".into(),
                        ));
                }
                succ[i].push(i + 1);
                succ[i].push(target_index);
                edges.push(ExpEdge {
                    source: bid,
                    successor: Some(bid + 1),
                    arm: Arm::True,
                    try_op: None,
                });
                edges.push(ExpEdge {
                    source: bid,
                    successor: Some(target_index as u32),
                    arm: Arm::False,
                    try_op: None,
                });
            }
            tag::RETURN => edges.push(ExpEdge {
                source: bid,
                successor: None,
                arm: Arm::Return,
                try_op: None,
            }),
            _ => {
                return Err((
                    Some(bid),
                    at,
                    "a block must end with JUMP, JUMP_IF_FALSE or RETURN".into(),
                ));
            }
        }
    }
    Ok((blocks, succ, edges))
}

/// The reconstructed cleanup-edge list of a body (what an executor needs to
/// find each transfer's recorded edge) without the dominator trees.
pub fn expected_edges_of(function: &Function) -> Result<Vec<ExpEdge>, CfgErr> {
    terminators(function).map(|(_, _, edges)| edges)
}

/// Entry and exit clocks of a depth-first walk of the dominator tree
/// (`idom[root] == root`; every block is reachable once `build` accepts the
/// graph): `a` dominates `b` exactly when `a`'s interval contains `b`'s.
fn tree_intervals(idom: &[usize]) -> Vec<(u32, u32)> {
    let node_count = idom.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); node_count];
    for (block, &parent) in idom.iter().enumerate() {
        if parent != block {
            children[parent].push(block);
        }
    }
    let mut interval = vec![(0u32, 0u32); node_count];
    let mut clock = 0u32;
    let mut stack: Vec<(usize, bool)> = vec![(0, false)];
    while let Some((block, done)) = stack.pop() {
        if done {
            interval[block].1 = clock;
        } else {
            interval[block].0 = clock;
            stack.push((block, true));
            stack.extend(children[block].iter().map(|&child| (child, false)));
        }
        clock += 1;
    }
    interval
}

/// The edge kinds the priority rule of [`Cfg::admitted_kinds`] can ever give
/// an arm: the structural check admits exactly these, and the semantic pass
/// then requires the one the rule derives for the edge (a conditional arm is
/// `backedge` to a dominating block, `join` when it drops owners into a
/// multi-predecessor block, `branch` otherwise; see docs/zlm/semantics.md).
pub fn possible_kinds(arm: Arm) -> &'static [EdgeKind] {
    match arm {
        Arm::Return => &[EdgeKind::Return],
        Arm::Try => &[EdgeKind::TryError],
        Arm::True | Arm::False => &[EdgeKind::Branch, EdgeKind::Join, EdgeKind::Backedge],
        Arm::Jump => &[
            EdgeKind::Fallthrough,
            EdgeKind::Join,
            EdgeKind::Break,
            EdgeKind::Continue,
            EdgeKind::Backedge,
        ],
    }
}

/// The structural CFG rules that the writer and every decode check before
/// the canonical comparison (`ZLM-SHAPE`): terminators, dense preorder block
/// IDs, the cleanup-edge list (IDs, sources, successors, a kind the arm can
/// have) and SSA dominance (an operand is defined earlier in its block or in
/// a block that dominates the use). The exact kind of each edge and its
/// recipes are the semantic pass's ([`super::check`]).
pub fn check_structure(function: &Function) -> crate::Result<()> {
    use crate::error::in_function;
    let cfg = Cfg::build(function).map_err(|(block, op, msg)| {
        let at = match (block, op) {
            (Some(block_id), Some(op_ordinal)) => format!("block {block_id} op {op_ordinal}"),
            (Some(block_id), None) => format!("block {block_id}"),
            _ => "CFG".to_string(),
        };
        let mut error = in_function(function, &at, msg);
        if let Some(site) = &mut error.site {
            site.block = block;
            site.op = op;
        }
        error
    })?;
    for block in &cfg.blocks {
        for (ordinal, op) in block.ops.iter().enumerate() {
            let here = OpRef::Flow {
                block: block.id,
                ordinal: ordinal as u32,
            };
            for operand in &op.operands {
                if let Operand::Value(def @ OpRef::Flow { .. }) = operand
                    && !cfg.dominates_op(*def, here)
                {
                    return Err(in_function(
                        function,
                        &format!("block {} op {ordinal}", block.id),
                        "an SSA operand must be defined earlier on every path (dominance)",
                    ));
                }
            }
        }
    }
    let expected = cfg.expected_edges();
    if expected.len() != function.body.edges.len() {
        return Err(in_function(
            function,
            "CFG",
            format!(
                "{} cleanup edges expected, {} present",
                expected.len(),
                function.body.edges.len()
            ),
        ));
    }
    let mut by_id: Vec<Option<&CleanupEdge>> = vec![None; expected.len()];
    for edge in &function.body.edges {
        if let Some(slot) = by_id.get_mut(edge.id as usize) {
            *slot = Some(edge);
        }
    }
    for (id, (want, have)) in expected.iter().zip(by_id).enumerate() {
        let have =
            have.ok_or_else(|| in_function(function, "CFG", "cleanup edge IDs are dense"))?;
        if have.source != want.source
            || have.successor != want.successor
            || !possible_kinds(want.arm).contains(&have.kind)
        {
            return Err(in_function(
                function,
                &format!("cleanup edge {id}"),
                "source, successor or kind differs from the derived edge list",
            ));
        }
    }
    Ok(())
}

/// Cooper–Harvey–Kennedy iterative dominators over nodes reachable from `root`.
fn dominators(
    node_count: usize,
    root: usize,
    succ: &[Vec<usize>],
    preds: &[Vec<usize>],
) -> Vec<usize> {
    const UNDEF: usize = usize::MAX;
    // Postorder numbering.
    let mut postorder = vec![UNDEF; node_count];
    let mut order = Vec::with_capacity(node_count);
    let mut seen = vec![false; node_count];
    let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
    seen[root] = true;
    while let Some((node, i)) = stack.pop() {
        if i < succ[node].len() {
            stack.push((node, i + 1));
            let successor = succ[node][i];
            if !seen[successor] {
                seen[successor] = true;
                stack.push((successor, 0));
            }
        } else {
            postorder[node] = order.len();
            order.push(node);
        }
    }
    let mut idom = vec![UNDEF; node_count];
    idom[root] = root;
    let mut changed = true;
    while changed {
        changed = false;
        for &current in order.iter().rev() {
            if current == root {
                continue;
            }
            let mut new = UNDEF;
            for &pred in &preds[current] {
                if idom[pred] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    pred
                } else {
                    let (mut finger, mut other_finger) = (pred, new);
                    while finger != other_finger {
                        while postorder[finger] < postorder[other_finger] {
                            finger = idom[finger];
                        }
                        while postorder[other_finger] < postorder[finger] {
                            other_finger = idom[other_finger];
                        }
                    }
                    finger
                };
            }
            if new != UNDEF && idom[current] != new {
                idom[current] = new;
                changed = true;
            }
        }
    }
    // Nodes that cannot reach the root in this graph (infinite loops in the
    // reverse graph) dominate only themselves.
    for (i, dominator) in idom.iter_mut().enumerate() {
        if *dominator == UNDEF {
            *dominator = i;
        }
    }
    idom
}
