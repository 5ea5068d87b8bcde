//! Logical-model validation shared by the writer and the decoder: admitted
//! kinds, owned-range shapes, and the per-tag operand/result/auxiliary
//! shapes of the typed-operation and contract-operation tables.
//!
//! The structural typing of every operation and the owner records
//! ([`crate::check::typing`]) and the block structure, cleanup-edge list and
//! SSA dominance ([`crate::check::cfg::check_structure`]) live in the checker
//! and run from here, before the canonical comparison; ownership dataflow,
//! loans and the full typing rules follow in [`crate::check`].

use crate::check::typing;
use crate::error::{Error, Result, code};
use crate::ids::{FnIndex, Identities};
use crate::model::*;

/// Maximum type nesting depth (docs/zlm/format.md, limits).
pub const MAX_TYPE_DEPTH: u32 = 64;

/// Logical auxiliary kinds fixed by each typed-operation tag, or `None` for
/// tags that are not canonical in schema 1.9.
pub fn aux_kinds(tag: u32) -> Option<(u32, u32)> {
    use crate::model::tag::*;
    // Kinds: 0 absent, 1 literal, 2 type, 3 decl, 4 field, 5 func, 6 catalog
    // func, 7 effect set, 8 loan, 9 path, 10 edge, 11 op, 12 block, 13 variant.
    Some(match tag {
        CONST | NEG | ADD | SUB | MUL | DIV | EQ | LT => (0, 0),
        LOAD_LOCAL | STORE_LOCAL => (9, 0),
        CALL => (5, 7),
        JUMP | JUMP_IF_FALSE => (12, 0),
        ASSERT_TRUE | ASSERT_EQ | RETURN | REM | NE | LE | GT | GE | BIT_AND | BIT_OR | BIT_XOR
        | NOT_BOOL => (0, 0),
        ENUM_CONST | ENUM_IS_VARIANT => (13, 0),
        RESULT_TRY => (2, 10),
        UNIT_VALUE => (0, 0),
        AGGREGATE_CONSTRUCT => (3, 1),
        FIELD_COPY | FIELD_MOVE => (4, 0),
        PLACE_MOVE | PLACE_DROP => (9, 0),
        BORROW_SHARED | BORROW_MUT => (8, 0),
        BORROW_SLICE_BYTE => (8, 6),
        RESULT_OK_RICH | RESULT_ERR_RICH => (2, 1),
        RESULT_TRY_RICH => (2, 10),
        INTRINSIC_CALL => (6, 7),
        REPLACE_COMMIT => (9, 0),
        SHIFT_LEFT | SHIFT_RIGHT => (0, 0),
        VARIANT_CONSTRUCT => (13, 1),
        BYTE_BUILDER_FINISH => (0, 0),
        _ => return None,
    })
}

/// Operand kinds: V value, P place, C constant, B block, and `X` value or place.
#[derive(Clone, Copy, PartialEq, Eq)]
enum K {
    V,
    P,
    C,
    B,
    X,
}

/// Fixed operand shapes and whether the tag has a result; `None` for
/// variable arity tags (checked separately).
fn shape(tag: u32) -> Option<(&'static [K], bool)> {
    use crate::model::tag::*;
    use K::*;
    Some(match tag {
        CONST => (&[C], true),
        NEG | NOT_BOOL => (&[V], true),
        ADD | SUB | MUL | DIV | REM | EQ | LT | NE | LE | GT | GE | BIT_AND | BIT_OR | BIT_XOR
        | SHIFT_LEFT | SHIFT_RIGHT => (&[V, V], true),
        LOAD_LOCAL => (&[P], true),
        STORE_LOCAL => (&[P, V], false),
        JUMP => (&[B], false),
        JUMP_IF_FALSE => (&[V, B], false),
        ASSERT_TRUE | RETURN => (&[V], false),
        ASSERT_EQ => (&[V, V], false),
        ENUM_CONST | UNIT_VALUE => (&[], true),
        ENUM_IS_VARIANT => (&[X], true),
        RESULT_TRY | RESULT_TRY_RICH | RESULT_OK_RICH | RESULT_ERR_RICH => (&[V], true),
        FIELD_COPY | FIELD_MOVE | PLACE_MOVE | BYTE_BUILDER_FINISH => (&[P], true),
        PLACE_DROP => (&[P], false),
        BORROW_SHARED | BORROW_MUT => (&[X], true),
        BORROW_SLICE_BYTE => (&[X, V, V], true),
        REPLACE_COMMIT => (&[P, V], false),
        _ => return None,
    })
}

