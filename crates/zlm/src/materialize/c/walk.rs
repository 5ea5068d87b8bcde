//! The walk every native lowering of a checked module shares (the portable
//! C engine here, the LLVM engines in `zlm_llvm`): which functions a scope
//! selects, their emitted symbols and source comments, the refusal shape,
//! and the step accounting's segments and prepaid blocks. One definition,
//! so both engines select, name and count exactly alike.

use super::unit::{Refusal, Scope};
use crate::check::{Checked, Resolved};
use crate::model::*;
use std::collections::{BTreeMap, BTreeSet};

/// A function: (declaration index, function index).
pub type At = (usize, usize);

fn ident(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// The function at `at`.
pub fn function<'m>(r: &Resolved<'m>, at: At) -> &'m Function {
    &r.module.declarations[at.0].functions[at.1]
}

/// The emitted symbol of a function: `zf_<Decl>_<function>_<first 16 hex
/// digits of the function-signature ID>`; a provider's function (in a
/// package) also carries its module: `zf_<module>__<Decl>_…`.
pub fn symbol(r: &Resolved<'_>, at: At) -> String {
    let d = &r.module.declarations[at.0];
    let sig = r.ids.decls[at.0].functions[at.1].sig;
    let module = if r.is_local(at.0) {
        String::new()
    } else {
        format!("{}__", ident(r.module_of(at.0)))
    };
    format!(
        "zf_{module}{}_{}_{}",
        ident(&d.name),
        ident(&d.functions[at.1].name),
        &crate::hash::to_hex(&sig)[..16]
    )
}

/// A refusal naming function `at` (and a block and operation when given).
pub fn refuse(
    r: &Resolved<'_>,
    at: At,
    b: Option<u32>,
    o: Option<u32>,
    msg: impl Into<String>,
) -> Refusal {
    Refusal {
        function: Some(r.fn_name(at.0, at.1)),
        block: b,
        op: o,
        message: msg.into(),
    }
}

/// The functions a body or contract of `at` calls (within the module, or
/// the package).
pub fn callees(r: &Resolved<'_>, at: At) -> Vec<At> {
    let f = function(r, at);
    let mut out = Vec::new();
    for b in &f.body.blocks {
        for op in &b.ops {
            if let (tag::CALL, Aux::Func(sig)) = (op.tag, &op.aux0)
                && let Some(&c) = r.funcs.get(sig)
            {
                out.push(c);
            }
        }
    }
    for e in f.requires.iter().chain(&f.ensures) {
        for op in &e.ops {
            if op.tag == 3
                && op.aux0 == 0
                && let Some(c) = op.reference.and_then(|s| r.funcs.get(&s).copied())
            {
                out.push(c);
            }
        }
    }
    out
}

/// The unique function of the root module named `entry` (`Decl.function`
/// or a bare name).
pub fn find(r: &Resolved<'_>, entry: &str) -> Result<At, Refusal> {
    let mut hits = Vec::new();
    for (di, d) in r.module.declarations.iter().enumerate().take(r.local) {
        for (fi, f) in d.functions.iter().enumerate() {
            if format!("{}.{}", d.name, f.name) == entry || f.name == entry {
                hits.push((di, fi));
            }
        }
    }
    match hits.as_slice() {
        [one] => Ok(*one),
        _ => Err(Refusal {
            function: None,
            block: None,
            op: None,
            message: format!("no unique function named {entry}"),
        }),
    }
}

/// Refuses a module whose imports were not resolved against providers, and
/// one that calls into or names members of other modules (only its package
/// can be emitted).
pub fn imports(checked: &Checked) -> Result<(), Refusal> {
    let whole = |message: &str| Refusal {
        function: None,
        block: None,
        op: None,
        message: message.into(),
    };
    if !checked.imports_resolved() {
        return Err(whole(
            "the module's imports were not resolved against their providers",
        ));
    }
    if checked.names_other_modules() {
        return Err(whole(
            "the module calls into or names members of other modules: emit its package (the module with its providers)",
        ));
    }
    Ok(())
}

/// The functions `scope` selects: every function of the root module and
/// every provider function they reach, or the named entries and everything
/// their bodies and contracts can call, in canonical declaration order.
pub fn select(r: &Resolved<'_>, scope: &Scope) -> Result<BTreeSet<At>, Refusal> {
    let mut set = BTreeSet::new();
    let mut todo = Vec::new();
    let names: &[String] = match scope {
        Scope::Module => {
            for (di, d) in r.module.declarations.iter().enumerate().take(r.local) {
                for fi in 0..d.functions.len() {
                    todo.push((di, fi));
                }
            }
            &[]
        }
        Scope::Entry(n) => std::slice::from_ref(n),
        Scope::Entries(ns) => ns.as_slice(),
    };
    for n in names {
        todo.push(find(r, n)?);
    }
    while let Some(at) = todo.pop() {
        if set.insert(at) {
            todo.extend(callees(r, at));
        }
    }
    Ok(set)
}

