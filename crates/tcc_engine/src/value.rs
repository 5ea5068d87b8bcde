//! Runtime values and the heap (facts note (b) and (e)).
//!
//! Primitive values live inline; objects, arrays, closure cells,
//! environments and closures live in [`Heap`] cells addressed by a stable
//! id, so aliasing and cycles survive a checkpoint. New cells are appended
//! (id = heap length); garbage collection turns unreachable cells into
//! holes and trims trailing holes, never renumbering a live cell.

use crate::error::{EngineError, FatalKind};
use crate::limits::Limits;
use crate::object_map::ObjectMap;
use std::sync::Arc;
use tcc_ir::Constant;

/// A runtime value.
#[derive(Debug, Clone)]
pub enum Value {
    /// `undefined`.
    Undefined,
    /// `null` (Python `None`).
    Null,
    /// A boolean.
    Bool(bool),
    /// An IEEE-754 binary64 number.
    Number(f64),
    /// An immutable string (a thin pointer keeps `Value` at 16 bytes).
    Str(Arc<String>),
    /// A reference to a heap cell.
    Ref(u32),
}

impl Value {
    /// A string value.
    pub fn string(s: &str) -> Value {
        Value::Str(Arc::new(s.to_string()))
    }

    /// Wire tag of the value as it appears in a continuation.
    pub fn tag(&self) -> &'static str {
        match self {
            Value::Undefined => "undefined",
            Value::Null => "null",
            Value::Bool(_) => "bool",
            Value::Number(_) => "number",
            Value::Str(_) => "string",
            Value::Ref(_) => "ref",
        }
    }

    /// Checkpoint equality: bitwise numbers except that NaN equals NaN,
    /// refs by id.
    pub fn same_encoding(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Undefined, Value::Undefined) | (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => {
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
            }
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Ref(a), Value::Ref(b)) => a == b,
            _ => false,
        }
    }
}

impl From<&Constant> for Value {
    fn from(c: &Constant) -> Value {
        match c {
            Constant::Undefined => Value::Undefined,
            Constant::Null => Value::Null,
            Constant::Bool(b) => Value::Bool(*b),
            Constant::Number(n) => Value::Number(*n),
            Constant::String(s) => Value::string(s),
        }
    }
}

/// One heap cell.
#[derive(Debug, Clone)]
pub enum Cell {
    /// A collected (free) cell; never referenced by a live value.
    Hole,
    /// An object; keys kept in byte order so that listings and
    /// checkpoints are deterministic.
    Object(ObjectMap<Value>),
    /// An array.
    Array(Vec<Value>),
    /// A closure variable cell (`lang.compute`).
    Var(Value),
    /// A closure environment: ids of variable cells (`lang.compute`).
    Env(Vec<u32>),
    /// A closure: function id and environment cell id (`lang.compute`).
    Closure {
        /// Function id.
        func: u32,
        /// Environment cell id.
        env: u32,
    },
}

