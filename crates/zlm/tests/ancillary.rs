//! Ancillary data (C0-ART-004, docs/zlm/ancillary.md): a source map and the
//! producer provenance travel after the payload in hash-addressed sections
//! that never change the payload's semantic identity or artifact address;
//! a corrupted section is rejected on its own hash and the payload stays
//! valid; the readers take arbitrary bytes without panicking.

use proptest::prelude::*;
use zlm::ancillary::{self, Records, SourceMap, kind};
use zlm::model::OpRef;

/// Every example text, with its file name.
fn examples() -> Vec<(String, String)> {
    let root = format!("{}/../../examples/zlm", env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [root.clone(), format!("{root}/run")] {
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "zlt"))
            .collect();
        names.sort();
        for p in names {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
    }
    out
}

/// (payload, payload with the source map and provenance) of `text`.
fn assemble(file: &str, text: &str) -> (Vec<u8>, Vec<u8>) {
    let (m, positions) = zlm::text::parse_with_positions(text).unwrap();
    let payload = zlm::write::write(&m).unwrap();
    let annotated =
        ancillary::annotate(&payload, file, text, &m, &positions, "irkit", "test").unwrap();
    (payload, annotated)
}

/// The module's identities decoded from `bytes`: content, interface and
/// every declaration and function identity, and the artifact address.
fn identities(bytes: &[u8], providers: &[&zlm::decode::Checked]) -> String {
    let c = zlm::decode::decode_linked(bytes, providers).unwrap();
    format!(
        "{:?}|{:?}|{:?}|{}",
        c.module_content(),
        c.ids().module_interface,
        c.ids().decls,
        zlm::hash::to_hex(&zlm::address(bytes))
    )
}

/// Asserts that the source map covers every function and operation of
/// `text`'s module, each at the line where it is written.
fn covers_every_operation(file: &str, text: &str, annotated: &[u8]) {
    let records = Records::of_file(annotated).unwrap().expect("a container");
    let map = records.source_map.expect("a source map").unwrap();
    assert_eq!(map.files, vec![file.to_string()]);
    let m = zlm::text::parse(text).unwrap();
    let (ids, _) = zlm::ids::compute(&m, false).unwrap();
    let lines: Vec<&str> = text.split('\n').collect();
    for (d, decl) in m.declarations.iter().enumerate() {
        for (f, function) in decl.functions.iter().enumerate() {
            let mapped = map
                .function(&ids.decls[d].functions[f].sig)
                .expect("mapped");
            assert_eq!(mapped.name, format!("{}.{}", decl.name, function.name));
            assert!(
                lines[mapped.at.line as usize - 1]
                    .trim_start()
                    .starts_with("func ")
            );
            let flow = function.body.blocks.iter().flat_map(|b| {
                (0..b.ops.len()).map(move |i| OpRef::Flow {
                    block: b.id,
                    ordinal: i as u32,
                })
            });
            let recipe = function.body.edges.iter().flat_map(|e| {
                (0..e.drops.len()).map(move |i| OpRef::Recipe {
                    edge: e.id,
                    ordinal: i as u32,
                })
            });
            let all: Vec<OpRef> = flow.chain(recipe).collect();
            assert_eq!(all.len(), mapped.ops.len(), "{}", mapped.name);
            for r in all {
                let at = map.position(&mapped.id, Some(r)).unwrap();
                let line = lines[at.line as usize - 1];
                let op = match r {
                    OpRef::Flow { block, ordinal } => {
                        &function
                            .body
                            .blocks
                            .iter()
                            .find(|b| b.id == block)
                            .unwrap()
                            .ops[ordinal as usize]
                    }
                    OpRef::Recipe { edge, ordinal } => {
                        &function
                            .body
                            .edges
                            .iter()
                            .find(|e| e.id == edge)
                            .unwrap()
                            .drops[ordinal as usize]
                    }
                };
                let tag = zlm::model::tag::name(op.tag).unwrap();
                assert_eq!(
                    line.trim_start().split(' ').next(),
                    Some(tag),
                    "{r:?} at {at}"
                );
                assert_eq!(
                    at.column as usize,
                    line.len() - line.trim_start().len() + 1,
                    "{r:?}"
                );
            }
        }
    }
}

