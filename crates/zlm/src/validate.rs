//! Logical-model validation shared by the writer and the decoder: admitted
//! kinds, owned-range shapes, and the per-tag operand/result/auxiliary
//! shapes of the typed-operation and contract-operation tables.
//!
//! Ownership dataflow, loan liveness, dominance and full type checking of
//! every operation belong to the checked-semantics layer (issue 10).

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
    Error::new(code::SHAPE, format!("function {} {at}: {msg}", f.name))
}

/// Checks every admitted-shape rule of the logical module.
pub fn check(m: &Module, ids: &Identities) -> Result<()> {
    if m.package.is_empty() || m.name.is_empty() {
        return Err(Error::new(
            code::MODEL,
            "package and module names must be nonempty",
        ));
    }
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
    let g = Global::new(m, ids);
    for (di, d) in m.declarations.iter().enumerate() {
        for f in &d.functions {
            check_typing(&g, di, f)?;
            check_cfg(f)?;
            check_owners(&g, di, f)?;
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
                return Err(check_op(ids, &index, op, &at, false).err().unwrap_or(e));
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
            check_op(
                ids,
                &index,
                op,
                &format!("cleanup edge {} recipe {i}", e.id),
                true,
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
        for (ei, e) in list.iter().enumerate() {
            check_expr(f, e, which == "ensures", &format!("{which} {ei}"))?;
        }
    }
    Ok(())
}

fn check_op(ids: &Identities, index: &FnIndex, op: &Op, at: &str, recipe: bool) -> Result<()> {
    let f = index.f;
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
    if let Aux::Field(id) = &op.aux0
        && !ids.fields.contains_key(id)
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

/// Module-wide lookup tables for typing checks.
struct Global<'a> {
    m: &'a Module,
    ids: &'a Identities,
    sigs: std::collections::HashMap<crate::hash::Id, (usize, usize)>,
    variants: std::collections::HashMap<crate::hash::Id, (usize, usize)>,
    decls: std::collections::HashMap<crate::hash::Id, usize>,
}

impl<'a> Global<'a> {
    fn new(m: &'a Module, ids: &'a Identities) -> Self {
        let mut sigs = std::collections::HashMap::new();
        let mut variants = std::collections::HashMap::new();
        let mut decls = std::collections::HashMap::new();
        for (di, d) in ids.decls.iter().enumerate() {
            decls.insert(d.nominal, di);
            for (fi, f) in d.functions.iter().enumerate() {
                sigs.insert(f.sig, (di, fi));
            }
            for (vi, (vid, _)) in d.variants.iter().enumerate() {
                variants.insert(*vid, (di, vi));
            }
        }
        Global {
            m,
            ids,
            sigs,
            variants,
            decls,
        }
    }
    fn field(&self, id: &crate::hash::Id) -> Option<(&'a Field, usize)> {
        let info = self.ids.fields.get(id)?;
        let d = &self.m.declarations[info.decl];
        Some(match info.variant {
            None => (&d.fields[info.index], info.decl),
            Some(v) => (&d.variants[v].fields[info.index], info.decl),
        })
    }
    fn nominal(&self, di: usize) -> Type {
        Type::Nominal(self.ids.decls[di].nominal)
    }
}

/// `t`, or the target of a `Ref`/`Mut` view of it.
fn target(t: &Type) -> &Type {
    match t {
        Type::Ref(x) | Type::Mut(x) => x,
        other => other,
    }
}

fn is_subset(inner: &[Effect], outer: &[Effect]) -> bool {
    inner.iter().all(|e| outer.contains(e))
}

fn check_typing(g: &Global, di: usize, f: &Function) -> Result<()> {
    let index = FnIndex::new(f);
    let self_ty = g.nominal(di);
    let recv = crate::ids::receiver_type(&g.ids.decls[di].nominal, f.receiver);
    // Owned paths: temporaries have their producer's type; field paths follow the field.
    for p in &f.body.paths {
        let at = "owned path";
        if let Some(last) = p.key.fields.last() {
            let (field, owner) = g
                .field(last)
                .ok_or_else(|| err(f, at, "field component does not resolve to a local field"))?;
            let mut parent = p.key.clone();
            parent.fields.pop();
            let pt = index
                .path(&parent)
                .map(|x| x.ty.clone())
                .ok_or_else(|| err(f, at, "missing parent"))?;
            let info = &g.ids.fields[last];
            let owner_ok = match info.variant {
                None => *target(&pt) == g.nominal(owner),
                Some(_) => *target(&pt) == g.nominal(owner),
            };
            if !owner_ok || p.ty != field.ty {
                return Err(err(
                    f,
                    at,
                    "field path does not match its parent's type or the field's type",
                ));
            }
        } else {
            let want = match &p.key.root {
                Root::Receiver => recv.clone().map(|t| target(&t).clone()),
                Root::Param(x) => f
                    .params
                    .iter()
                    .find(|q| q.ordinal == *x)
                    .map(|q| target(&q.ty).clone()),
                Root::Local(x) => f
                    .body
                    .locals
                    .iter()
                    .find(|q| q.ordinal == *x)
                    .map(|q| q.ty.clone()),
                Root::Temp(r) => index.op(r).and_then(|o| o.result.clone()),
            };
            let ok = match &p.key.root {
                // A borrowed argument root names the loan target; an owned one the value itself.
                Root::Receiver | Root::Param(_) => {
                    want.as_ref() == Some(&p.ty)
                        || match &p.key.root {
                            Root::Param(x) => f
                                .params
                                .iter()
                                .find(|q| q.ordinal == *x)
                                .is_some_and(|q| q.ty == p.ty),
                            _ => false,
                        }
                }
                _ => want.as_ref() == Some(&p.ty),
            };
            if !ok {
                return Err(err(f, at, "root path type differs from its binding's type"));
            }
        }
    }
    for l in &f.body.loans {
        let at = format!("loan {}", l.id);
        let ok = match l.kind {
            LoanKind::Shared => matches!(l.borrowed, Type::Ref(_)),
            LoanKind::Exclusive => matches!(l.borrowed, Type::Mut(_)),
            LoanKind::ByteSlice => l.borrowed == Type::SliceByte,
        };
        if !ok {
            return Err(err(f, &at, "loan kind and borrowed type disagree"));
        }
        if l.creation.is_none() && !matches!(l.origin.root, Root::Receiver | Root::Param(_)) {
            return Err(err(
                f,
                &at,
                "an entry loan originates at a receiver or parameter root",
            ));
        }
    }
    let ty_of = |o: &Operand| index.operand_type_ref(o).ok().flatten();
    let blocks = f.body.blocks.iter().flat_map(|b| {
        b.ops.iter().enumerate().map(move |(i, op)| {
            (
                OpRef::Flow {
                    block: b.id,
                    ordinal: i as u32,
                },
                op,
            )
        })
    });
    let mut tbuf: Vec<Option<&Type>> = Vec::new();
    for (here, op) in blocks {
        // Formatted only on error: this loop runs once per operation.
        let e = |msg: &str| err(f, &format!("{here:?}"), msg);
        tbuf.clear();
        tbuf.extend(op.operands.iter().map(ty_of));
        let t: &[Option<&Type>] = &tbuf;
        let res = op.result.as_ref();
        let scalar = |x: Option<&Type>| match x {
            Some(Type::Scalar(k)) => Some(*k),
            _ => None,
        };
        use crate::model::tag::*;
        match op.tag {
            CONST if t[0] != res => {
                return Err(e("constant type differs from the result"));
            }
            NEG | NOT_BOOL => {
                let k = scalar(res).ok_or_else(|| e("unary operation on a non-scalar"))?;
                let ok = if op.tag == NOT_BOOL {
                    k == ScalarKind::Bool
                } else {
                    k.is_signed()
                };
                if !ok || t[0] != res {
                    return Err(e("unary operand/result types are not admitted"));
                }
            }
            ADD | SUB | MUL | DIV | REM | BIT_AND | BIT_OR | BIT_XOR => {
                let k = scalar(res).ok_or_else(|| e("arithmetic on a non-scalar"))?;
                if k == ScalarKind::Bool || t[0] != res || t[1] != res {
                    return Err(e("binary operands must have the exact integer result type"));
                }
            }
            SHIFT_LEFT | SHIFT_RIGHT => {
                let k = scalar(res).ok_or_else(|| e("shift of a non-scalar"))?;
                if k == ScalarKind::Bool
                    || t[0] != res
                    || t[1] != Some(&Type::Scalar(ScalarKind::UInt64))
                {
                    return Err(e("shift takes an integer T and a UInt64 count"));
                }
            }
            EQ | LT | NE | LE | GT | GE
                if (res != Some(&Type::Scalar(ScalarKind::Bool))
                    || scalar(t[0]).is_none()
                    || t[0] != t[1]) =>
            {
                return Err(e("comparison takes two identical scalars and yields Bool"));
            }
            JUMP_IF_FALSE | ASSERT_TRUE if t[0] != Some(&Type::Scalar(ScalarKind::Bool)) => {
                return Err(e("condition must be Bool"));
            }
            ASSERT_EQ if t[0] != t[1] => {
                return Err(e("ASSERT_EQ operands differ in type"));
            }
            RETURN if t[0] != Some(&f.result) => {
                return Err(e("returned value differs from the function's result type"));
            }
            LOAD_LOCAL | STORE_LOCAL => {
                let Some(Operand::Place(k)) = op.operands.first() else {
                    return Err(e("place operand expected"));
                };
                let rooted = k.fields.is_empty()
                    && match k.root {
                        Root::Local(_) => true,
                        Root::Param(_) | Root::Receiver => op.tag == LOAD_LOCAL,
                        Root::Temp(_) => false,
                    };
                if !rooted {
                    return Err(e(
                        "LOAD_LOCAL names an argument or local root; STORE_LOCAL a local root",
                    ));
                }
                if op.tag == LOAD_LOCAL {
                    let pt = t[0].cloned().unwrap_or(Type::Never);
                    if res != Some(&pt) || !g.ids.is_copy(&pt) || pt.is_borrow() {
                        return Err(e(
                            "LOAD_LOCAL reads only a structurally Copy nonborrow root of its exact type",
                        ));
                    }
                } else if t[0] != t[1] {
                    return Err(e("stored value differs from the local's type"));
                }
            }
            ENUM_CONST | ENUM_IS_VARIANT | VARIANT_CONSTRUCT => {
                let Aux::Variant(vid) = &op.aux0 else {
                    return Err(e("variant auxiliary expected"));
                };
                let &(vd, vi) = g
                    .variants
                    .get(vid)
                    .ok_or_else(|| e("variant does not resolve to a local declaration"))?;
                let v = &g.m.declarations[vd].variants[vi];
                let owner = g.nominal(vd);
                match op.tag {
                    ENUM_CONST => {
                        if !v.fields.is_empty() || res != Some(&owner) {
                            return Err(e(
                                "ENUM_CONST builds a fieldless variant of its exact owner",
                            ));
                        }
                    }
                    ENUM_IS_VARIANT => {
                        if res != Some(&Type::Scalar(ScalarKind::Bool))
                            || t[0].map(target) != Some(&owner)
                        {
                            return Err(e(
                                "ENUM_IS_VARIANT tests an owner place or loan and yields Bool",
                            ));
                        }
                    }
                    _ => {
                        let mut fields: Vec<&Field> = v.fields.iter().collect();
                        fields.sort_by_key(|x| x.ordinal);
                        if res != Some(&owner)
                            || fields.len() != t.len()
                            || fields.iter().zip(t).any(|(fl, ot)| *ot != Some(&fl.ty))
                        {
                            return Err(e(
                                "VARIANT_CONSTRUCT operands must match the payload fields in ordinal order",
                            ));
                        }
                    }
                }
            }
            AGGREGATE_CONSTRUCT => {
                let Aux::Decl(n) = &op.aux0 else {
                    return Err(e("declaration auxiliary expected"));
                };
                let &dd = g
                    .decls
                    .get(n)
                    .ok_or_else(|| e("declaration does not resolve locally"))?;
                let d = &g.m.declarations[dd];
                let mut fields: Vec<&Field> = d.fields.iter().collect();
                fields.sort_by_key(|x| x.ordinal);
                if d.kind != DeclKind::Value
                    || res != Some(&g.nominal(dd))
                    || fields.len() != t.len()
                    || fields.iter().zip(t).any(|(fl, ot)| *ot != Some(&fl.ty))
                {
                    return Err(e(
                        "AGGREGATE_CONSTRUCT operands must match the value declaration's fields in order",
                    ));
                }
            }
            FIELD_COPY | FIELD_MOVE => {
                let Aux::Field(fid) = &op.aux0 else {
                    return Err(e("field auxiliary expected"));
                };
                let (field, owner) = g
                    .field(fid)
                    .ok_or_else(|| e("field does not resolve locally"))?;
                if res != Some(&field.ty) || t[0].map(target) != Some(&g.nominal(owner)) {
                    return Err(e("field access result/owner types are wrong"));
                }
                if op.tag == FIELD_COPY && !g.ids.is_copy(&field.ty) {
                    return Err(e("FIELD_COPY needs a structurally Copy field"));
                }
                if op.tag == FIELD_MOVE
                    && (field.mutability != Mutability::Var && g.ids.fields[fid].variant.is_none()
                        || matches!(t[0], Some(Type::Ref(_) | Type::Mut(_))))
                {
                    return Err(e("FIELD_MOVE needs a var field of an owned place"));
                }
            }
            PLACE_MOVE | BYTE_BUILDER_FINISH => {
                if op.tag == PLACE_MOVE && res != t[0] {
                    return Err(e("PLACE_MOVE yields the place's exact type"));
                }
                if op.tag == BYTE_BUILDER_FINISH
                    && !(g.m.name == "sdk.bytes"
                        && f.name == "finish"
                        && g.m.declarations[di].name == "BytesBuilder")
                {
                    return Err(e(
                        "BYTE_BUILDER_FINISH is admitted only in sdk.bytes.BytesBuilder.finish",
                    ));
                }
            }
            REPLACE_COMMIT if t[0] != t[1] => {
                return Err(e("replacement differs from the destination type"));
            }
            UNIT_VALUE if res != Some(&Type::Unit) => {
                return Err(e("UNIT_VALUE yields Unit"));
            }
            RESULT_OK_RICH | RESULT_ERR_RICH => {
                let Some(Type::Result(ok, er)) = res else {
                    return Err(e("rich construction yields a Result"));
                };
                let want = if op.tag == RESULT_OK_RICH { ok } else { er };
                if t[0] != Some(&**want) {
                    return Err(e("payload differs from the carrier's T or E"));
                }
            }
            RESULT_TRY | RESULT_TRY_RICH => {
                let Some(Type::Result(ok, er)) = t[0] else {
                    return Err(e("try takes a Result carrier"));
                };
                let Type::Result(_, fer) = &f.result else {
                    return Err(e("try needs a function returning Result<U, E>"));
                };
                if res != Some(&**ok) || fer != er {
                    return Err(e(
                        "try yields T and needs the same E in the function result",
                    ));
                }
                if op.tag == RESULT_TRY_RICH && op.aux0 != Aux::Type(f.result.clone()) {
                    return Err(e("RESULT_TRY_RICH names the exact outer carrier"));
                }
                let Aux::Edge(eid) = op.aux1 else {
                    return Err(e("error cleanup edge expected"));
                };
                let edge = index
                    .edges
                    .get(&eid)
                    .map(|&i| &f.body.edges[i])
                    .ok_or_else(|| e("missing cleanup edge"))?;
                let OpRef::Flow { block, .. } = here else {
                    return Err(e("try is a flow operation"));
                };
                if edge.kind != EdgeKind::TryError
                    || edge.source != block
                    || edge.successor.is_some()
                {
                    return Err(e("try names a try-error edge from its own block to exit"));
                }
            }
            CALL | INTRINSIC_CALL => {
                let (recv_kind, owner, params, result, effects): (
                    ReceiverKind,
                    Type,
                    Vec<Type>,
                    Type,
                    Vec<Effect>,
                ) = match &op.aux0 {
                    Aux::Func(sig) => {
                        let &(cd, cf) = g.sigs.get(sig).ok_or_else(|| Error::new(code::UNSUPPORTED, format!("function {} {here:?}: calls to functions of other modules are not supported yet", f.name)))?;
                        let c = &g.m.declarations[cd].functions[cf];
                        let mut ps: Vec<&Param> = c.params.iter().collect();
                        ps.sort_by_key(|p| p.ordinal);
                        (
                            c.receiver,
                            g.nominal(cd),
                            ps.iter().map(|p| p.ty.clone()).collect(),
                            c.result.clone(),
                            c.effects.clone(),
                        )
                    }
                    Aux::CatalogFunc(id) => {
                        let c = crate::catalog::by_signature(id)
                            .ok_or_else(|| e("unknown catalog function"))?;
                        (
                            c.receiver,
                            c.owner.clone(),
                            c.params.iter().map(|p| p.1.clone()).collect(),
                            c.result.clone(),
                            c.effects.clone(),
                        )
                    }
                    _ => return Err(e("callee auxiliary expected")),
                };
                let mut want: Vec<Type> = Vec::new();
                if let Some(rt) = crate::catalog::receiver_type(&owner, recv_kind).filter(|_| {
                    matches!(
                        recv_kind,
                        ReceiverKind::Shared | ReceiverKind::Exclusive | ReceiverKind::Owned
                    )
                }) {
                    want.push(rt);
                }
                want.extend(params);
                let args_ok = want.len() == t.len()
                    && want
                        .iter()
                        .zip(t)
                        .zip(&op.operands)
                        .all(|((w, ot), o)| match o {
                            // A loan argument may be passed as the place of its target (entry-loan binding).
                            Operand::Place(_) if w.is_borrow() => {
                                *ot == Some(target(w)) || *ot == Some(w)
                            }
                            _ => *ot == Some(w),
                        });
                if !args_ok || res != Some(&result) || op.aux1 != Aux::Effects(effects.clone()) {
                    return Err(e(
                        "call operands, result or effect auxiliary differ from the callee signature",
                    ));
                }
                if !is_subset(&effects, &f.effects) {
                    return Err(e("a callee's effect set must be a subset of the caller's"));
                }
            }
            BORROW_SHARED | BORROW_MUT | BORROW_SLICE_BYTE => {
                let Aux::Loan(lid) = op.aux0 else {
                    return Err(e("loan auxiliary expected"));
                };
                let loan = f
                    .body
                    .loans
                    .iter()
                    .find(|l| l.id == lid)
                    .ok_or_else(|| e("missing loan"))?;
                let want_res = match op.tag {
                    BORROW_SHARED => {
                        Type::Ref(Box::new(target(t[0].unwrap_or(&Type::Never)).clone()))
                    }
                    BORROW_MUT => Type::Mut(Box::new(target(t[0].unwrap_or(&Type::Never)).clone())),
                    _ => Type::SliceByte,
                };
                if res != Some(&want_res)
                    || loan.borrowed != want_res
                    || loan.creation != Some(here)
                {
                    return Err(e("borrow result, loan type and loan creation must agree"));
                }
                if op.tag == BORROW_SLICE_BYTE
                    && (t[1] != Some(&Type::Scalar(ScalarKind::UInt64))
                        || t[2] != Some(&Type::Scalar(ScalarKind::UInt64))
                        || !matches!(t[0].map(target), Some(Type::ArrayByte | Type::Nominal(_))))
                {
                    return Err(e(
                        "BORROW_SLICE_BYTE takes a byte-array receiver and UInt64 bounds",
                    ));
                }
            }
            _ => {}
        }
    }
    let _ = self_ty;
    Ok(())
}

/// Control-flow successors of a block in semantic arm order, from its
/// terminator (docs/zlm/format.md: every block ends with JUMP,
/// JUMP_IF_FALSE or RETURN, and only there).
fn successors(f: &Function, b: &Block) -> Result<Vec<(Option<u32>, EdgeKind)>> {
    let at = format!("block {}", b.id);
    let last = b
        .ops
        .last()
        .ok_or_else(|| err(f, &at, "a block ends with a terminator"))?;
    for op in &b.ops[..b.ops.len() - 1] {
        if matches!(op.tag, tag::JUMP | tag::JUMP_IF_FALSE | tag::RETURN) {
            return Err(err(
                f,
                &at,
                "a terminator is the last flow operation of its block",
            ));
        }
    }
    Ok(match (last.tag, &last.aux0) {
        (tag::JUMP, Aux::Block(t)) => vec![(Some(*t), EdgeKind::Fallthrough)],
        (tag::JUMP_IF_FALSE, Aux::Block(t)) => {
            let next =
                b.id.checked_add(1)
                    .ok_or_else(|| err(f, &at, "block ID overflow"))?;
            vec![(Some(next), EdgeKind::Branch), (Some(*t), EdgeKind::Branch)]
        }
        (tag::RETURN, _) => vec![(None, EdgeKind::Return)],
        _ => {
            return Err(err(
                f,
                &at,
                "a block ends with JUMP, JUMP_IF_FALSE or RETURN",
            ));
        }
    })
}

/// Block IDs are the depth-first preorder of the reachable CFG; cleanup
/// edges follow the single list algorithm (per source block: try-error
/// edges by owning operation, then terminal successors in arm order) with
/// derived kinds.
fn check_cfg(f: &Function) -> Result<()> {
    let index = FnIndex::new(f);
    let block = |id: u32| index.blocks.get(&id).map(|&i| &f.body.blocks[i]);
    // Depth-first preorder numbering must reproduce the dense IDs.
    let mut order: Vec<u32> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![0u32];
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let b = block(id)
            .ok_or_else(|| err(f, "CFG", format!("successor block {id} does not exist")))?;
        order.push(id);
        let succ = successors(f, b)?;
        for (s, _) in succ.iter().rev() {
            if let Some(s) = s
                && !seen.contains(s)
            {
                stack.push(*s);
            }
        }
    }
    if order.len() != f.body.blocks.len() {
        return Err(err(
            f,
            "CFG",
            "every block is reachable from the entry block",
        ));
    }
    if order.iter().enumerate().any(|(i, id)| *id as usize != i) {
        return Err(err(
            f,
            "CFG",
            "block IDs are not the depth-first preorder of the CFG",
        ));
    }
    check_dominance(f, &index)?;
    // Expected cleanup-edge list.
    let mut expected: Vec<(u32, Option<u32>, Option<EdgeKind>)> = Vec::new();
    for id in 0..f.body.blocks.len() as u32 {
        let b = block(id).ok_or_else(|| err(f, "CFG", "missing block"))?;
        for op in &b.ops {
            if matches!(op.tag, tag::RESULT_TRY | tag::RESULT_TRY_RICH) {
                expected.push((id, None, Some(EdgeKind::TryError)));
            }
        }
        for (s, kind) in successors(f, b)? {
            // Straight transfers may be fallthrough, join, break, continue or backedge:
            // those depend on source structure the artifact does not carry.
            let k = if kind == EdgeKind::Fallthrough {
                None
            } else {
                Some(kind)
            };
            expected.push((id, s, k));
        }
    }
    if expected.len() != f.body.edges.len() {
        return Err(err(
            f,
            "CFG",
            format!(
                "{} cleanup edges expected, {} present",
                expected.len(),
                f.body.edges.len()
            ),
        ));
    }
    for (i, (src, succ, kind)) in expected.into_iter().enumerate() {
        let e = f
            .body
            .edges
            .iter()
            .find(|e| e.id == i as u32)
            .ok_or_else(|| err(f, "CFG", "cleanup edge IDs are dense"))?;
        let kind_ok = match kind {
            Some(k) => e.kind == k,
            None => matches!(
                e.kind,
                EdgeKind::Fallthrough
                    | EdgeKind::Join
                    | EdgeKind::Break
                    | EdgeKind::Continue
                    | EdgeKind::Backedge
            ),
        };
        if e.source != src || e.successor != succ || !kind_ok {
            return Err(err(
                f,
                &format!("cleanup edge {i}"),
                "source, successor or kind differs from the derived edge list",
            ));
        }
    }
    Ok(())
}

/// Every non-Copy owned receiver, parameter, local and owner-producing flow
/// result has exactly one root owned path; every shared/exclusive receiver
/// and Ref/Mut/Slice parameter has exactly one entry loan at its root.
fn check_owners(g: &Global, di: usize, f: &Function) -> Result<()> {
    let owner = |t: &Type| !t.is_borrow() && !g.ids.is_copy(t);
    let has_root = |root: Root| {
        f.body
            .paths
            .iter()
            .any(|p| p.key.fields.is_empty() && p.key.root == root)
    };
    let self_ty = g.nominal(di);
    if f.receiver == ReceiverKind::Owned && owner(&self_ty) && !has_root(Root::Receiver) {
        return Err(err(
            f,
            "owned paths",
            "the owned receiver has no root owned path",
        ));
    }
    for p in &f.params {
        if owner(&p.ty) && !has_root(Root::Param(p.ordinal)) {
            return Err(err(
                f,
                "owned paths",
                format!("owner parameter {} has no root owned path", p.name),
            ));
        }
    }
    for l in &f.body.locals {
        if owner(&l.ty) && !has_root(Root::Local(l.ordinal)) {
            return Err(err(
                f,
                "owned paths",
                format!("owner local {} has no root owned path", l.name),
            ));
        }
    }
    for b in &f.body.blocks {
        for (i, op) in b.ops.iter().enumerate() {
            if op.result.as_ref().is_some_and(owner)
                && !has_root(Root::Temp(OpRef::Flow {
                    block: b.id,
                    ordinal: i as u32,
                }))
            {
                return Err(err(
                    f,
                    &format!("block {} op {i}", b.id),
                    "an owner-producing result has no temporary owned path",
                ));
            }
        }
    }
    let entry_loans = |root: &Root| {
        f.body
            .loans
            .iter()
            .filter(|l| {
                l.creation.is_none() && l.origin.fields.is_empty() && l.origin.root == *root
            })
            .count()
    };
    if matches!(f.receiver, ReceiverKind::Shared | ReceiverKind::Exclusive)
        && entry_loans(&Root::Receiver) != 1
    {
        return Err(err(
            f,
            "loans",
            "a shared/exclusive receiver has exactly one entry loan",
        ));
    }
    for p in &f.params {
        let borrowed = matches!(p.ty, Type::Ref(_) | Type::Mut(_) | Type::SliceByte);
        let n = entry_loans(&Root::Param(p.ordinal));
        if (borrowed && n != 1) || (!borrowed && n != 0) {
            return Err(err(
                f,
                "loans",
                format!(
                    "parameter {} needs exactly {} entry loan(s)",
                    p.name,
                    u8::from(borrowed)
                ),
            ));
        }
    }
    if !matches!(f.receiver, ReceiverKind::Shared | ReceiverKind::Exclusive)
        && entry_loans(&Root::Receiver) != 0
    {
        return Err(err(
            f,
            "loans",
            "only a shared/exclusive receiver has an entry loan",
        ));
    }
    Ok(())
}

/// SSA operands name a flow operation earlier in the same block or in a
/// block that dominates the use (Cooper–Harvey–Kennedy dominators over the
/// reverse postorder; O(1) queries through dominator-tree intervals).
fn check_dominance(f: &Function, index: &FnIndex) -> Result<()> {
    let n = f.body.blocks.len();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (id, out) in succ.iter_mut().enumerate() {
        let b = &f.body.blocks[index.blocks[&(id as u32)]];
        for (s, _) in successors(f, b)? {
            if let Some(s) = s {
                out.push(s as usize);
            }
        }
    }
    // Reverse postorder from the entry.
    let mut post = Vec::with_capacity(n);
    let mut visited = vec![false; n];
    let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
    visited[0] = true;
    while let Some((b, i)) = stack.pop() {
        if i < succ[b].len() {
            stack.push((b, i + 1));
            let s = succ[b][i];
            if !visited[s] {
                visited[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    let mut rpo_index = vec![usize::MAX; n];
    for (i, &b) in post.iter().rev().enumerate() {
        rpo_index[b] = i;
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (b, ss) in succ.iter().enumerate() {
        for &s in ss {
            preds[s].push(b);
        }
    }
    const UNDEF: usize = usize::MAX;
    let mut idom = vec![UNDEF; n];
    idom[0] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in post.iter().rev().skip(1) {
            let mut new = UNDEF;
            for &p in &preds[b] {
                if idom[p] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    p
                } else {
                    let (mut x, mut y) = (p, new);
                    while x != y {
                        while rpo_index[x] > rpo_index[y] {
                            x = idom[x];
                        }
                        while rpo_index[y] > rpo_index[x] {
                            y = idom[y];
                        }
                    }
                    x
                };
            }
            if new != UNDEF && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    // Dominator-tree intervals.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for b in 1..n {
        if idom[b] != UNDEF {
            children[idom[b]].push(b);
        }
    }
    let (mut enter, mut exit) = (vec![0usize; n], vec![0usize; n]);
    let mut clock = 0;
    let mut stack: Vec<(usize, bool)> = vec![(0, false)];
    while let Some((b, done)) = stack.pop() {
        if done {
            exit[b] = clock;
            clock += 1;
            continue;
        }
        enter[b] = clock;
        clock += 1;
        stack.push((b, true));
        for &c in &children[b] {
            stack.push((c, false));
        }
    }
    let dominates = |a: usize, b: usize| enter[a] <= enter[b] && exit[b] <= exit[a];
    for b in &f.body.blocks {
        for (i, op) in b.ops.iter().enumerate() {
            for o in &op.operands {
                if let Operand::Value(OpRef::Flow { block, ordinal }) = o {
                    let ok = if *block == b.id {
                        (*ordinal as usize) < i
                    } else {
                        dominates(*block as usize, b.id as usize)
                    };
                    if !ok {
                        return Err(err(
                            f,
                            &format!("block {} op {i}", b.id),
                            "an SSA operand must be defined earlier on every path (dominance)",
                        ));
                    }
                }
            }
        }
    }
    Ok(())
}
