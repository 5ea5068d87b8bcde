use zlm::{decode::decode, sample, write::write};

#[test]
fn sample_round_trips() {
    let m = sample::module("geo.shapes", 3);
    let bytes = write(&m).expect("write");
    let d = decode(&bytes).expect("decode");
    assert_eq!(write(d.module()).unwrap(), bytes);
}

#[test]
fn text_round_trips() {
    let m = sample::module("geo.shapes", 2);
    let text = zlm::text::print(&m).unwrap();
    let parsed = zlm::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(write(&parsed).unwrap(), write(&m).unwrap());
    assert_eq!(zlm::text::print(&parsed).unwrap(), text);
}

#[test]
#[ignore = "writes examples/zlm/shapes.zlt from the sample module"]
fn emit_sample_text() {
    let m = sample::module("geo.shapes", 2);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/zlm/shapes.zlt");
    std::fs::write(path, zlm::text::print(&m).unwrap()).unwrap();
}

#[test]
fn examples_assemble_validate_and_round_trip() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/zlm");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("zlt") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let bytes = write(&m).unwrap();
        let d = decode(&bytes).unwrap();
        assert_eq!(
            zlm::text::print(d.module()).unwrap(),
            text,
            "{} is not in canonical text form",
            path.display()
        );
        // Every single-byte change is rejected.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x20;
            assert!(
                decode(&b).is_err(),
                "{}: mutation at {i} accepted",
                path.display()
            );
        }
        n += 1;
    }
    assert!(n >= 2);
}

#[test]
fn text_errors_carry_line_offsets() {
    let header = "zlm 1.9 package p module m profile exact mode checked";
    let e = zlm::text::parse(&format!("{header}\ndecl bogus X public\n")).unwrap_err();
    assert_eq!(e.code, "ZLM-SYNTAX");
    assert!(e.message.starts_with("line 2"), "{e}");
    assert_eq!(e.offset, Some(header.len() as u64 + 1));
}

#[test]
fn imports_resolve_against_their_provider() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/zlm");
    let load = |n: &str| {
        zlm::text::parse(&std::fs::read_to_string(format!("{dir}/{n}.zlt")).unwrap()).unwrap()
    };
    let (shapes, canvas) = (load("shapes"), load("canvas"));
    zlm::decode::check_imports(&canvas, std::slice::from_ref(&shapes)).unwrap();
    assert_eq!(
        zlm::decode::check_imports(&canvas, &[]).unwrap_err().code,
        "ZLM-IMPORT"
    );
    // A changed provider interface makes the carried digest stale.
    let mut changed = shapes.clone();
    changed.declarations[0].variants[1].fields[0].name = "r".into();
    assert_eq!(
        zlm::decode::check_imports(&canvas, &[changed])
            .unwrap_err()
            .code,
        "ZLM-IMPORT"
    );
}
