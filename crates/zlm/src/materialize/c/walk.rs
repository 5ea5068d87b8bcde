//! The walk every native lowering of a checked module shares (the portable
//! C engine here, the LLVM engines in `zlm_llvm`): which functions a scope
//! selects, their emitted symbols and source comments, the refusal shape,
//! and the step accounting's segments and prepaid blocks. One definition,
//! so both engines select, name and count exactly alike.

use super::unit::{Refusal, Scope};
use crate::check::{Checked, Resolved};
use crate::model::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

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

/// Edge arms, as the lowerings key a terminator's or try's recorded edge.
pub const ARM_JUMP: u8 = 0;
pub const ARM_TRUE: u8 = 1;
pub const ARM_FALSE: u8 = 2;
pub const ARM_RETURN: u8 = 3;
pub const ARM_TRY: u8 = 4;

/// One field on an owned path's way down from its root.
pub struct FieldStep<'m> {
    /// The variant the field belongs to, when it is a variant's.
    pub variant: Option<usize>,
    pub field: &'m Field,
    /// The type holding the field.
    pub base: Type,
}

/// What both lowerings know of one owned path before they lay it out.
pub struct PathPlan<'m> {
    /// Index of its root path.
    pub root: usize,
    /// Below (or at) a root bound to a loan.
    pub borrowed: bool,
    /// The path's value is not one word.
    pub agg: bool,
    /// An owner root in custody (the interpreter's `owner`).
    pub owner: bool,
    /// Drop-log name (`l1.right`).
    pub name: String,
    /// The fields from the root down.
    pub steps: Vec<FieldStep<'m>>,
}

/// The frame of one function as both lowerings see it: blocks in ID order,
/// owned paths, temporary owners, runtime slots and recorded edges.
pub struct Frame<'m> {
    pub blocks: Vec<&'m Block>,
    pub path_ix: HashMap<&'m PathKey, usize>,
    pub paths: Vec<PathPlan<'m>>,
    /// Temporary owner path of each flow op's result.
    pub temps: HashMap<(u32, u32), usize>,
    /// Path index per runtime slot (the receiver, then parameters).
    pub slots: Vec<Option<usize>>,
    /// The recorded edge of each (source block, arm, try op).
    pub edge_of: HashMap<(u32, u8, u32), &'m CleanupEdge>,
    /// The frame keeps a custody list (it holds non-word paths).
    pub cust: bool,
}