impl Cell {
    /// Wire tag of the cell.
    pub fn tag(&self) -> &'static str {
        match self {
            Cell::Hole => "hole",
            Cell::Object(_) => "object",
            Cell::Array(_) => "array",
            Cell::Var(_) => "cell",
            Cell::Env(_) => "env",
            Cell::Closure { .. } => "closure",
        }
    }

    /// Checkpoint equality of two cells.
    pub fn same_encoding(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Hole, Cell::Hole) => true,
            (Cell::Object(a), Cell::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((ka, va), (kb, vb))| ka == kb && va.same_encoding(vb))
            }
            (Cell::Array(a), Cell::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.same_encoding(y))
            }
            (Cell::Var(a), Cell::Var(b)) => a.same_encoding(b),
            (Cell::Env(a), Cell::Env(b)) => a == b,
            (Cell::Closure { func: fa, env: ea }, Cell::Closure { func: fb, env: eb }) => {
                fa == fb && ea == eb
            }
            _ => false,
        }
    }

    /// Appends the ids this cell refers to.
    pub(crate) fn children(&self, out: &mut Vec<u32>) {
        self.for_each_child(|id| out.push(id));
    }

    /// The first child at position `from` or later that is a live id not
    /// in `marked`, and its position (a `BTreeMap` object has none: `None`).
    fn next_unmarked_child(&self, from: usize, marked: &Marks) -> Option<(u32, usize)> {
        match self {
            Cell::Hole | Cell::Object(ObjectMap::Large(_)) => None,
            Cell::Object(ObjectMap::Small(members)) => {
                first_unmarked(members.get(from..)?.iter().map(|(_, v)| v), from, marked)
            }
            Cell::Array(items) => first_unmarked(items.get(from..)?.iter(), from, marked),
            Cell::Var(v) => {
                first_unmarked(std::slice::from_ref(v).get(from..)?.iter(), from, marked)
            }
            Cell::Env(ids) => ids
                .get(from..)?
                .iter()
                .position(|&id| marked.is_unmarked(id))
                .map(|at| (ids[from + at], from + at)),
            Cell::Closure { env, .. } => {
                (from == 0 && marked.is_unmarked(*env)).then_some((*env, 0))
            }
        }
    }

    /// Calls `f` with each id this cell refers to.
    fn for_each_child(&self, mut f: impl FnMut(u32)) {
        let mut value = |v: &Value| {
            if let Value::Ref(id) = v {
                f(*id);
            }
        };
        match self {
            Cell::Hole => {}
            Cell::Object(m) => m.values().for_each(value),
            Cell::Array(a) => a.iter().for_each(value),
            Cell::Var(v) => value(v),
            Cell::Env(ids) => ids.iter().for_each(|id| f(*id)),
            Cell::Closure { env, .. } => f(*env),
        }
    }
}

/// The first reference among `values` (a cell's children from position
/// `from`) to an id in range and not in `marked`, with its position.
fn first_unmarked<'a>(
    values: impl Iterator<Item = &'a Value>,
    from: usize,
    marked: &Marks,
) -> Option<(u32, usize)> {
    for (at, v) in values.enumerate() {
        if let Value::Ref(id) = v
            && marked.is_unmarked(*id)
        {
            return Some((*id, from + at));
        }
    }
    None
}

/// A set of heap ids, one bit each.
struct Marks {
    words: Vec<u64>,
    len: usize,
}

impl Marks {
    fn new(len: usize) -> Marks {
        Marks {
            words: vec![0; len.div_ceil(64)],
            len,
        }
    }

    /// Adds `id`; false if it was present or is out of range.
    fn insert(&mut self, id: usize) -> bool {
        if id >= self.len {
            return false;
        }
        let (word, bit) = (&mut self.words[id / 64], 1u64 << (id % 64));
        let new = *word & bit == 0;
        *word |= bit;
        new
    }

    /// Whether `id` is in range and not in the set.
    fn is_unmarked(&self, id: u32) -> bool {
        let id = id as usize;
        id < self.len && self.words[id / 64] & (1u64 << (id % 64)) == 0
    }

    fn contains(&self, id: usize) -> bool {
        id < self.len && self.words[id / 64] & (1u64 << (id % 64)) != 0
    }
}

/// The heap: cells addressed by stable ids.
///
/// Its cells change only through its methods, each of which counts a
/// change ([`Heap::changes`]): an execution compares that count with the
/// one its delta base was taken at, and digests the heap only when it
/// moved (issue 42, F3; `continuation::DeltaBase`).
#[derive(Debug, Clone, Default)]
pub struct Heap {
    /// Cells by id; `Cell::Hole` marks a collected id.
    cells: Vec<Cell>,
    /// Changes made so far (not part of the heap's content: never
    /// encoded, compared or digested).
    changes: u64,
}

/// The fewest allocations between two sweeps of a running execution's heap
/// ([`Heap::next_sweep`]).
pub const MIN_SWEEP_INTERVAL: usize = 8192;

impl Heap {
    /// A heap of these cells.
    pub fn from_cells(cells: Vec<Cell>) -> Heap {
        Heap { cells, changes: 0 }
    }