fn err(f: &Function, at: &str, msg: impl std::fmt::Display) -> Error {
    crate::error::in_function(f, at, msg)
}

/// Checks every admitted-shape rule of the logical module.
pub fn check(m: &Module, ids: &Identities) -> Result<()> {
    if m.package.is_empty() || m.name.is_empty() {
        return Err(Error::new(
            code::MODEL,
            "package and module names must be nonempty",
        ));
    }
    crate::names::check_module(m)?;
    let contract_bearing = m
        .declarations
        .iter()
        .flat_map(|d| &d.functions)
        .any(|f| !f.requires.is_empty() || !f.ensures.is_empty());
    if contract_bearing && m.mode != VerificationMode::Checked {
        return Err(Error::new(
            code::MODEL,
            "a contract-bearing schema-1.9 module must use verification mode checked",
        ));
    }
    for d in &m.declarations {
        match d.kind {
            DeclKind::Value if !d.variants.is_empty() => {
                return Err(Error::new(
                    code::MODEL,
                    format!("value declaration {} owns variants", d.name),
                ));
            }
            DeclKind::Enum | DeclKind::Error if !d.fields.is_empty() => {
                return Err(Error::new(
                    code::MODEL,
                    format!(
                        "{} declaration {} owns ordinary fields",
                        d.kind.text(),
                        d.name
                    ),
                ));
            }
            _ => {}
        }
        for f in d
            .fields
            .iter()
            .chain(d.variants.iter().flat_map(|v| &v.fields))
        {
            check_type(&f.ty, &format!("field {}.{}", d.name, f.name))?;
            if f.ty.is_borrow() {
                return Err(Error::new(
                    code::MODEL,
                    format!("field {}.{} has a loan type", d.name, f.name),
                ));
            }
        }
        for v in &d.variants {
            for f in &v.fields {
                if f.visibility != Visibility::Public || f.mutability != Mutability::Let {
                    return Err(Error::new(
                        code::MODEL,
                        format!(
                            "payload field {}.{}.{} must be public let",
                            d.name, v.name, f.name
                        ),
                    ));
                }
            }
        }
        for f in &d.functions {
            check_function(m, ids, d, f)?;
        }
    }
    if let Some((_, msg)) = layout_cycle(m, ids) {
        return Err(Error::new(code::LAYOUT, msg));
    }
    let tables = typing::Global::new(m, ids);
    for (decl, d) in m.declarations.iter().enumerate() {
        for f in &d.functions {
            typing::check_typing(&tables, decl, f)?;
            crate::check::cfg::check_structure(f)?;
            typing::check_owners(&tables, decl, f)?;
        }
    }
    Ok(())
}

