//! Section 6.3: output leaves, definedness, helper summaries and the
//! acyclic call graph.
//!
//! Each stage output is split recursively into observable leaves (scalar,
//! vector, matrix and sampler values are one leaf each; arrays repeat
//! their element's leaves; records concatenate their fields'; empty
//! records have none). Leaves are numbered consecutively per stage, so a
//! whole, member or constant-index selection is one leaf range, and sets
//! of assigned leaves are kept as sorted disjoint ranges — huge arrays cost
//! no more than small ones.

use super::diagnostic::{Check, Place, Rule, Subject, VerifyError, fail};
use crate::ir::{
    Direction, Function, Handle, Module, Reference, SelectorKind, Stage, StorageKind, Type,
    TypeInner, Value,
};

/// A set of leaves: sorted, disjoint, non-adjacent half-open ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Leaves(pub Vec<(u64, u64)>);

impl Leaves {
    /// Adds the range `[start, end)`.
    pub(crate) fn insert(&mut self, start: u64, end: u64) {
        if start >= end {
            return;
        }
        let v = &mut self.0;
        // First range that ends at or after `start` (touching merges).
        let lo = v.partition_point(|&(_, e)| e < start);
        let hi = v.partition_point(|&(s, _)| s <= end);
        if lo == hi {
            v.insert(lo, (start, end));
        } else {
            let s = v[lo].0.min(start);
            let e = v[hi - 1].1.max(end);
            v.splice(lo..hi, std::iter::once((s, e)));
        }
    }

    /// Adds every range of `other`.
    pub(crate) fn union(&mut self, other: &Leaves) {
        for &(s, e) in &other.0 {
            self.insert(s, e);
        }
    }

    /// The parts of `ranges` not in `self`.
    pub(crate) fn missing(&self, ranges: &[(u64, u64)]) -> Leaves {
        let mut out = Leaves::default();
        for &(mut s, e) in ranges {
            let mut i = self.0.partition_point(|&(_, re)| re <= s);
            while s < e {
                match self.0.get(i) {
                    Some(&(rs, re)) if rs <= s => {
                        s = re.max(s);
                        i += 1;
                    }
                    Some(&(rs, _)) => {
                        let stop = rs.min(e);
                        out.insert(s, stop);
                        s = stop;
                    }
                    None => {
                        out.insert(s, e);
                        s = e;
                    }
                }
            }
        }
        out
    }

    /// The intersection.
    pub(crate) fn intersect(&self, other: &Leaves) -> Leaves {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < a.len() && j < b.len() {
            let s = a[i].0.max(b[j].0);
            let e = a[i].1.min(b[j].1);
            if s < e {
                out.push((s, e));
            }
            if a[i].1 < b[j].1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        Leaves(out)
    }
}

impl super::control::MustState for Leaves {
    fn meet(&mut self, other: &Self) -> bool {
        let m = self.intersect(other);
        if m != *self {
            *self = m;
            true
        } else {
            false
        }
    }
}

/// Most leaf ranges one dynamic-index read may expand to.
pub const MAX_DYNAMIC_READ_RANGES: usize = 1 << 16;

/// The leaf numbering of one stage's outputs.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Leaf count of every type entry (`None` while unknown).
    leaves: Vec<u64>,
    /// First leaf of each interface slot (outputs only; inputs 0).
    base: Vec<u64>,
    /// Leaf count of each interface slot (outputs only; inputs 0).
    width: Vec<u64>,
    /// All output leaves of the stage.
    pub all: Leaves,
}

impl Layout {
    /// Numbers the stage's output leaves. `order` is the type table in
    /// dependency order.
    pub(crate) fn new(module: &Module, stage: &Stage, order: &[Handle<Type>]) -> Check<Layout> {
        let mut leaves = vec![0u64; module.types.len()];
        let mut overflow = vec![false; module.types.len()];
        for &h in order {
            let (count, over) = match &module.types[h].inner {
                TypeInner::Void => (0, false),
                TypeInner::Scalar(_)
                | TypeInner::Vector { .. }
                | TypeInner::Matrix { .. }
                | TypeInner::Sampler(_) => (1, false),
                TypeInner::Array { element, length } => {
                    match leaves[element.index()].checked_mul(*length) {
                        Some(c) if !overflow[element.index()] => (c, false),
                        _ => (0, true),
                    }
                }
                TypeInner::Record(r) => {
                    let mut total: Option<u64> = Some(0);
                    for f in &r.fields {
                        if overflow[f.ty.index()] {
                            total = None;
                        }
                        total = total.and_then(|t| t.checked_add(leaves[f.ty.index()]));
                    }
                    match total {
                        Some(t) => (t, false),
                        None => (0, true),
                    }
                }
            };
            leaves[h.index()] = count;
            overflow[h.index()] = over;
        }
        let mut base = vec![0u64; stage.interface.len()];
        let mut width = vec![0u64; stage.interface.len()];
        let mut next: u64 = 0;
        let mut all = Leaves::default();
        for (slot, var) in stage.interface.iter().enumerate() {
            if var.direction != Direction::Out {
                continue;
            }
            let limit = || {
                fail(
                    Rule::Limit,
                    Subject::Interface {
                        stage: stage.kind,
                        slot,
                    },
                    var.span,
                    "the stage's outputs have more than 2^64 leaves (implementation bound)",
                )
            };
            if overflow[var.ty.index()] {
                return Err(limit());
            }
            let count = leaves[var.ty.index()];
            base[slot] = next;
            width[slot] = count;
            let end = next.checked_add(count).ok_or_else(limit)?;
            all.insert(next, end);
            next = end;
        }
        Ok(Layout {
            leaves,
            base,
            width,
            all,
        })
    }

