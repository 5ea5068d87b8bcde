//! The catalog-bound `sdk.bytes` facade (project decision, see
//! `docs/zlm/semantics.md`): the certified `Bytes.slice` forwarding body,
//! the `BytesBuilder.finish` definition that alone may hold
//! BYTE_BUILDER_FINISH, and the fixed private layout of both declarations.
//!
//! `sdk.bytes` is the module `sdk.bytes` of package `sdk`. Its `Bytes` and
//! `BytesBuilder` are value declarations with exactly one private field,
//! ordinal zero, `storage: Array<Byte>` (`let` for `Bytes`, either
//! mutability for the builder). The nominal IDs are derived from that
//! namespace, so a `Ref<Bytes>` names the certified type whether `Bytes` is
//! local (inside `sdk.bytes`) or imported.

use super::context::{CResult, FnCheck, code};
use crate::hash::Id;
use crate::model::*;
use std::sync::OnceLock;

/// The SDK package name.
pub const PACKAGE: &str = "sdk";
/// The SDK byte module.
pub const MODULE: &str = "sdk.bytes";

/// Nominal IDs of `sdk.bytes.Bytes` and `sdk.bytes.BytesBuilder`.
pub fn nominals() -> (Id, Id) {
    static IDS: OnceLock<(Id, Id)> = OnceLock::new();
    *IDS.get_or_init(|| {
        let mut hasher = crate::ids::Hasher::new(false);
        let namespace = hasher.namespace(PACKAGE, MODULE);
        (
            hasher.nominal(&namespace, DeclKind::Value, "Bytes"),
            hasher.nominal(&namespace, DeclKind::Value, "BytesBuilder"),
        )
    })
}

/// Whether `ty` is the certified `Bytes` type.
pub fn is_bytes(ty: &Type) -> bool {
    matches!(ty, Type::Nominal(id) if *id == nominals().0)
}

/// Whether `ty` is the certified `BytesBuilder` type.
pub fn is_builder(ty: &Type) -> bool {
    matches!(ty, Type::Nominal(id) if *id == nominals().1)
}

/// Whether `ty` is `Ref<Bytes>` or `Mut<Bytes>` (the tag-43 facade form).
pub fn is_bytes_view(ty: &Type) -> bool {
    matches!(ty, Type::Ref(x) | Type::Mut(x) if is_bytes(x))
}

fn u64t() -> Type {
    Type::Scalar(ScalarKind::UInt64)
}

/// Whether the function under check is the exact `Bytes.slice` facade
/// signature (`shared slice(start: UInt64, end: UInt64) -> Slice<Byte>`,
/// empty effects, in `Bytes`).
pub(crate) fn is_facade_signature(ctx: &FnCheck<'_, '_>) -> bool {
    let function = ctx.function;
    let mut params: Vec<&Param> = function.params.iter().collect();
    params.sort_by_key(|p| p.ordinal);
    is_bytes(&ctx.self_ty)
        && function.callable == CallableKind::Message
        && function.receiver == ReceiverKind::Shared
        && function.name == "slice"
        && function.result == Type::SliceByte
        && function.effects.is_empty()
        && params.len() == 2
        && params[0].name == "start"
        && params[1].name == "end"
        && params.iter().all(|p| p.ty == u64t())
}

/// Whether a callee (declaration `decl_index`, function `function`) is the facade signature.
pub fn is_facade_callee(
    resolved: &super::context::Resolved<'_>,
    decl_index: usize,
    function: &Function,
) -> bool {
    let mut params: Vec<&Param> = function.params.iter().collect();
    params.sort_by_key(|p| p.ordinal);
    is_bytes(&resolved.self_type(decl_index))
        && function.receiver == ReceiverKind::Shared
        && function.name == "slice"
        && function.result == Type::SliceByte
        && params.len() == 2
}

/// Whether the function under check is `BytesBuilder.finish`
/// (`owned finish() -> Bytes`, empty effects).
pub(crate) fn is_finish(ctx: &FnCheck<'_, '_>) -> bool {
    let function = ctx.function;
    is_builder(&ctx.self_ty)
        && function.callable == CallableKind::Message
        && function.receiver == ReceiverKind::Owned
        && function.name == "finish"
        && function.params.is_empty()
        && is_bytes(&function.result)
        && function.effects.is_empty()
}

/// Declaration-level rules: the fixed private layout of the two SDK types
/// when they are declared locally.
pub fn check_decls(resolved: &super::context::Resolved<'_>) -> CResult<()> {
    for (decl_index, decl) in resolved.module.declarations.iter().enumerate() {
        let self_ty = resolved.self_type(decl_index);
        if !is_bytes(&self_ty) && !is_builder(&self_ty) {
            continue;
        }
        let ok = decl.fields.len() == 1 && {
            let field = &decl.fields[0];
            field.ordinal == 0
                && field.name == "storage"
                && field.visibility == Visibility::Private
                && field.ty == Type::ArrayByte
                && (is_builder(&self_ty) || field.mutability == Mutability::Let)
        };
        if !ok {
            return Err(super::context::CheckError {
                code: code::SDK,
                function: decl.name.clone(),
                block: None,
                op: None,
                edge: None,
                message: format!(
                    "sdk.bytes.{} must have exactly one private field 0 `storage: Array<Byte>`{}",
                    decl.name,
                    if is_bytes(&self_ty) { " (let)" } else { "" }
                ),
            });
        }
    }
    Ok(())
}