#[test]
fn every_example_keeps_its_identities_and_address_with_a_source_map() {
    let mut providers = Vec::new();
    let all = examples();
    // Providers first: the package examples import from these.
    for (file, text) in &all {
        if file.ends_with("shapes.zlt") || file.ends_with("pkg_store.zlt") {
            providers.push(zlm::decode::decode(&assemble(file, text).1).unwrap());
        }
    }
    let refs: Vec<&zlm::decode::Checked> = providers.iter().collect();
    for (file, text) in &all {
        let (payload, annotated) = assemble(file, text);
        assert!(annotated.len() > payload.len(), "{file}");
        assert_eq!(&annotated[..payload.len()], &payload[..], "{file}");
        assert_eq!(
            identities(&payload, &refs),
            identities(&annotated, &refs),
            "{file}"
        );
        assert_eq!(zlm::address(&payload), zlm::address(&annotated), "{file}");
        // dis ignores it: the same text.
        let dis = |b: &[u8]| zlm::text::print(zlm::decode::decode(b).unwrap().module()).unwrap();
        assert_eq!(dis(&payload), dis(&annotated), "{file}");
        covers_every_operation(file, text, &annotated);
    }
}

#[test]
fn every_generated_module_keeps_its_identities_with_a_source_map() {
    for seed in 0..40 {
        let text = zlm::testgen::module_text(seed);
        let (payload, annotated) = assemble("gen.zlt", &text);
        assert_eq!(
            identities(&payload, &[]),
            identities(&annotated, &[]),
            "seed {seed}"
        );
        covers_every_operation("gen.zlt", &text, &annotated);
    }
    // The package oracle's modules: providers decoded in order, each module
    // checked against the ones before it.
    for seed in 0..6 {
        let pkg = zlm::testgen::package_text(seed);
        let mut decoded: Vec<zlm::decode::Checked> = Vec::new();
        for text in pkg.providers.iter().chain(std::iter::once(&pkg.root)) {
            let (payload, annotated) = assemble("gen.zlt", text);
            let refs: Vec<&zlm::decode::Checked> = decoded.iter().collect();
            assert_eq!(
                identities(&payload, &refs),
                identities(&annotated, &refs),
                "package seed {seed}"
            );
            covers_every_operation("gen.zlt", text, &annotated);
            let checked = zlm::decode::decode_linked(&annotated, &refs).unwrap();
            decoded.push(checked);
        }
    }
}

/// The file offset of the first body of `kind` in `annotated`.
fn body_offset(annotated: &[u8], k: u32) -> usize {
    let (payload, anc) = ancillary::split(annotated);
    let c = ancillary::read(payload, anc.unwrap()).unwrap();
    c.entries.iter().find(|e| e.kind == k).unwrap().offset as usize
}

#[test]
fn a_corrupted_source_map_is_rejected_on_its_own_hash_and_the_payload_stays_valid() {
    let (file, text) = examples()
        .into_iter()
        .find(|(f, _)| f.ends_with("faults.zlt"))
        .unwrap();
    let (payload, mut annotated) = assemble(&file, &text);
    let at = body_offset(&annotated, kind::SOURCE_MAP) + 40;
    annotated[at] ^= 0x20;
    let records = Records::of_file(&annotated).unwrap().unwrap();
    let e = records.source_map.unwrap().expect_err("corrupted map");
    assert_eq!(e.code, "ZLM-ANCILLARY-HASH", "{e}");
    // The other section and the payload are untouched.
    records.provenance.unwrap().unwrap();
    assert_eq!(identities(&payload, &[]), identities(&annotated, &[]));
}

#[test]
fn a_corrupted_directory_rejects_the_container_and_the_payload_stays_valid() {
    let (file, text) = examples()
        .into_iter()
        .find(|(f, _)| f.ends_with("loop.zlt"))
        .unwrap();
    let (payload, annotated) = assemble(&file, &text);
    // A body length one byte longer.
    let mut longer = annotated.clone();
    longer[payload.len() + 48 + 8] ^= 1;
    let e = Records::of_file(&longer).expect_err("bad directory");
    assert_eq!(e.code, "ZLM-ANCILLARY", "{e}");
    zlm::decode::decode(&longer).unwrap();
    // A container naming another payload.
    let mut other = annotated.clone();
    other[payload.len() + 8] ^= 1;
    let e = Records::of_file(&other).expect_err("other payload");
    assert_eq!(e.code, "ZLM-ANCILLARY", "{e}");
    assert!(e.message.contains("names payload"), "{e}");
    zlm::decode::decode(&other).unwrap();
}

