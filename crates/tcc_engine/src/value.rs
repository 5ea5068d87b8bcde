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

    fn children(&self, out: &mut Vec<u32>) {
        let push_value = |v: &Value, out: &mut Vec<u32>| {
            if let Value::Ref(id) = v {
                out.push(*id);
            }
        };
        match self {
            Cell::Hole => {}
            Cell::Object(m) => m.values().for_each(|v| push_value(v, out)),
            Cell::Array(a) => a.iter().for_each(|v| push_value(v, out)),
            Cell::Var(v) => push_value(v, out),
            Cell::Env(ids) => out.extend_from_slice(ids),
            Cell::Closure { env, .. } => out.push(*env),
        }
    }
}

/// The heap: cells addressed by stable ids.
#[derive(Debug, Clone, Default)]
pub struct Heap {
    /// Cells by id; `Cell::Hole` marks a collected id.
    pub cells: Vec<Cell>,
}

impl Heap {
    /// Appends a cell and returns its id, enforcing the heap-cell limit.
    pub fn alloc(&mut self, cell: Cell, limits: &Limits) -> Result<u32, EngineError> {
        if self.cells.len() >= limits.max_heap_cells {
            return Err(EngineError::limit(
                "heap cells",
                limits.max_heap_cells as u64,
            ));
        }
        let id = self.cells.len() as u32;
        self.cells.push(cell);
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
        match self.cells.get_mut(id as usize) {
            Some(Cell::Hole) | None => Err(EngineError::fatal(
                FatalKind::DanglingRef,
                format!("reference to missing heap cell {id}"),
            )),
            Some(c) => Ok(c),
        }
    }

    /// Marks every cell reachable from `roots`, turns the rest into holes
    /// and trims trailing holes. Ids of live cells never change.
    pub fn collect(&mut self, roots: impl IntoIterator<Item = u32>) {
        let mut marked = vec![false; self.cells.len()];
        let mut work: Vec<u32> = roots.into_iter().collect();
        let mut children = Vec::new();
        while let Some(id) = work.pop() {
            let Some(slot) = marked.get_mut(id as usize) else {
                continue;
            };
            if *slot {
                continue;
            }
            *slot = true;
            children.clear();
            self.cells[id as usize].children(&mut children);
            work.extend_from_slice(&children);
        }
        for (cell, live) in self.cells.iter_mut().zip(&marked) {
            if !live {
                *cell = Cell::Hole;
            }
        }
        while matches!(self.cells.last(), Some(Cell::Hole)) {
            self.cells.pop();
        }
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
    #[test]
    fn values_stay_two_words() {
        assert_eq!(std::mem::size_of::<super::Value>(), 16);
    }
}
