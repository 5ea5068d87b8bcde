//! What the random-module generator (`zlm::testgen`, the corpus of every
//! engine's differential oracle) covers of the spec, counted over a fixed
//! run of seeds: every canonical operation tag 0–52, every contract tag,
//! every catalog selector, each module accepted by the checker. Forms the
//! generator does not make would be listed exactly in `NOT_GENERATED`
//! (empty: a form that stops being generated fails the test).

use std::collections::BTreeSet;
use zlm::model::{Aux, ContractOperand, ReceiverKind, Type, ctag, tag};

/// Seeds counted: modules from `module_text` and packages from
/// `package_text` (their root and providers).
const SEEDS: u64 = 300;

/// `op:NAME`, `contract:NAME` and `selector:N` forms the generator does
/// not produce (none: every form the spec defines is generated).
const NOT_GENERATED: &[&str] = &[];

/// The checker's verdict on generated `text`, given the checked modules it
/// may import from: every generated module must be accepted.
fn checked(text: &str, providers: &[zlm::decode::Checked]) -> zlm::decode::Checked {
    let m = zlm::text::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let refs: Vec<&zlm::decode::Checked> = providers.iter().collect();
    zlm::decode::from_model(&m, &refs)
        .unwrap_or_else(|e| panic!("generated module rejected: {e}\n{text}"))
}