#[test]
fn bytes_after_the_payload_that_are_no_container_still_reject_as_trailing() {
    let (file, text) = examples()
        .into_iter()
        .find(|(f, _)| f.ends_with("loop.zlt"))
        .unwrap();
    let (mut payload, _) = assemble(&file, &text);
    payload.extend_from_slice(b"ZLMB");
    let e = zlm::decode::decode(&payload).expect_err("trailing");
    assert_eq!(e.code, "ZLM-LENGTH", "{e}");
}

#[test]
fn records_round_trip() {
    let (file, text) = examples()
        .into_iter()
        .find(|(f, _)| f.ends_with("own.zlt"))
        .unwrap();
    let (m, positions) = zlm::text::parse_with_positions(&text).unwrap();
    let map = SourceMap::from_text(&file, &m, &positions).unwrap();
    assert_eq!(SourceMap::decode(&map.encode(), 0).unwrap(), map);
    let p = ancillary::Provenance::new("irkit", "0.1", &[("b.zlt", b"b"), ("a.zlt", b"a")]);
    assert_eq!(p.sources[0].0, "a.zlt");
    assert_eq!(ancillary::Provenance::decode(&p.encode(), 0).unwrap(), p);
    let t = ancillary::TargetMaterialization {
        artifact: [7; 32],
        record: "{\"format\":\"irkit.zlm.target-record/1\"}".into(),
    };
    assert_eq!(
        ancillary::TargetMaterialization::decode(&t.encode(), 0).unwrap(),
        t
    );
    // Two target records and the source map, in any order, are written in
    // canonical order and read back.
    let payload = zlm::write::write(&m).unwrap();
    let sections = [
        ancillary::Section {
            kind: kind::TARGET,
            body: t.encode(),
        },
        ancillary::Section {
            kind: kind::SOURCE_MAP,
            body: map.encode(),
        },
        ancillary::Section {
            kind: kind::TARGET,
            body: ancillary::TargetMaterialization {
                artifact: [9; 32],
                ..t.clone()
            }
            .encode(),
        },
    ];
    let mut reversed = sections.clone();
    reversed.reverse();
    let file_bytes = ancillary::write(&payload, &sections);
    assert_eq!(file_bytes, ancillary::write(&payload, &reversed));
    let r = Records::of_file(&file_bytes).unwrap().unwrap();
    assert_eq!(r.source_map.unwrap().unwrap(), map);
    assert_eq!(r.targets.len(), 2);
    assert!(r.provenance.is_none());
}

fn payload() -> Vec<u8> {
    let text = zlm::testgen::module_text(3);
    zlm::write::write(&zlm::text::parse(&text).unwrap()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn the_container_reader_takes_arbitrary_bytes(tail in proptest::collection::vec(any::<u8>(), 0..400)) {
        let payload = payload();
        let mut container = b"ZLMA".to_vec();
        container.extend_from_slice(&tail);
        let _ = ancillary::read(&payload, &container);
        let _ = ancillary::read(&payload, &tail);
        let mut file = payload.clone();
        file.extend_from_slice(&container);
        // The payload decodes whatever follows it.
        prop_assert!(zlm::decode::decode(&file).is_ok());
        let _ = Records::of_file(&file);
    }

    #[test]
    fn the_record_readers_take_arbitrary_bytes(body in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = SourceMap::decode(&body, 0);
        let _ = ancillary::Provenance::decode(&body, 0);
        let _ = ancillary::TargetMaterialization::decode(&body, 0);
    }

    #[test]
    fn a_patched_container_never_panics_and_never_touches_the_payload(
        at in 0usize..4096, byte in any::<u8>()
    ) {
        let text = zlm::testgen::module_text(5);
        let (payload, mut file) = assemble("gen.zlt", &text);
        let i = payload.len() + at % (file.len() - payload.len());
        file[i] = byte;
        let _ = Records::of_file(&file);
        if file[payload.len()..].starts_with(b"ZLMA") {
            // Still a container: the payload decodes and keeps its address.
            prop_assert!(zlm::decode::decode(&file).is_ok());
            prop_assert_eq!(zlm::address(&file), zlm::address(&payload));
        } else {
            // No container follows: the whole input is the (invalid) payload.
            prop_assert_eq!(zlm::decode::decode(&file).unwrap_err().code, "ZLM-LENGTH");
        }
    }
}