    /// The cells by id.
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    /// How many changes the heap has seen: the same count means the same
    /// cells (every method that can change a cell counts, even when it
    /// leaves the cell as it was). Comparable only between states of one
    /// heap, not between two heaps.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Counts a change.
    fn changed(&mut self) {
        self.changes = self.changes.wrapping_add(1);
    }

    /// Appends a cell without the heap-cell limit (a decoder's, which
    /// bounds its input itself).
    pub fn push(&mut self, cell: Cell) {
        self.changed();
        self.cells.push(cell);
    }

    /// Drops the cells from id `len` on (a reader putting the heap back as
    /// it was).
    pub fn truncate(&mut self, len: usize) {
        if len < self.cells.len() {
            self.changed();
            self.cells.truncate(len);
        }
    }

    /// The cells to change at will (a decoder filling a heap), counted as
    /// a change.
    pub(crate) fn cells_mut(&mut self) -> &mut Vec<Cell> {
        self.changed();
        &mut self.cells
    }

    /// Room for `more` cells without moving them again.
    pub fn reserve_exact(&mut self, more: usize) {
        self.cells.reserve_exact(more);
    }

    /// Cells the heap has room for.
    pub fn capacity(&self) -> usize {
        self.cells.capacity()
    }

    /// Checkpoint equality of two heaps: as many cells, pairwise
    /// [`Cell::same_encoding`] (they write the same checkpoint text).
    pub fn same_encoding(&self, other: &Heap) -> bool {
        self.cells.len() == other.cells.len()
            && self
                .cells
                .iter()
                .zip(&other.cells)
                .all(|(x, y)| x.same_encoding(y))
    }

    /// How many values the heap's cells hold (one for a cell that holds
    /// none or one): a measure of its text's length, taken without
    /// reading the values.
    pub fn values(&self) -> usize {
        self.cells
            .iter()
            .map(|c| match c {
                Cell::Object(m) => m.len().max(1),
                Cell::Array(a) => a.len().max(1),
                Cell::Env(ids) => ids.len().max(1),
                Cell::Hole | Cell::Var(_) | Cell::Closure { .. } => 1,
            })
            .sum()
    }

    /// The heap length at which the next sweep of a running execution
    /// runs, now that `live` of this heap's ids are live: after twice as
    /// many allocations as live cells, a thirty-second of the length, or
    /// [`MIN_SWEEP_INTERVAL`], whichever is most.
    pub fn next_sweep(&self, live: usize) -> usize {
        let len = self.cells.len();
        len + (2 * live).max(len / 32).max(MIN_SWEEP_INTERVAL)
    }

    /// Appends a cell and returns its id, enforcing the heap-cell limit.
    pub fn alloc(&mut self, cell: Cell, limits: &Limits) -> Result<u32, EngineError> {
        if self.cells.len() >= limits.max_heap_cells {
            return Err(EngineError::limit(
                "heap cells",
                limits.max_heap_cells as u64,
            ));
        }
        let id = self.cells.len() as u32;
        self.push(cell);
        Ok(id)
    }

    /// The cell with this id, or a fatal error for a dangling reference.
    pub fn get(&self, id: u32) -> Result<&Cell, EngineError> {
        match self.cells.get(id as usize) {
            Some(Cell::Hole) | None => Err(EngineError::fatal(
                FatalKind::DanglingRef,
                format!("reference to missing heap cell {id}"),
            )),
            Some(c) => Ok(c),
        }
    }

    /// Mutable access to the cell with this id.
    pub fn get_mut(&mut self, id: u32) -> Result<&mut Cell, EngineError> {
        self.changed();
        match self.cells.get_mut(id as usize) {
            Some(Cell::Hole) | None => Err(EngineError::fatal(
                FatalKind::DanglingRef,
                format!("reference to missing heap cell {id}"),
            )),
            Some(c) => Ok(c),
        }
    }