    /// The leaves of interface slot `slot` (empty for inputs).
    pub(crate) fn slot_leaves(&self, slot: usize) -> std::ops::Range<u64> {
        let start = self.base.get(slot).copied().unwrap_or(0);
        start..start + self.width.get(slot).copied().unwrap_or(0)
    }

    /// Leaf count of a type.
    fn count(&self, ty: Handle<Type>) -> u64 {
        self.leaves[ty.index()]
    }

    /// The output slot holding `leaf`.
    pub(crate) fn slot_of(&self, stage: &Stage, leaf: u64) -> usize {
        let mut found = 0;
        for (slot, var) in stage.interface.iter().enumerate() {
            if var.direction == Direction::Out && self.base[slot] <= leaf {
                let end = self.base[slot] + self.count(var.ty);
                if leaf < end {
                    found = slot;
                }
            }
        }
        found
    }

    /// The leaf ranges a reference to an output selects. `read` selects
    /// every potentially selected leaf of dynamic indices; for a write a
    /// dynamic index selects nothing (`Ok(None)`). Inputs and other
    /// namespaces give `Ok(None)`.
    pub(crate) fn select(
        &self,
        module: &Module,
        stage: &Stage,
        r: &Reference,
        read: bool,
        place: Place,
    ) -> Check<Option<Vec<(u64, u64)>>> {
        if r.storage != StorageKind::StageIo {
            return Ok(None);
        }
        let slot = r.slot as usize;
        if stage.interface[slot].direction != Direction::Out {
            return Ok(None);
        }
        let mut pieces = vec![(self.base[slot], self.count(r.root_ty))];
        let mut current = r.root_ty;
        for (depth, selector) in r.path.iter().enumerate() {
            match (&selector.kind, &module.types[current].inner) {
                (SelectorKind::Member(name), TypeInner::Record(rec)) => {
                    let mut offset = 0;
                    for f in &rec.fields {
                        if &f.name == name {
                            break;
                        }
                        offset += self.count(f.ty);
                    }
                    let len = self.count(selector.ty);
                    for p in &mut pieces {
                        *p = (p.0 + offset, len);
                    }
                }
                (SelectorKind::Index(op), TypeInner::Array { length, .. }) => {
                    let le = self.count(selector.ty);
                    match op.value {
                        Value::Constant(c) => {
                            let i = match c.value {
                                crate::ir::Literal::Int(i) => i as u64,
                                _ => 0,
                            };
                            for p in &mut pieces {
                                *p = (p.0 + i * le, le);
                            }
                        }
                        Value::Register(_) => {
                            if !read {
                                return Ok(None);
                            }
                            if depth + 1 < r.path.len() {
                                let total = (pieces.len() as u64).saturating_mul(*length);
                                if total > MAX_DYNAMIC_READ_RANGES as u64 {
                                    return Err(fail(
                                        Rule::Limit,
                                        place.subject(),
                                        selector.span.or(r.span),
                                        format!(
                                            "this dynamic-index read of an output selects more than {MAX_DYNAMIC_READ_RANGES} separate leaf ranges (implementation bound)"
                                        ),
                                    ));
                                }
                                let mut expanded = Vec::with_capacity(total as usize);
                                for &(s, _) in &pieces {
                                    for k in 0..*length {
                                        expanded.push((s + k * le, le));
                                    }
                                }
                                pieces = expanded;
                            }
                            // Otherwise every element is selected: the
                            // pieces keep covering the whole array.
                        }
                    }
                }
                _ => {}
            }
            current = selector.ty;
        }
        Ok(Some(
            pieces
                .into_iter()
                .filter(|&(_, l)| l > 0)
                .map(|(s, l)| (s, s + l))
                .collect(),
        ))
    }
}

