//! `decode` is the only way to a `Checked` module, and the interpreter takes
//! nothing else (C0-ART-002): a module whose imports were not resolved
//! against their providers never runs, and a missing or stale provider
//! rejects before the dependent module is checked.

use zlm::decode::{Checked, decode, decode_linked, from_model};
use zlm::interp::{Interp, RunError, Value};

fn example(name: &str) -> zlm::Module {
    let path = format!(
        "{}/../../examples/zlm/{name}.zlt",
        env!("CARGO_MANIFEST_DIR")
    );
    zlm::text::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn bytes(name: &str) -> Vec<u8> {
    zlm::write::write(&example(name)).unwrap()
}

fn refused(checked: &Checked) -> zlm::Error {
    match Interp::new(checked) {
        Err(RunError::Invalid(e)) => e,
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a module with unresolved imports must not run"),
    }
}

#[test]
fn unresolved_imports_never_run() {
    let canvas = decode(&bytes("canvas")).unwrap();
    assert!(!canvas.imports_resolved());
    let e = refused(&canvas);
    assert_eq!(e.code, "ZLM-IMPORT");
    assert!(e.message.contains("was not supplied"), "{e}");
    // A module without imports needs no providers.
    let shapes = decode(&bytes("shapes")).unwrap();
    assert!(shapes.imports_resolved());
    assert!(Interp::new(&shapes).is_ok());
}

#[test]
fn resolved_imports_run() {
    let shapes = decode(&bytes("shapes")).unwrap();
    let canvas = decode_linked(&bytes("canvas"), &[&shapes]).unwrap();
    assert!(canvas.imports_resolved());
    let it = Interp::new(&canvas).unwrap();
    let out = it.run("Canvas.widths", &[]).unwrap();
    assert_eq!(out.value, Value::Scalar(1));
    // The same through a model.
    let canvas = from_model(&example("canvas"), &[&shapes]).unwrap();
    assert!(Interp::new(&canvas).is_ok());
}

#[test]
fn a_missing_or_stale_provider_rejects_before_checking() {
    let shapes = decode(&bytes("shapes")).unwrap();
    let mut changed = example("shapes");
    changed.declarations[0].variants[1].fields[0].name = "r".into();
    let stale = from_model(&changed, &[]).unwrap();
    // A dependent that is also invalid in itself (a wrong carried function
    // signature ID, found by the identity check after the projection).
    let canvas = example("canvas");
    let (ids, _) = zlm::ids::compute(&canvas, false).unwrap();
    let sig = ids.decls[1].functions[0].sig;
    let mut wrong = bytes("canvas");
    let at = wrong.windows(32).position(|w| w == sig).unwrap();
    wrong[at] ^= 1;
    assert_eq!(decode(&wrong).unwrap_err().code, "ZLM-ID");
    assert_eq!(
        decode_linked(&wrong, &[&shapes]).unwrap_err().code,
        "ZLM-ID"
    );
    // Without its provider, or with a stale one, the import error comes first.
    for (providers, why) in [
        (vec![], "was not supplied"),
        (vec![&stale], "stale module-interface digest"),
    ] {
        for input in [&wrong, &bytes("canvas")] {
            let e = decode_linked(input, &providers).unwrap_err();
            assert_eq!(e.code, "ZLM-IMPORT", "{e}");
            assert!(e.message.contains(why), "{e}");
        }
    }
}