    /// Marks every cell reachable from `roots`, turns the rest into holes
    /// and trims trailing holes. Ids of live cells never change. Returns
    /// the number of live cells.
    pub fn collect(&mut self, roots: impl IntoIterator<Item = u32>) -> usize {
        let live = self.sweep(roots);
        let len = self.cells.len();
        while matches!(self.cells.last(), Some(Cell::Hole)) {
            self.cells.pop();
        }
        if self.cells.len() < len {
            self.changed();
        }
        live
    }

    /// Marks every cell reachable from `roots` and turns the rest into
    /// holes, freeing what they held, without trimming: the heap keeps its
    /// length, so the ids that later allocations get are those they would
    /// have got without this sweep. Returns the number of live cells.
    ///
    /// An unreachable cell never becomes reachable again (a reference is
    /// only ever copied from a reachable place), so sweeping between two
    /// checkpoints leaves the next checkpoint's heap as it would have been:
    /// the engine does it during long steps, so that garbage made between
    /// checkpoints is freed as it accumulates (issue 42, F3).
    pub fn sweep(&mut self, roots: impl IntoIterator<Item = u32>) -> usize {
        let marked = self.mark(roots);
        let mut live = 0;
        let mut freed = false;
        for (id, cell) in self.cells.iter_mut().enumerate() {
            if marked.contains(id) {
                live += 1;
            } else if !matches!(cell, Cell::Hole) {
                *cell = Cell::Hole;
                freed = true;
            }
        }
        if freed {
            self.changed();
        }
        live
    }

    /// The ids reachable from `roots` (ids past the heap ignored).
    ///
    /// Depth first, without a list of every child waiting: `path` holds the
    /// cells being walked, each with the position of its next child to
    /// look at, so a wide array costs one entry, not one per element
    /// (marking runs during steps; its scratch memory adds to the peak).
    /// A `BTreeMap` object has no positions: its children go to `waiting`
    /// at once, as the roots do.
    fn mark(&self, roots: impl IntoIterator<Item = u32>) -> Marks {
        let mut marked = Marks::new(self.cells.len());
        let mut waiting: Vec<u32> = roots
            .into_iter()
            .filter(|&id| marked.insert(id as usize))
            .collect();
        let mut path: Vec<(u32, usize)> = Vec::new();
        while let Some(start) = waiting.pop() {
            path.push((start, 0));
            while let Some(top) = path.last_mut() {
                let cell = &self.cells[top.0 as usize];
                if let Cell::Object(ObjectMap::Large(members)) = cell {
                    for v in members.values() {
                        if let Value::Ref(id) = v
                            && marked.insert(*id as usize)
                        {
                            waiting.push(*id);
                        }
                    }
                    path.pop();
                    continue;
                }
                match cell.next_unmarked_child(top.1, &marked) {
                    Some((child, at)) => {
                        top.1 = at + 1;
                        marked.insert(child as usize);
                        path.push((child, 0));
                    }
                    None => {
                        path.pop();
                    }
                }
            }
        }
        marked
    }

