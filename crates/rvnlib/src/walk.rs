//! Walking a body: every statement, every nested block, every callee.
//!
//! Each `match` here names all eighteen shapes with no wildcard arm, so adding
//! a shape to [`LibraryIrStatement`] fails to compile until the walker learns
//! it; a test also checks the walker against [`StatementKind::ALL`].

use crate::ir::*;
use crate::library::CompiledLibrary;
use std::collections::{HashMap, HashSet, VecDeque};

/// The blocks nested directly inside a statement, in execution-text order
/// (`Then`, `Else`; loop `Condition`, `Body`, `Continue`; a nested block itself).
pub fn child_blocks(statement: &LibraryIrStatement) -> Vec<&LibraryIrBlock> {
    match statement {
        LibraryIrStatement::Block(block) => vec![block],
        LibraryIrStatement::If {
            then, otherwise, ..
        } => {
            let mut blocks = vec![then];
            blocks.extend(otherwise.iter());
            blocks
        }
        LibraryIrStatement::Loop {
            condition,
            body,
            continuing,
            ..
        } => {
            let mut blocks = vec![condition, body];
            blocks.extend(continuing.iter());
            blocks
        }
        LibraryIrStatement::Constant { .. }
        | LibraryIrStatement::Load { .. }
        | LibraryIrStatement::Store { .. }
        | LibraryIrStatement::Unary { .. }
        | LibraryIrStatement::Binary { .. }
        | LibraryIrStatement::Convert { .. }
        | LibraryIrStatement::Intrinsic { .. }
        | LibraryIrStatement::Call { .. }
        | LibraryIrStatement::Construct { .. }
        | LibraryIrStatement::Extract { .. }
        | LibraryIrStatement::Select { .. }
        | LibraryIrStatement::Return { .. }
        | LibraryIrStatement::Break
        | LibraryIrStatement::Continue
        | LibraryIrStatement::Discard => Vec::new(),
    }
}

/// Visits every statement of `block` in pre-order, descending into every nested block.
pub fn for_each_statement<'a>(
    block: &'a LibraryIrBlock,
    visit: &mut impl FnMut(&'a LibraryIrStatement),
) {
    for statement in &block.statements {
        visit(statement);
        for child in child_blocks(statement) {
            for_each_statement(child, visit);
        }
    }
}

/// The callee key of a statement, if it is a call.
pub fn callee(statement: &LibraryIrStatement) -> Option<&str> {
    match statement {
        LibraryIrStatement::Call { function, .. } => Some(function),
        LibraryIrStatement::Block(_)
        | LibraryIrStatement::Constant { .. }
        | LibraryIrStatement::Load { .. }
        | LibraryIrStatement::Store { .. }
        | LibraryIrStatement::Unary { .. }
        | LibraryIrStatement::Binary { .. }
        | LibraryIrStatement::Convert { .. }
        | LibraryIrStatement::Intrinsic { .. }
        | LibraryIrStatement::Construct { .. }
        | LibraryIrStatement::Extract { .. }
        | LibraryIrStatement::Select { .. }
        | LibraryIrStatement::If { .. }
        | LibraryIrStatement::Loop { .. }
        | LibraryIrStatement::Return { .. }
        | LibraryIrStatement::Break
        | LibraryIrStatement::Continue
        | LibraryIrStatement::Discard => None,
    }
}

/// What a body calls: each callee key once, in order of first appearance.
/// This is the question a linker asks.
pub fn callees(body: &LibraryIrBlock) -> Vec<&str> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for_each_statement(body, &mut |statement| {
        if let Some(key) = callee(statement) {
            if seen.insert(key) {
                out.push(key);
            }
        }
    });
    out
}

/// The roots a statement addresses: place roots of loads and stores, and
/// roots passed by reference to a call.
pub fn roots(statement: &LibraryIrStatement) -> Vec<i32> {
    match statement {
        LibraryIrStatement::Load { place, .. } | LibraryIrStatement::Store { place, .. } => {
            vec![place.root]
        }
        LibraryIrStatement::Call { arguments, .. } => {
            arguments.iter().filter_map(|a| a.reference).collect()
        }
        LibraryIrStatement::Block(_)
        | LibraryIrStatement::Constant { .. }
        | LibraryIrStatement::Unary { .. }
        | LibraryIrStatement::Binary { .. }
        | LibraryIrStatement::Convert { .. }
        | LibraryIrStatement::Intrinsic { .. }
        | LibraryIrStatement::Construct { .. }
        | LibraryIrStatement::Extract { .. }
        | LibraryIrStatement::Select { .. }
        | LibraryIrStatement::If { .. }
        | LibraryIrStatement::Loop { .. }
        | LibraryIrStatement::Return { .. }
        | LibraryIrStatement::Break
        | LibraryIrStatement::Continue
        | LibraryIrStatement::Discard => Vec::new(),
    }
}

/// Every struct key a type mentions (itself, array elements, sampled types).
pub fn type_struct_keys<'a>(ty: &'a LibraryIrTypeReference, out: &mut impl FnMut(&'a str)) {
    if let Some(key) = &ty.struct_key {
        if ty.kind == IrTypeKind::Struct {
            out(key);
        }
    }
    if let Some(element) = &ty.element {
        type_struct_keys(element, out);
    }
    if let Some(sampled) = &ty.sampled {
        type_struct_keys(sampled, out);
    }
}

/// Every struct key a function's signature, storage or value table mentions,
/// each once, in order of first appearance.
pub fn function_struct_keys<'a>(function: &'a LibraryIrFunction) -> Vec<&'a str> {
    let mut seen: HashSet<&'a str> = HashSet::new();
    let mut out: Vec<&'a str> = Vec::new();
    let mut add = |key: &'a str| {
        if seen.insert(key) {
            out.push(key);
        }
    };
    type_struct_keys(&function.return_type, &mut add);
    for v in function.parameters.iter().chain(&function.locals) {
        type_struct_keys(&v.ty, &mut add);
    }
    for v in &function.values {
        type_struct_keys(&v.ty, &mut add);
    }
    out
}

/// One edge of a call graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallEdge {
    /// Caller key.
    pub caller: String,
    /// Callee key.
    pub callee: String,
    /// False when no function in the library has the callee's key.
    pub resolved: bool,
}

/// The call graph reachable from `root`, breadth-first, each edge once, in a
/// deterministic order. `None` when `root` is not a function of the library.
pub fn call_graph(library: &CompiledLibrary, root: &str) -> Option<Vec<CallEdge>> {
    let by_key: HashMap<&str, &LibraryIrFunction> = library
        .ir
        .functions
        .iter()
        .map(|f| (f.key.as_str(), f))
        .collect();
    by_key.get(root)?;
    let mut edges = Vec::new();
    let mut queued: HashSet<&str> = HashSet::from([root]);
    let mut queue = VecDeque::from([root]);
    while let Some(key) = queue.pop_front() {
        let Some(function) = by_key.get(key) else {
            continue;
        };
        for callee in callees(&function.body) {
            let resolved = by_key.contains_key(callee);
            edges.push(CallEdge {
                caller: key.to_string(),
                callee: callee.to_string(),
                resolved,
            });
            if resolved && queued.insert(callee) {
                queue.push_back(callee);
            }
        }
    }
    Some(edges)
}