/// Finite-layout validation (C0-TYPE-008): follows every ordinary and
/// variant-payload field of the local declarations through the types that
/// store their payload inline (a nominal value, both sides of a rich Result)
/// and finds a direct or mutual owned-payload cycle, which this bounded
/// profile cannot break with any storage indirection. Imported declarations
/// cannot close a cycle: the module graph is acyclic (C0-MOD-003). Returns
/// the model index of a declaration on the cycle and a message naming it.
pub fn layout_cycle(m: &Module, ids: &Identities) -> Option<(usize, String)> {
    fn inline(t: &Type, out: &mut Vec<crate::hash::Id>) {
        match t {
            Type::Nominal(id) => out.push(*id),
            Type::Result(a, b) => {
                inline(a, out);
                inline(b, out);
            }
            // Scalars, Unit and Never hold no declaration; Array<Byte>,
            // Slice<Byte>, Ref, Mut and the allocator name no local one.
            _ => {}
        }
    }
    let local: crate::hash::FastMap<crate::hash::Id, usize> = ids
        .decls
        .iter()
        .enumerate()
        .map(|(i, d)| (d.nominal, i))
        .collect();
    let mut succ: Vec<Vec<usize>> = Vec::with_capacity(m.declarations.len());
    let mut scratch = Vec::new();
    for d in &m.declarations {
        scratch.clear();
        for f in d
            .fields
            .iter()
            .chain(d.variants.iter().flat_map(|v| &v.fields))
        {
            inline(&f.ty, &mut scratch);
        }
        let mut next: Vec<usize> = scratch
            .iter()
            .filter_map(|id| local.get(id).copied())
            .collect();
        next.sort_unstable();
        next.dedup();
        succ.push(next);
    }
    // Iterative depth-first search: 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; succ.len()];
    for root in 0..succ.len() {
        if state[root] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        state[root] = 1;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&to) = succ[node].get(*next) {
                *next += 1;
                match state[to] {
                    0 => {
                        state[to] = 1;
                        stack.push((to, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|&(n, _)| n == to).unwrap_or(0);
                        let mut names: Vec<&str> = stack[from..]
                            .iter()
                            .map(|&(n, _)| m.declarations[n].name.as_str())
                            .collect();
                        names.push(&m.declarations[to].name);
                        return Some((
                            to,
                            format!(
                                "declaration {} stores itself inline through {} \
                                 (an owned-payload cycle has no finite layout, C0-TYPE-008)",
                                m.declarations[to].name,
                                names.join(" -> ")
                            ),
                        ));
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    None
}

fn check_type(t: &Type, what: &str) -> Result<()> {
    if t.depth() > MAX_TYPE_DEPTH {
        return Err(Error::new(
            code::LIMIT,
            format!("{what}: type nesting deeper than {MAX_TYPE_DEPTH}"),
        ));
    }
    if let Type::Scalar(ScalarKind::Index) = t {
        return Ok(());
    }
    if let Type::Ref(inner) | Type::Mut(inner) = t
        && matches!(**inner, Type::Ref(_) | Type::Mut(_))
    {
        return Err(Error::new(
            code::MODEL,
            format!("{what}: a loan of a loan is not admitted"),
        ));
    }
    if let Type::Mut(inner) = t
        && **inner == Type::AllocatorBytesError
    {
        return Err(Error::new(
            code::MODEL,
            format!("{what}: Mut<Allocator<BytesError>> is not admitted"),
        ));
    }
    if let Type::Result(a, b) = t
        && (a.is_borrow() || b.is_borrow())
    {
        return Err(Error::new(
            code::MODEL,
            format!("{what}: a Result carrier cannot hold a loan"),
        ));
    }
    for c in t.children() {
        if *c == Type::AllocatorBytesError && !matches!(t, Type::Ref(_)) {
            return Err(Error::new(
                code::MODEL,
                format!("{what}: Allocator<BytesError> is admitted only under Ref"),
            ));
        }
        check_type(c, what)?;
    }
    Ok(())
}

fn check_function(m: &Module, ids: &Identities, d: &Declaration, f: &Function) -> Result<()> {
    let _ = m;
    match f.callable {
        CallableKind::Initializer => {
            if f.name != "init" || f.receiver != ReceiverKind::None {
                return Err(err(
                    f,
                    "",
                    "an initializer is named init and has receiver kind none",
                ));
            }
            if d.kind != DeclKind::Value {
                return Err(err(f, "", "only value declarations own initializers"));
            }
        }
        CallableKind::Message => {
            if f.receiver == ReceiverKind::None {
                return Err(err(
                    f,
                    "",
                    "receiver kind none is valid only for an initializer",
                ));
            }
            if f.name == "init" {
                return Err(err(f, "", "an ordinary message cannot be named init"));
            }
        }
    }
    check_type(&f.result, &format!("function {}", f.name))?;
    for p in &f.params {
        check_type(&p.ty, &format!("parameter {}", p.name))?;
    }
    for l in &f.body.locals {
        check_type(&l.ty, &format!("local {}", l.name))?;
        if matches!(
            l.ty,
            Type::Ref(_) | Type::Mut(_) | Type::AllocatorBytesError
        ) {
            return Err(err(
                f,
                &format!("local {}", l.name),
                "Ref and Mut locals are not admitted",
            ));
        }
    }
    if f.body.blocks.is_empty() {
        return Err(err(f, "", "a body needs an entry block"));
    }
    let index = FnIndex::new(f);
    for b in &f.body.blocks {
        for (i, op) in b.ops.iter().enumerate() {
            // The location is formatted only for a rejection (check_op is pure).
            if let Err(e) = check_op(ids, &index, op, "", false) {
                let at = format!("block {} op {i}", b.id);
                let mut error = check_op(ids, &index, op, &at, false).err().unwrap_or(e);
                error.site = Some(crate::error::Site {
                    function: f.name.clone(),
                    block: Some(b.id),
                    op: u32::try_from(i).ok(),
                    edge: None,
                });
                return Err(error);
            }
        }
    }
    for e in &f.body.edges {
        if !index.blocks.contains_key(&e.source)
            || e.successor.is_some_and(|s| !index.blocks.contains_key(&s))
        {
            return Err(err(
                f,
                &format!("cleanup edge {}", e.id),
                "names a missing block",
            ));
        }
        for (i, op) in e.drops.iter().enumerate() {
            let at = OpRef::Recipe {
                edge: e.id,
                ordinal: u32::try_from(i).unwrap_or(u32::MAX),
            };
            check_op(ids, &index, op, &format!("recipe {at}"), true).map_err(
                |error| match error.site {
                    None => error.at_body_op(&f.name, at),
                    Some(_) => error,
                },
            )?;
        }
    }
    for p in &f.body.paths {
        check_type(&p.ty, "owned path")?;
        match &p.key.root {
            Root::Receiver
                if !matches!(
                    f.receiver,
                    ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
                ) =>
            {
                return Err(err(
                    f,
                    "owned path",
                    "a receiver root needs a runtime receiver",
                ));
            }
            Root::Param(x) if !f.params.iter().any(|p| p.ordinal == *x) => {
                return Err(err(f, "owned path", format!("no parameter {x}")));
            }
            Root::Local(x) if !f.body.locals.iter().any(|p| p.ordinal == *x) => {
                return Err(err(f, "owned path", format!("no local {x}")));
            }
            Root::Temp(r) => {
                let op = index
                    .op(r)
                    .ok_or_else(|| err(f, "owned path", "temporary producer does not exist"))?;
                if !matches!(r, OpRef::Flow { .. }) || op.result.is_none() {
                    return Err(err(
                        f,
                        "owned path",
                        "a temporary names a flow operation with a result",
                    ));
                }
            }
            _ => {}
        }
        if !p.key.fields.is_empty() {
            let mut parent = p.key.clone();
            parent.fields.pop();
            if index.path(&parent).is_none() {
                return Err(err(f, "owned path", "a field path needs its parent path"));
            }
        }
    }
    for l in &f.body.loans {
        if index.path(&l.origin).is_none() {
            return Err(err(
                f,
                &format!("loan {}", l.id),
                "origin path does not exist",
            ));
        }
        if l.parent.is_some_and(|p| p >= l.id) {
            return Err(err(
                f,
                &format!("loan {}", l.id),
                "parent loan must precede it",
            ));
        }
        for r in l.creation.iter().chain(&l.last_use) {
            if !matches!(r, OpRef::Flow { .. }) || index.op(r).is_none() {
                return Err(err(
                    f,
                    &format!("loan {}", l.id),
                    "creation/last use must name a flow operation",
                ));
            }
        }
        if l.creation.is_none() != l.last_use.is_none() {
            return Err(err(
                f,
                &format!("loan {}", l.id),
                "an entry loan has neither creation nor last use; a body loan has both",
            ));
        }
    }
    for (which, list) in [("requires", &f.requires), ("ensures", &f.ensures)] {
        for (edge_index, e) in list.iter().enumerate() {
            check_expr(f, e, which == "ensures", &format!("{which} {edge_index}"))?;
        }
    }
    Ok(())
}

fn check_op(ids: &Identities, index: &FnIndex, op: &Op, at: &str, recipe: bool) -> Result<()> {
    let f = index.function;
    let (k0, k1) = aux_kinds(op.tag).ok_or_else(|| {
        err(
            f,
            at,
            format!("tag {} is not canonical in schema 1.9", op.tag),
        )
    })?;
    if op.aux0.kind() != k0 || op.aux1.kind() != k1 {
        return Err(err(
            f,
            at,
            format!(
                "tag {} needs auxiliary kinds ({k0}, {k1}), found ({}, {})",
                op.tag,
                op.aux0.kind(),
                op.aux1.kind()
            ),
        ));
    }
    if recipe && op.tag != tag::PLACE_DROP {
        return Err(err(
            f,
            at,
            "a cleanup recipe is exactly one PLACE_DROP (tag 40)",
        ));
    }
    for o in &op.operands {
        index.operand_type_ref(o)?;
        if let Operand::Value(OpRef::Recipe { .. }) = o {
            return Err(err(f, at, "a cleanup recipe produces no SSA value"));
        }
        if let Operand::Block(b) = o
            && !index.blocks.contains_key(b)
        {
            return Err(err(f, at, format!("no block {b}")));
        }
    }
    let kinds_ok = |want: &[K]| {
        want.len() == op.operands.len()
            && want.iter().zip(&op.operands).all(|(k, o)| {
                matches!(
                    (k, o),
                    (K::V, Operand::Value(_))
                        | (K::P, Operand::Place(_))
                        | (K::C, Operand::Const(_))
                        | (K::B, Operand::Block(_))
                        | (K::X, Operand::Value(_) | Operand::Place(_))
                )
            })
    };
    match shape(op.tag) {
        Some((want, has_result)) => {
            if !kinds_ok(want) {
                return Err(err(
                    f,
                    at,
                    format!(
                        "tag {} operand count or kinds do not match its table row",
                        op.tag
                    ),
                ));
            }
            if op.result.is_some() != has_result {
                return Err(err(
                    f,
                    at,
                    format!(
                        "tag {} {} a result",
                        op.tag,
                        if has_result { "needs" } else { "has no" }
                    ),
                ));
            }
        }
        None => {
            // CALL, INTRINSIC_CALL, AGGREGATE_CONSTRUCT, VARIANT_CONSTRUCT: values/places, result present.
            if op
                .operands
                .iter()
                .any(|o| matches!(o, Operand::Const(_) | Operand::Block(_)))
            {
                return Err(err(
                    f,
                    at,
                    format!("tag {} takes value or place operands only", op.tag),
                ));
            }
            if op.result.is_none() {
                return Err(err(f, at, format!("tag {} needs a result", op.tag)));
            }
        }
    }
    // Redundant references must agree.
    match (op.tag, &op.aux0, op.operands.first()) {
        (
            tag::LOAD_LOCAL
            | tag::STORE_LOCAL
            | tag::PLACE_MOVE
            | tag::PLACE_DROP
            | tag::REPLACE_COMMIT,
            Aux::Path(k),
            Some(Operand::Place(p)),
        ) if k != p => {
            return Err(err(
                f,
                at,
                "place operand and owned-path auxiliary disagree",
            ));
        }
        (tag::JUMP, Aux::Block(b), Some(Operand::Block(o))) if b != o => {
            return Err(err(f, at, "block operand and block auxiliary disagree"));
        }
        _ => {}
    }
    if op.tag == tag::JUMP_IF_FALSE
        && let (Aux::Block(b), Some(Operand::Block(o))) = (&op.aux0, op.operands.get(1))
        && b != o
    {
        return Err(err(f, at, "block operand and block auxiliary disagree"));
    }
    if matches!(op.tag, tag::VARIANT_CONSTRUCT | tag::AGGREGATE_CONSTRUCT)
        && let Aux::Lit(n) = op.aux1
    {
        if n as usize != op.operands.len() {
            return Err(err(
                f,
                at,
                "literal field count differs from the operand count",
            ));
        }
        if op.tag == tag::VARIANT_CONSTRUCT && n == 0 {
            return Err(err(f, at, "a zero-payload variant uses ENUM_CONST"));
        }
    }
    if matches!(op.tag, tag::RESULT_OK_RICH | tag::RESULT_ERR_RICH) {
        let want = u32::from(op.tag == tag::RESULT_ERR_RICH);
        if op.aux1 != Aux::Lit(want)
            || op.aux0 != Aux::Type(op.result.clone().unwrap_or(Type::Never))
        {
            return Err(err(
                f,
                at,
                "rich Result construction names its exact carrier type and literal tag",
            ));
        }
    }
    if let Aux::CatalogFunc(id) = &op.aux0 {
        let e = crate::catalog::by_signature(id).ok_or_else(|| {
            Error::new(
                code::CATALOG,
                format!("function {} {at}: unknown catalog function", f.name),
            )
        })?;
        if op.tag == tag::INTRINSIC_CALL && (e.selector == 0 || e.selector == 6) {
            return Err(err(
                f,
                at,
                "INTRINSIC_CALL rejects selectors 0 (UNIT_VALUE) and 6 (BORROW_SLICE_BYTE)",
            ));
        }
        if op.result.as_ref() != Some(&e.result) {
            return Err(err(
                f,
                at,
                "intrinsic call result differs from the catalog signature",
            ));
        }
        if op.aux1 != Aux::Effects(e.effects.clone()) {
            return Err(err(
                f,
                at,
                "effect-set auxiliary differs from the catalog signature",
            ));
        }
    }
    if let Aux::CatalogFunc(id) = &op.aux1
        && crate::catalog::by_signature(id).map(|e| e.selector) != Some(6)
    {
        return Err(err(
            f,
            at,
            "BORROW_SLICE_BYTE names catalog selector 6 (Array<Byte>.slice)",
        ));
    }
    // A module that imports may name a provider's field; the linked
    // semantic check resolves it (check::link).
    if let Aux::Field(id) = &op.aux0
        && !ids.fields.contains_key(id)
        && ids.imports.is_empty()
    {
        return Err(Error::new(
            code::REF,
            format!(
                "function {} {at}: field symbol does not resolve to a declaration field of this module",
                f.name
            ),
        ));
    }
    if let Some(t) = &op.result {
        check_type(t, at)?;
    }
    Ok(())
}

fn check_expr(f: &Function, e: &Expr, ensures: bool, at: &str) -> Result<()> {
    if e.ops.is_empty() {
        return Err(err(f, at, "an expression has at least one operation"));
    }
    let last = e.ops.len() - 1;
    let mut uses = vec![0u32; e.ops.len()];
    for (i, op) in e.ops.iter().enumerate() {
        let at = format!("{at} op {i}");
        let arity = match op.tag {
            0 | 1 | 4 | 5 => 1,
            3 => op.operands.len(),
            7..=24 => 2,
            _ => {
                return Err(err(
                    f,
                    &at,
                    format!("contract tag {} is reserved or unknown", op.tag),
                ));
            }
        };
        if op.operands.len() != arity {
            return Err(err(
                f,
                &at,
                format!("contract tag {} takes {arity} operands", op.tag),
            ));
        }
        if op.tag == 0 && (i != last || matches!(op.operands[0], ContractOperand::Value(_))) {
            return Err(err(
                f,
                &at,
                "identity is valid only as the root over a direct leaf",
            ));
        }
        if op.tag == 5 && matches!(op.operands[0], ContractOperand::Const(_)) {
            return Err(err(
                f,
                &at,
                "a negative literal is a folded signed constant, not tag 5 over a constant",
            ));
        }
        let wants_ref = matches!(op.tag, 1 | 3);
        if op.reference.is_some() != wants_ref {
            return Err(err(
                f,
                &at,
                "only field-copy and pure-call reference a semantic ID",
            ));
        }
        // Only pure-call (tag 3) has an auxiliary: aux0 ∈ {0, 1}.
        let aux0_max = if op.tag == 3 { 1 } else { 0 };
        if op.aux0 > aux0_max || op.aux1 != 0 {
            return Err(err(f, &at, "noncanonical contract auxiliaries"));
        }
        for o in &op.operands {
            match o {
                ContractOperand::Value(v) => {
                    if *v as usize >= i {
                        return Err(err(f, &at, "a contract value refers only backward"));
                    }
                    uses[*v as usize] += 1;
                }
                ContractOperand::Result if !ensures => {
                    return Err(err(f, &at, "result is valid only in ensures"));
                }
                ContractOperand::Const(c) if c.payload().is_none() => {
                    return Err(err(f, &at, "constant without canonical payload"));
                }
                _ => {}
            }
        }
        if let Type::Scalar(_) = op.result {
        } else {
            return Err(err(
                f,
                &at,
                "every contract-produced value is a Copy nonborrow scalar in this subset",
            ));
        }
    }
    if e.ops[last].result != Type::Scalar(ScalarKind::Bool) {
        return Err(err(f, at, "the root has exact Bool type"));
    }
    for (i, n) in uses.iter().enumerate() {
        if (i < last && *n != 1) || (i == last && *n != 0) {
            return Err(err(
                f,
                at,
                "every nonroot contract value is consumed exactly once and the root never",
            ));
        }
    }
    Ok(())
}