/// The one admitted body of the certified `Bytes.slice` facade: the shared
/// receiver entry loan, the private `storage` field path derived through
/// it, the two UInt64 parameter loads, one tag-43 over that field path and
/// the immediate ephemeral return of that loan value.
pub(crate) fn facade_body(ctx: &FnCheck<'_, '_>) -> Option<Body> {
    let storage = *ctx.r.ids.decls.get(ctx.decl_index)?.fields.first()?;
    let recv = PathKey {
        root: Root::Receiver,
        fields: vec![],
    };
    let field = PathKey {
        root: Root::Receiver,
        fields: vec![storage],
    };
    let param_place = |ordinal: u32| PathKey {
        root: Root::Param(ordinal),
        fields: vec![],
    };
    let at = |ordinal: u32| OpRef::Flow { block: 0, ordinal };
    let load = |ordinal: u32| Op {
        tag: tag::LOAD_LOCAL,
        result: Some(u64t()),
        operands: vec![Operand::Place(param_place(ordinal))],
        aux0: Aux::Path(param_place(ordinal)),
        aux1: Aux::None,
    };
    let slice_sig = crate::catalog::signature(6)?;
    Some(Body {
        locals: vec![],
        blocks: vec![Block {
            id: 0,
            ops: vec![
                load(0),
                load(1),
                Op {
                    tag: tag::BORROW_SLICE_BYTE,
                    result: Some(Type::SliceByte),
                    operands: vec![
                        Operand::Place(field.clone()),
                        Operand::Value(at(0)),
                        Operand::Value(at(1)),
                    ],
                    aux0: Aux::Loan(1),
                    aux1: Aux::CatalogFunc(slice_sig),
                },
                Op {
                    tag: tag::RETURN,
                    result: None,
                    operands: vec![Operand::Value(at(2))],
                    aux0: Aux::None,
                    aux1: Aux::None,
                },
            ],
        }],
        paths: vec![
            OwnedPath {
                key: recv.clone(),
                ty: ctx.self_ty.clone(),
            },
            OwnedPath {
                key: field.clone(),
                ty: Type::ArrayByte,
            },
            OwnedPath {
                key: param_place(0),
                ty: u64t(),
            },
            OwnedPath {
                key: param_place(1),
                ty: u64t(),
            },
        ],
        loans: vec![
            Loan {
                id: 0,
                kind: LoanKind::Shared,
                origin: recv,
                parent: None,
                borrowed: Type::Ref(Box::new(ctx.self_ty.clone())),
                creation: None,
                last_use: None,
            },
            Loan {
                id: 1,
                kind: LoanKind::ByteSlice,
                origin: field,
                parent: Some(0),
                borrowed: Type::SliceByte,
                creation: Some(at(2)),
                last_use: Some(at(3)),
            },
        ],
        edges: vec![CleanupEdge {
            id: 0,
            kind: EdgeKind::Return,
            source: 0,
            successor: None,
            drops: vec![],
        }],
    })
}

fn sorted(body: &Body) -> Body {
    let mut body = body.clone();
    body.locals.sort_by_key(|l| l.ordinal);
    body.blocks.sort_by_key(|x| x.id);
    body.paths.sort_by(|x, y| x.key.cmp(&y.key));
    body.loans.sort_by_key(|l| l.id);
    body.edges.sort_by_key(|e| e.id);
    body
}

/// Function-level rules: the facade signature is admitted only with its
/// exact certified body, inside `sdk.bytes`; ensures are empty there.
pub(crate) fn check_function(ctx: &FnCheck<'_, '_>) -> CResult<()> {
    if !is_facade_signature(ctx) {
        return Ok(());
    }
    let module = ctx.r.module;
    if module.package != PACKAGE || module.name != MODULE {
        return Err(ctx.err(
            code::SDK,
            None,
            None,
            "the Bytes.slice facade is certified only inside module sdk.bytes of package sdk",
        ));
    }
    if !ctx.function.ensures.is_empty() {
        return Err(ctx.err(
            code::SDK,
            None,
            None,
            "the Bytes.slice facade has no ensures (its result is a transient loan)",
        ));
    }
    let want = facade_body(ctx).map(|b| sorted(&b));
    if want.as_ref() != Some(&sorted(&ctx.function.body)) {
        return Err(ctx.err(
            code::SDK,
            None,
            None,
            "the Bytes.slice facade body differs from its one certified forwarding shape (receiver entry loan, storage field path, two UInt64 loads, one tag-43 over the field path, immediate return of that loan)",
        ));
    }
    Ok(())
}
