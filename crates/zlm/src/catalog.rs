//! The intrinsic catalog `zerglang.selfhost-intrinsics/1` (project
//! definition, docs/zlm/catalog.md).

use crate::hash::{Id, domain, h, opt, seq, u32p};
use crate::ids::hasher::Hasher;
use crate::model::{CallableKind, Effect, ReceiverKind, ScalarKind, Type};
use std::sync::OnceLock;

/// The stable catalog ID.
pub use crate::hash::CATALOG_ID;

/// One catalog function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Selector ID.
    pub selector: u32,
    /// Owner type instance.
    pub owner: Type,
    /// Callable kind.
    pub callable: CallableKind,
    /// Receiver kind.
    pub receiver: ReceiverKind,
    /// Message name.
    pub name: &'static str,
    /// Parameters (name, type) in ordinal order.
    pub params: Vec<(&'static str, Type)>,
    /// Result type.
    pub result: Type,
    /// Effect set.
    pub effects: Vec<Effect>,
}

fn u64t() -> Type {
    Type::Scalar(ScalarKind::UInt64)
}
fn byte() -> Type {
    Type::Scalar(ScalarKind::Byte)
}
fn alloc_ref() -> Type {
    Type::Ref(Box::new(Type::AllocatorBytesError))
}

/// Every entry, in selector order.
pub fn entries() -> &'static [Entry] {
    static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        use ReceiverKind::{Exclusive, Shared};
        let ty = ReceiverKind::Type;
        let e = |selector, owner, receiver, name, params, result, effects| Entry {
            selector,
            owner,
            callable: CallableKind::Message,
            receiver,
            name,
            params,
            result,
            effects,
        };
        let arr = || Type::ArrayByte;
        let slice = || Type::SliceByte;
        vec![
            e(0, Type::Unit, ty, "value", vec![], Type::Unit, vec![]),
            e(1, arr(), Shared, "length", vec![], u64t(), vec![]),
            e(
                2,
                arr(),
                Shared,
                "get",
                vec![("index", u64t())],
                byte(),
                vec![],
            ),
            e(
                3,
                arr(),
                ty,
                "with_capacity",
                vec![("allocator", alloc_ref()), ("capacity", u64t())],
                Type::Result(Box::new(arr()), Box::new(u64t())),
                vec![Effect::Alloc],
            ),
            e(
                4,
                arr(),
                Exclusive,
                "push",
                vec![("allocator", alloc_ref()), ("value", byte())],
                Type::Result(Box::new(Type::Unit), Box::new(u64t())),
                vec![Effect::Alloc],
            ),
            e(
                5,
                arr(),
                Exclusive,
                "set",
                vec![("index", u64t()), ("value", byte())],
                Type::Unit,
                vec![],
            ),
            e(
                6,
                arr(),
                Shared,
                "slice",
                vec![("start", u64t()), ("end", u64t())],
                slice(),
                vec![],
            ),
            e(7, arr(), Exclusive, "clear", vec![], Type::Unit, vec![]),
            e(
                8,
                Type::AllocatorBytesError,
                Shared,
                "remaining",
                vec![],
                u64t(),
                vec![],
            ),
            e(9, slice(), Shared, "length", vec![], u64t(), vec![]),
            e(
                10,
                slice(),
                Shared,
                "get",
                vec![("index", u64t())],
                byte(),
                vec![],
            ),
        ]
    })
}

/// The entry with `selector`.
pub fn entry(selector: u32) -> Option<&'static Entry> {
    entries().get(selector as usize)
}

/// The receiver type of a function with owner type `owner`: shared
/// `Ref<Self>`, exclusive `Mut<Self>`, owned and type `Self`, none absent.
pub fn receiver_type(owner: &Type, receiver: ReceiverKind) -> Option<Type> {
    receiver.binding(owner)
}

/// Catalog content identity: `H(zerglang.zlm1.catalog-content.v1; catalog
/// ID, S((selector, catalog function-signature ID)...))`.
pub fn content_identity() -> Id {
    static ID: OnceLock<Id> = OnceLock::new();
    *ID.get_or_init(|| {
        let mut ids = Hasher::new(false);
        let elems: Vec<Vec<u8>> = entries()
            .iter()
            .map(|e| seq([u32p(e.selector), function_signature(&mut ids, e).to_vec()]))
            .collect();
        h(
            domain::CATALOG_CONTENT,
            &[CATALOG_ID.as_bytes().to_vec(), seq(elems)],
        )
    })
}

/// Looks up an entry by its catalog function-signature ID.
pub fn by_signature(id: &Id) -> Option<&'static Entry> {
    static IDS: OnceLock<Vec<Id>> = OnceLock::new();
    let ids = IDS.get_or_init(|| {
        let mut hasher = Hasher::new(false);
        entries()
            .iter()
            .map(|e| function_signature(&mut hasher, e))
            .collect()
    });
    ids.iter().position(|x| x == id).map(|i| &entries()[i])
}

/// The catalog function-signature ID of `selector`.
pub fn signature(selector: u32) -> Option<Id> {
    entry(selector).map(|e| function_signature(&mut Hasher::new(false), e))
}

/// The catalog function-signature ID of `e`, memoizing its types in `hasher`.
pub fn function_signature(hasher: &mut Hasher, e: &Entry) -> Id {
    let owner = hasher.type_id(&e.owner);
    let recv = receiver_type(&e.owner, e.receiver).map(|t| hasher.type_id(&t));
    let params: Vec<Vec<u8>> = e
        .params
        .iter()
        .enumerate()
        .map(|(i, (n, t))| {
            let flags = crate::ids::order::move_flag(t, &|_| None);
            hasher.param_sig(i as u32, n, t, flags)
        })
        .collect();
    let result = hasher.type_id(&e.result);
    let eff = hasher.effects(&e.effects);
    hasher.hash(
        || format!("catalog function {}#{} {}", CATALOG_ID, e.selector, e.name),
        domain::CATALOG_FUNCTION,
        vec![
            CATALOG_ID.as_bytes().to_vec(),
            u32p(e.selector),
            owner.to_vec(),
            u32p(e.callable.tag()),
            u32p(e.receiver.tag()),
            opt(recv.as_ref().map(|r| &r[..])),
            e.name.as_bytes().to_vec(),
            seq(params),
            result.to_vec(),
            eff.to_vec(),
        ],
    )
}