#[test]
fn the_generator_covers_every_listed_form() {
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut modules = 0usize;
    let mut count = |text: &str, seen: &mut BTreeSet<String>| {
        let m = zlm::text::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        modules += 1;
        for f in m.declarations.iter().flat_map(|d| &d.functions) {
            let ops = f
                .body
                .blocks
                .iter()
                .flat_map(|b| &b.ops)
                .chain(f.body.edges.iter().flat_map(|e| &e.drops));
            for op in ops {
                seen.insert(format!("op:{}", tag::name(op.tag).unwrap_or("?")));
                // Tag 43 names the slice selector in its second auxiliary.
                for aux in [&op.aux0, &op.aux1] {
                    if let Aux::CatalogFunc(id) = aux
                        && let Some(e) = zlm::catalog::by_signature(id)
                    {
                        seen.insert(format!("selector:{}", e.selector));
                    }
                }
                if op.tag == tag::UNIT_VALUE {
                    seen.insert("selector:0".into());
                }
            }
            let types = f
                .params
                .iter()
                .map(|p| &p.ty)
                .chain([&f.result])
                .chain(f.body.locals.iter().map(|l| &l.ty))
                .chain(
                    f.body
                        .blocks
                        .iter()
                        .flat_map(|b| &b.ops)
                        .filter_map(|o| o.result.as_ref()),
                );
            for t in types {
                type_kinds(t, seen);
            }
            for (clause, exprs) in [("requires", &f.requires), ("ensures", &f.ensures)] {
                for op in exprs.iter().flat_map(|e| &e.ops) {
                    seen.insert(format!("contract:{}", ctag::name(op.tag).unwrap_or("?")));
                    if op.tag == 3 {
                        seen.insert(format!("{clause}:pure_call"));
                        match op.reference.and_then(|id| zlm::catalog::by_signature(&id)) {
                            Some(e) if op.aux0 == 1 => {
                                seen.insert(format!("selector:{}", e.selector));
                                seen.insert(format!("contract-call:catalog:{}", e.selector));
                            }
                            _ => {}
                        }
                    }
                    // What the receiver binding of a pure call or a field
                    // copy is: the function's receiver (by kind) or a
                    // parameter (by type kind); a type-receiver call has
                    // only arguments.
                    if op.tag == 1 || op.tag == 3 {
                        let binding = match op.operands.first() {
                            Some(ContractOperand::Receiver) => {
                                format!("{:?} receiver", f.receiver).to_lowercase()
                            }
                            Some(ContractOperand::Param(n)) if op.tag == 1 || op.aux0 == 1 => f
                                .params
                                .iter()
                                .find(|p| p.ordinal == *n)
                                .map_or("?".into(), |p| binding_kind(&p.ty)),
                            _ if op.tag == 3 && op.aux0 == 0 => "type callee".into(),
                            _ => "constant".into(),
                        };
                        let name = ctag::name(op.tag).unwrap_or("?");
                        seen.insert(format!("contract-binding:{name}:{binding}"));
                    }
                }
            }
        }
    };
    for seed in 0..SEEDS {
        let text = zlm::testgen::module_text(seed);
        checked(&text, &[]);
        count(&text, &mut seen);
        let p = zlm::testgen::package_text(seed);
        let mut providers = Vec::new();
        for t in &p.providers {
            providers.push(checked(t, &providers));
            count(t, &mut seen);
        }
        checked(&p.root, &providers);
        count(&p.root, &mut seen);
    }
    let mut forms: Vec<String> = Vec::new();
    for t in 0..=52u32 {
        if let Some(n) = tag::name(t) {
            forms.push(format!("op:{n}"));
        }
    }
    for t in 0..25u32 {
        // Tags 2 and 6 are reserved: no canonical spelling.
        if t != 2 && t != 6 {
            forms.push(format!("contract:{}", ctag::name(t).unwrap_or("?")));
        }
    }
    for e in zlm::catalog::entries() {
        forms.push(format!("selector:{}", e.selector));
        // Pure callees in contracts: no effects, a shared or type receiver,
        // scalar (Copy, nonborrow) parameters and a scalar result (the
        // Unit of selector 0 has no contract operation to consume it).
        let pure = e.effects.is_empty()
            && matches!(e.receiver, ReceiverKind::Shared | ReceiverKind::Type)
            && e.params.iter().all(|(_, t)| matches!(t, Type::Scalar(_)))
            && matches!(e.result, Type::Scalar(_));
        if pure {
            forms.push(format!("contract-call:catalog:{}", e.selector));
        }
    }
    forms.extend(
        [
            "requires:pure_call",
            "ensures:pure_call",
            // Pure-call and field-copy bindings: the shared, exclusive and
            // owned receivers, Ref, Mut and Slice parameters, and calls of
            // type-receiver functions.
            "contract-binding:pure_call:shared receiver",
            "contract-binding:pure_call:exclusive receiver",
            "contract-binding:pure_call:owned receiver",
            "contract-binding:pure_call:Ref parameter",
            "contract-binding:pure_call:Mut parameter",
            "contract-binding:pure_call:Slice parameter",
            "contract-binding:pure_call:type callee",
            "contract-binding:field_copy:shared receiver",
            "contract-binding:field_copy:exclusive receiver",
            "contract-binding:field_copy:owned receiver",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    for kind in TYPE_KINDS {
        forms.push(format!("type:{kind}"));
    }
    let missing: Vec<&str> = forms
        .iter()
        .filter(|f| !seen.contains(*f))
        .map(|s| s.as_str())
        .collect();
    eprintln!(
        "testgen: {modules} modules, {} of {} forms generated",
        forms.len() - missing.len(),
        forms.len()
    );
    assert_eq!(missing, NOT_GENERATED, "the generator's coverage changed");
}

/// Every type kind of the spec's type-instance table (kind tags 0–9).
const TYPE_KINDS: [&str; 10] = [
    "Scalar",
    "Unit",
    "Never",
    "Nominal",
    "Result",
    "Array<Byte>",
    "Slice<Byte>",
    "Ref",
    "Mut",
    "Allocator<BytesError>",
];

/// Records `type:KIND` for `t` and every type inside it.
fn type_kinds(t: &Type, seen: &mut BTreeSet<String>) {
    let kind = match t {
        Type::Scalar(_) => "Scalar",
        Type::Unit => "Unit",
        Type::Never => "Never",
        Type::Nominal(_) => "Nominal",
        Type::Result(ok, err) => {
            type_kinds(ok, seen);
            type_kinds(err, seen);
            "Result"
        }
        Type::ArrayByte => "Array<Byte>",
        Type::SliceByte => "Slice<Byte>",
        Type::Ref(inner) => {
            type_kinds(inner, seen);
            "Ref"
        }
        Type::Mut(inner) => {
            type_kinds(inner, seen);
            "Mut"
        }
        Type::AllocatorBytesError => "Allocator<BytesError>",
    };
    seen.insert(format!("type:{kind}"));
}

/// How a parameter binding is named in coverage forms: `Ref parameter`,
/// `Mut parameter`, `Slice parameter` or `owned parameter`.
fn binding_kind(t: &Type) -> String {
    match t {
        Type::Ref(_) => "Ref parameter",
        Type::Mut(_) => "Mut parameter",
        Type::SliceByte => "Slice parameter",
        _ => "owned parameter",
    }
    .into()
}