/// The source declaration of `at`, for the comment above its emitted code.
pub fn source(r: &Resolved<'_>, at: At) -> String {
    let d = &r.module.declarations[at.0];
    let f = function(r, at);
    let mut ps: Vec<&Param> = f.params.iter().collect();
    ps.sort_by_key(|p| p.ordinal);
    let params: Vec<String> = ps
        .iter()
        .map(|p| format!("{}: {}", p.name, crate::interp::type_name(r, &p.ty)))
        .collect();
    let effects: Vec<&str> = f.effects.iter().map(|e| e.text()).collect();
    format!(
        "{} {} {}.{}({}) -> {} effects [{}] (module {})",
        f.callable.text(),
        f.receiver.text(),
        d.name,
        f.name,
        params.join(", "),
        crate::interp::type_name(r, &f.result),
        effects.join(", "),
        r.module_of(at.0)
    )
}

/// Operations after which a block's step accounting starts a new segment:
/// calls (the callee spends steps) and tries (the error path leaves).
pub fn ends_segment(t: u32) -> bool {
    matches!(t, tag::CALL | tag::RESULT_TRY | tag::RESULT_TRY_RICH)
}

/// The step prepayment of one function (docs/zlm/c-materializer.md,
/// "Steps"): a block (not the entry, without segment ends) whose only
/// predecessor is an uncovered block without recipes on its edges is
/// *covered*: that predecessor's last check also pays for it.
pub struct Prepaid {
    /// Each branch target's predecessors.
    pub preds: BTreeMap<u32, BTreeSet<u32>>,
    /// The covered blocks.
    pub covered: BTreeSet<u32>,
    /// Per predecessor, the largest covered successor's cost its last check adds.
    pub extra: BTreeMap<u32, usize>,
    /// Two-block `while` loops, header → body: a header without calls,
    /// tries or recipes that ends in JUMP_IF_FALSE, whose true arm (the
    /// next block) is covered, has no recipes and jumps straight back. Its
    /// fast entry checks the cost of two iterations at once and runs an
    /// unrolled copy (header, body, header) without a check in between.
    pub unroll: BTreeMap<u32, u32>,
}

/// Decides the prepayment of `f`, whose blocks are `blocks` in ID order.
pub fn prepayment(f: &Function, blocks: &[&Block]) -> Prepaid {
    let mut preds: BTreeMap<u32, BTreeSet<u32>> = BTreeMap::new();
    for block in blocks {
        if let Some(op) = block.ops.last() {
            let mut add = |t: u32| {
                preds.entry(t).or_default().insert(block.id);
            };
            match (op.tag, op.operands.as_slice()) {
                (tag::JUMP, [Operand::Block(t)]) => add(*t),
                (tag::JUMP_IF_FALSE, [_, Operand::Block(t)]) => {
                    add(block.id + 1);
                    add(*t);
                }
                _ => {}
            }
        }
    }
    let has_recipes = |b: u32| {
        f.body
            .edges
            .iter()
            .any(|e| e.source == b && !e.drops.is_empty())
    };
    let mut covered = BTreeSet::new();
    let mut extra: BTreeMap<u32, usize> = BTreeMap::new();
    // Block IDs are a depth-first preorder, so the predecessor's status is
    // known first.
    for block in blocks {
        let b = block.id;
        let Some(ps) = preds.get(&b) else { continue };
        if b == 0 || ps.len() != 1 || block.ops.iter().any(|o| ends_segment(o.tag)) {
            continue;
        }
        let Some(&p) = ps.iter().next() else { continue };
        // Recipes on the way tick on their own: no prepayment across them.
        if p == b || covered.contains(&p) || has_recipes(p) {
            continue;
        }
        covered.insert(b);
        let e = extra.entry(p).or_default();
        *e = (*e).max(block.ops.len());
    }
    let mut unroll = BTreeMap::new();
    for block in blocks {
        let (h, body) = (block.id, block.id + 1);
        let header_ok = !covered.contains(&h)
            && !has_recipes(h)
            && !block.ops.iter().any(|o| ends_segment(o.tag))
            && matches!(block.ops.last(), Some(op) if op.tag == tag::JUMP_IF_FALSE);
        let Some(b) = blocks.iter().find(|x| x.id == body) else {
            continue;
        };
        let body_ok = covered.contains(&body)
            && !has_recipes(body)
            && matches!(
                b.ops.last(),
                Some(op) if op.tag == tag::JUMP && op.operands == [Operand::Block(h)]
            );
        if header_ok && body_ok {
            unroll.insert(h, body);
        }
    }
    Prepaid {
        preds,
        covered,
        extra,
        unroll,
    }
}