/// What a caller needs to know about a helper (section 6.3).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Summary {
    /// Output leaves read before being written inside the helper.
    pub prerequisites: Leaves,
    /// Output leaves assigned on every normal return.
    pub guarantees: Leaves,
    /// Whether a normal return is possible.
    pub returns: bool,
}

/// A call: callee, calling instruction and its span.
pub(crate) type CallEdge = (Handle<Function>, Place, Option<crate::ir::Span>);

/// The stage's functions with callees before callers, and each
/// function's call depth: 0 for functions that call none, otherwise one
/// more than the deepest callee. Functions of equal depth never call each
/// other, so their data-flow checks are independent.
pub(crate) struct CallOrder {
    pub order: Vec<Handle<Function>>,
    pub depth: Vec<u32>,
}

/// Rejects direct and indirect recursion (in every function, used or
/// not, reachable blocks or not) and returns the stage's functions with
/// callees before callers. `edges` holds each function's calls of
/// functions in program order (collected by the per-function phase).
pub(crate) fn call_order(stage: &Stage, edges: &[Vec<CallEdge>]) -> Check<CallOrder> {
    let n = stage.functions.len();
    let mut colour = vec![0u8; n];
    let mut depth = vec![0u32; n];
    let mut order = Vec::with_capacity(n);
    for root in 0..n {
        if colour[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        colour[root] = 1;
        while let Some(&mut (f, ref mut next)) = stack.last_mut() {
            if let Some(&(c, place, span)) = edges[f].get(*next) {
                *next += 1;
                match colour[c.index()] {
                    0 => {
                        colour[c.index()] = 1;
                        stack.push((c.index(), 0));
                    }
                    1 => {
                        let start = stack.iter().position(|&(g, _)| g == c.index()).unwrap_or(0);
                        let mut cycle: Vec<String> = stack[start..]
                            .iter()
                            .map(|&(g, _)| format!("{:?}", stage.functions.as_slice()[g].name))
                            .collect();
                        cycle.push(format!("{:?}", stage.functions[c].name));
                        return Err(recursion(place, span, &cycle));
                    }
                    _ => {}
                }
            } else {
                colour[f] = 2;
                depth[f] = edges[f]
                    .iter()
                    .map(|&(c, _, _)| depth[c.index()].saturating_add(1))
                    .max()
                    .unwrap_or(0);
                order.push(Handle::from_index(f as u32));
                stack.pop();
            }
        }
    }
    Ok(CallOrder { order, depth })
}

fn recursion(place: Place, span: Option<crate::ir::Span>, cycle: &[String]) -> VerifyError {
    fail(
        Rule::Output,
        place.subject(),
        span,
        format!(
            "recursive call {} (direct and indirect recursion are rejected, even in unused functions and unreachable blocks)",
            cycle.join(" -> ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::Leaves;
    use crate::verify::control::MustState;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn model(l: &Leaves) -> BTreeSet<u64> {
        l.0.iter().flat_map(|&(s, e)| s..e).collect()
    }

    fn build(ranges: &[(u64, u64)]) -> Leaves {
        let mut l = Leaves::default();
        for &(s, len) in ranges {
            l.insert(s, s + len);
        }
        l
    }

    fn canonical(l: &Leaves) -> bool {
        l.0.iter().all(|&(s, e)| s < e) && l.0.windows(2).all(|w| w[0].1 < w[1].0)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        /// The range-set operations agree with a set of individual leaves.
        #[test]
        fn leaf_ranges_match_a_leaf_set(
            a in prop::collection::vec((0u64..64, 0u64..9), 0..8),
            b in prop::collection::vec((0u64..64, 0u64..9), 0..8),
        ) {
            let (la, lb) = (build(&a), build(&b));
            prop_assert!(canonical(&la) && canonical(&lb));
            let (ma, mb) = (model(&la), model(&lb));
            let i = la.intersect(&lb);
            prop_assert!(canonical(&i));
            prop_assert_eq!(model(&i), ma.intersection(&mb).copied().collect::<BTreeSet<_>>());
            let d = la.missing(&lb.0);
            prop_assert!(canonical(&d));
            prop_assert_eq!(model(&d), mb.difference(&ma).copied().collect::<BTreeSet<_>>());
            let mut u = la.clone();
            u.union(&lb);
            prop_assert!(canonical(&u));
            prop_assert_eq!(model(&u), ma.union(&mb).copied().collect::<BTreeSet<_>>());
            let mut m = la.clone();
            let changed = m.meet(&lb);
            prop_assert_eq!(changed, m != la);
            prop_assert_eq!(m, i);
        }
    }
}