    /// Checks that every reference inside the heap points at a live cell.
    pub fn check_refs(&self) -> Result<(), EngineError> {
        let mut children = Vec::new();
        for cell in &self.cells {
            children.clear();
            cell.children(&mut children);
            for &id in &children {
                self.get(id)?;
            }
            if let Cell::Env(ids) = cell {
                for &id in ids {
                    if !matches!(self.get(id)?, Cell::Var(_)) {
                        return Err(EngineError::fatal(
                            FatalKind::TypeError,
                            format!("environment slot {id} is not a variable cell"),
                        ));
                    }
                }
            }
            if let Cell::Closure { env, .. } = cell
                && !matches!(self.get(*env)?, Cell::Env(_))
            {
                return Err(EngineError::fatal(
                    FatalKind::TypeError,
                    format!("closure environment {env} is not an environment"),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn values_stay_two_words() {
        assert_eq!(std::mem::size_of::<super::Value>(), 16);
    }

    /// A cell of each kind referring to `targets` (ids past the heap
    /// included: a dangling reference is ignored by marking).
    fn cell(kind: u8, targets: &[u32]) -> Cell {
        let refs = || targets.iter().map(|&id| Value::Ref(id));
        match kind % 7 {
            0 => Cell::Hole,
            1 => Cell::Array(refs().chain([Value::Number(1.0)]).collect()),
            // Small and, past 16 members, `BTreeMap` objects.
            2 => Cell::Object(
                refs()
                    .enumerate()
                    .map(|(i, v)| (format!("k{i}"), v))
                    .collect(),
            ),
            3 => Cell::Object(
                refs()
                    .chain((0..20).map(|n| Value::Number(f64::from(n))))
                    .enumerate()
                    .map(|(i, v)| (format!("m{i:02}"), v))
                    .collect(),
            ),
            4 => Cell::Var(refs().next().unwrap_or(Value::Null)),
            5 => Cell::Env(targets.to_vec()),
            _ => match targets.first() {
                Some(&env) => Cell::Closure { func: 0, env },
                None => Cell::Hole,
            },
        }
    }

    /// Reachability the plain way: a list of every child waiting.
    fn reachable(heap: &Heap, roots: &[u32]) -> Vec<bool> {
        let mut seen = vec![false; heap.cells.len()];
        let mut work = roots.to_vec();
        let mut children = Vec::new();
        while let Some(id) = work.pop() {
            match seen.get_mut(id as usize) {
                Some(s) if !*s => *s = true,
                _ => continue,
            }
            children.clear();
            heap.cells[id as usize].children(&mut children);
            work.extend_from_slice(&children);
        }
        seen
    }

    fn heaps() -> impl Strategy<Value = (Heap, Vec<u32>)> {
        let cells = proptest::collection::vec(
            (any::<u8>(), proptest::collection::vec(0u32..45, 0..5)),
            0..40,
        );
        (cells, proptest::collection::vec(0u32..45, 0..4)).prop_map(|(cells, roots)| {
            let cells = cells.iter().map(|(k, t)| cell(*k, t)).collect();
            (Heap::from_cells(cells), roots)
        })
    }

    proptest! {
        #[test]
        fn marking_finds_what_a_plain_walk_finds((heap, roots) in heaps()) {
            let marked = heap.mark(roots.iter().copied());
            let seen = reachable(&heap, &roots);
            for (id, &s) in seen.iter().enumerate() {
                prop_assert_eq!(marked.contains(id), s, "id {}", id);
            }
        }

        /// A sweep, more cells, then the checkpoint's collection leave the
        /// heap the collection alone leaves: same length, same ids.
        #[test]
        fn a_sweep_before_a_collection_changes_nothing_it_keeps(
            (heap, roots) in heaps(),
            more in proptest::collection::vec((any::<u8>(), proptest::collection::vec(0u32..45, 0..5)), 0..8),
        ) {
            let (mut swept, mut plain) = (heap.clone(), heap);
            let live = swept.sweep(roots.iter().copied());
            prop_assert_eq!(swept.cells.len(), plain.cells.len());
            prop_assert_eq!(live, reachable(&plain, &roots).iter().filter(|&&s| s).count());
            // New cells refer only to live ones or to each other, as a
            // program's do.
            let seen = reachable(&plain, &roots);
            let old_len = plain.cells.len() as u32;
            for (kind, targets) in &more {
                let base = plain.cells.len() as u32;
                let targets: Vec<u32> = targets
                    .iter()
                    .copied()
                    .filter(|&t| seen.get(t as usize).copied().unwrap_or(t < base))
                    .filter(|&t| t < base)
                    .collect();
                let c = cell(*kind, &targets);
                swept.push(c.clone());
                plain.push(c);
            }
            // The checkpoint's roots: the same, and the newest cells (a
            // cell unreachable at the sweep is never a root again).
            let roots: Vec<u32> = roots
                .into_iter()
                .chain((old_len..plain.cells.len() as u32).rev().take(2))
                .collect();
            prop_assert_eq!(swept.collect(roots.iter().copied()), plain.collect(roots.iter().copied()));
            prop_assert!(swept.same_encoding(&plain));
        }
    }
}