/// Plans the frame of `at`; `receiver_bound` says whether its receiver
/// takes a runtime slot. Refuses what neither lowering covers.
pub fn frame<'m>(r: &Resolved<'m>, at: At, receiver_bound: bool) -> Result<Frame<'m>, Refusal> {
    use super::types::{is_word, pointee};
    let f = function(r, at);
    let no = |msg: String| refuse(r, at, None, None, msg);
    let mut blocks: Vec<&Block> = f.body.blocks.iter().collect();
    blocks.sort_by_key(|b| b.id);
    let path_ix: HashMap<&PathKey, usize> = f
        .body
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| (&p.key, i))
        .collect();
    // Roots bound to a loan (shared/exclusive receivers, Ref/Mut
    // parameters) hold the address of the target's storage. A
    // `Slice<Byte>` parameter is a loan too, but its value is the window
    // itself (array address and bounds), held in the frame like a
    // transient slice local.
    let borrow_root = |root: &Root| match root {
        Root::Receiver => matches!(f.receiver, ReceiverKind::Shared | ReceiverKind::Exclusive),
        Root::Param(p) => f
            .params
            .iter()
            .find(|x| x.ordinal == *p)
            .is_some_and(|x| x.ty.is_borrow() && !is_word(&x.ty) && x.ty != Type::SliceByte),
        _ => false,
    };
    let mut paths = Vec::new();
    for p in &f.body.paths {
        let borrowed = borrow_root(&p.key.root);
        if borrowed {
            let target = match &p.key.root {
                Root::Param(o) => f.params.iter().find(|x| x.ordinal == *o).map(|x| &x.ty),
                _ => None,
            };
            if let Some(t) = target
                && pointee(t).is_none()
            {
                return Err(no(format!(
                    "parameter type {}",
                    crate::interp::type_name(r, t)
                )));
            }
        }
        let agg = !is_word(&p.ty);
        let root = PathKey {
            root: p.key.root.clone(),
            fields: vec![],
        };
        let Some(&ri) = path_ix.get(&root) else {
            return Err(no("owned path without its root".into()));
        };
        let mut name = crate::interp::root_name(&p.key.root);
        let mut base = f.body.paths[ri].ty.clone();
        let mut steps = Vec::new();
        for fid in &p.key.fields {
            let Some((_, variant, field)) = r.field(fid) else {
                return Err(no("owned path through an unknown field".into()));
            };
            name.push('.');
            name.push_str(&field.name);
            let next = field.ty.clone();
            steps.push(FieldStep {
                variant,
                field,
                base: std::mem::replace(&mut base, next),
            });
        }
        if matches!(p.key.root, Root::Temp(_)) && p.key.fields.is_empty() && !agg {
            return Err(no("a temporary owner of a word type".into()));
        }
        paths.push(PathPlan {
            root: ri,
            borrowed,
            agg,
            owner: p.key.fields.is_empty() && !borrowed && !r.is_copy(&p.ty) && !p.ty.is_borrow(),
            name,
            steps,
        });
    }
    let mut temps = HashMap::new();
    for (i, p) in f.body.paths.iter().enumerate() {
        if let (Root::Temp(OpRef::Flow { block, ordinal }), true) =
            (&p.key.root, p.key.fields.is_empty())
        {
            temps.insert((*block, *ordinal), i);
        }
    }
    let mut ps: Vec<&Param> = f.params.iter().collect();
    ps.sort_by_key(|p| p.ordinal);
    let mut roots: Vec<Root> = Vec::new();
    if receiver_bound {
        roots.push(Root::Receiver);
    }
    roots.extend(ps.iter().map(|p| Root::Param(p.ordinal)));
    let slots = roots
        .into_iter()
        .map(|root| {
            path_ix
                .get(&PathKey {
                    root,
                    fields: vec![],
                })
                .copied()
        })
        .collect();
    // The checked edge list in dense-ID order names each terminator's
    // and try's recorded edge (as the interpreter finds them).
    let derived =
        crate::check::cfg::expected_edges_of(f).map_err(|_| no("cleanup edges".into()))?;
    let mut recorded: Vec<&CleanupEdge> = f.body.edges.iter().collect();
    recorded.sort_by_key(|e| e.id);
    let mut edge_of = HashMap::new();
    for (id, e) in derived.iter().enumerate() {
        use crate::check::cfg::Arm;
        let arm = match e.arm {
            Arm::Jump => ARM_JUMP,
            Arm::True => ARM_TRUE,
            Arm::False => ARM_FALSE,
            Arm::Return => ARM_RETURN,
            Arm::Try => ARM_TRY,
        };
        let Some(rec) = recorded.get(id) else {
            return Err(no("cleanup edges".into()));
        };
        edge_of.insert((e.source, arm, e.try_op.unwrap_or(0)), *rec);
    }
    for e in &f.body.edges {
        for d in &e.drops {
            let ok = d.tag == tag::PLACE_DROP
                && matches!(d.operands.first(), Some(Operand::Place(k)) if path_ix.contains_key(k));
            if !ok {
                return Err(refuse(
                    r,
                    at,
                    Some(e.source),
                    None,
                    "cleanup recipe other than a place drop",
                ));
            }
        }
    }
    let cust = paths.iter().any(|p| p.agg && !p.borrowed);
    if cust && f.body.paths.len() >= usize::from(u16::MAX) {
        return Err(no("more owned paths than the custody list holds".into()));
    }
    Ok(Frame {
        blocks,
        path_ix,
        paths,
        temps,
        slots,
        edge_of,
        cust,
    })
}
