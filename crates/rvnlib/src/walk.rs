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
        if let Some(key) = callee(statement)
            && seen.insert(key)
        {
            out.push(key);
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
    if let Some(key) = &ty.struct_key
        && ty.kind == IrTypeKind::Struct
    {
        out(key);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{FunctionBuilder, types::*};

    /// One statement of every shape, each holding a call somewhere beneath it
    /// where it can hold blocks, so a walker that skips a shape misses a call.
    fn every_shape() -> (LibraryIrFunction, Vec<String>) {
        fn call(b: &mut FunctionBuilder, name: &str) {
            b.call(name, None, vec![]);
        }
        let mut f = FunctionBuilder::new("k", "k", void());
        let expected: Vec<String> = [
            "in-block",
            "direct",
            "in-then",
            "in-else",
            "in-condition",
            "in-body",
            "in-continue",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let c = f.constant(bool(), None);
        f.block(|b| call(b, "in-block"));
        let x = f.local("x", f32());
        let v = f.load(f32(), x, vec![]);
        f.store(x, vec![], v);
        f.unary(IrUnaryOp::Negate, f32(), v);
        f.binary(IrBinaryOp::Add, f32(), v, v);
        f.convert(IrConversionKind::Splat, vec(2), v);
        f.intrinsic(IrIntrinsic::Abs, Some(f32()), vec![v]);
        call(&mut f, "direct");
        f.construct(vec(2), vec![v, v]);
        let p = f.construct(vec(2), vec![v, v]);
        f.extract(
            f32(),
            p,
            vec![LibraryIrAccess::Swizzle {
                components: vec![0],
            }],
        );
        f.select(f32(), c, v, v);
        f.if_else(c, |b| call(b, "in-then"), |b| call(b, "in-else"));
        f.loop_(
            true,
            |b| {
                call(b, "in-condition");
                b.constant(bool(), None)
            },
            |b| {
                call(b, "in-body");
                b.brk();
                b.cont();
            },
            Some(&|b: &mut FunctionBuilder| {
                b.call("in-continue", None, vec![]);
            }),
        );
        f.discard();
        f.ret(None);
        (f.finish(), expected)
    }

    #[test]
    fn walker_reads_every_statement_shape_of_the_closed_list() {
        let (f, _) = every_shape();
        let mut seen = std::collections::BTreeSet::new();
        for_each_statement(&f.body, &mut |s| {
            seen.insert(s.kind());
        });
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            StatementKind::ALL.to_vec()
        );
        assert_eq!(StatementKind::ALL.len(), 18);
        // Every op is distinct and parses back.
        for kind in StatementKind::ALL {
            assert_eq!(StatementKind::from_op(kind.op()), Some(*kind));
        }
    }

    #[test]
    fn callees_finds_calls_in_every_nested_block() {
        let (f, mut expected) = every_shape();
        let mut found: Vec<&str> = callees(&f.body);
        found.sort_unstable();
        expected.sort_unstable();
        assert_eq!(found, expected);
    }

    #[test]
    fn call_graph_is_breadth_first_and_marks_unresolved_callees() {
        let mut lib = CompiledLibrary::new("L");
        for (key, calls) in [
            ("a", vec!["b", "c"]),
            ("b", vec!["c", "zz"]),
            ("c", vec!["a"]),
        ] {
            let mut f = FunctionBuilder::new(key, key, void());
            for callee in calls {
                f.call(callee, None, vec![]);
            }
            lib.ir.functions.push(f.finish());
        }
        let edges: Vec<String> = call_graph(&lib, "a")
            .unwrap()
            .iter()
            .map(|e| {
                format!(
                    "{}->{}{}",
                    e.caller,
                    e.callee,
                    if e.resolved { "" } else { "?" }
                )
            })
            .collect();
        assert_eq!(edges, ["a->b", "a->c", "b->c", "b->zz?", "c->a"]);
        assert!(call_graph(&lib, "nope").is_none());
    }
}
