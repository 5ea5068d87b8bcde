//! What the random-module generator (`zlm::testgen`, the corpus of every
//! engine's differential oracle) covers of the spec, counted over a fixed
//! run of seeds: every canonical operation tag 0–52, every contract tag,
//! every catalog selector, each module accepted by the checker. Forms the
//! generator does not make would be listed exactly in `NOT_GENERATED`
//! (empty: a form that stops being generated fails the test).

use std::collections::BTreeSet;
use zlm::model::{Aux, ctag, tag};

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
            for e in f.requires.iter().chain(&f.ensures) {
                for op in &e.ops {
                    seen.insert(format!("contract:{}", ctag::name(op.tag).unwrap_or("?")));
                    if op.tag == 3
                        && op.aux0 == 1
                        && let Some(e) = op.reference.and_then(|id| zlm::catalog::by_signature(&id))
                    {
                        seen.insert(format!("selector:{}", e.selector));
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
