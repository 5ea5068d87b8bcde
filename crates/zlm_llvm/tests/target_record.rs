//! The target record (C0-EXEC-003): parsing and checks, the convenience
//! form's marking, the pinned reproducibility profile (two builds with the
//! same record give byte-identical objects), and that the record — not the
//! host — decides the output (another CPU baseline or triple changes it).

mod support;

use support::*;
use zlm_llvm::target::{FORMAT, TargetRecord, backend_version};
use zlm_llvm::{LlvmError, Scope, aot, lower};

/// The pinned reproducibility profile of docs/zlm/llvm-engines.md.
fn pinned(triple: &str, cpu: &str) -> String {
    serde_json::json!({
        "format": FORMAT,
        "triple": triple,
        "cpu": cpu,
        "features": "",
        "optimization": "O2",
        "relocation": "pic",
        "code_model": "small",
        "backend_version": backend_version(),
        "linker": "cc",
        "linker_version": "cc (pinned by the record)",
        "host_abi": "x86_64-linux-gnu-lp64",
    })
    .to_string()
}

fn loop_unit() -> zlm_llvm::Lowered {
    let m = load("loop.zlt", "exact");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    lower(&checked, &Scope::Module).unwrap()
}

#[test]
fn two_builds_with_the_same_record_give_byte_identical_objects() {
    let unit = loop_unit();
    let rec = TargetRecord::parse(&pinned("x86_64-pc-linux-gnu", "x86-64")).unwrap();
    assert!(rec.reproducible);
    let a = aot::object(&unit, &rec).unwrap();
    let b = aot::object(&unit, &rec).unwrap();
    assert_eq!(a, b);
    assert_eq!(&a[..4], b"\x7fELF");
    // Decoding again and lowering again changes nothing either.
    let again = aot::object(&loop_unit(), &rec).unwrap();
    assert_eq!(a, again);
    // The record decides: another baseline or another triple is another output.
    let v3 = TargetRecord::parse(&pinned("x86_64-pc-linux-gnu", "x86-64-v3")).unwrap();
    let arm = TargetRecord::parse(&pinned("aarch64-unknown-linux-gnu", "generic")).unwrap();
    let c = aot::object(&unit, &arm).unwrap();
    assert_ne!(a, c);
    assert_eq!(c, aot::object(&unit, &arm).unwrap());
    let _ = aot::object(&unit, &v3).unwrap();
}

#[test]
fn records_are_checked_field_by_field() {
    let good: serde_json::Value =
        serde_json::from_str(&pinned("x86_64-pc-linux-gnu", "x86-64")).unwrap();
    let with = |k: &str, v: serde_json::Value| {
        let mut r = good.clone();
        r[k] = v;
        TargetRecord::parse(&r.to_string())
    };
    fn record_err<T: std::fmt::Debug>(r: Result<T, LlvmError>) -> String {
        match r {
            Err(e @ LlvmError::Record(_)) => {
                assert_eq!(e.code(), "C0-EXEC-003");
                e.to_string()
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(record_err(with("cpu", "native".into())).contains("ambient"));
    assert!(record_err(with("optimization", "O9".into())).contains("optimization"));
    assert!(record_err(with("relocation", "weird".into())).contains("relocation"));
    assert!(record_err(with("code_model", "tiny".into())).contains("code_model"));
    assert!(record_err(with("features", "avx2".into())).contains("features"));
    assert!(record_err(with("backend_version", "18.1.0".into())).contains("does not match"));
    assert!(record_err(with("format", "other/1".into())).contains("format"));
    assert!(record_err(with("host_abi", "".into())).contains("host_abi"));
    assert!(record_err(with("extra", 1.into())).contains("unknown field"));
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("triple");
    assert!(record_err(TargetRecord::parse(&missing.to_string())).contains("triple"));
    assert!(record_err(TargetRecord::parse("{")).contains("EOF"));
    // An unknown triple is refused when the build needs its target.
    let r = with("triple", "nosuch-unknown-none".into()).unwrap();
    assert!(record_err(aot::object(&loop_unit(), &r)).contains("nosuch"));
}

#[test]
fn the_convenience_record_is_marked_and_round_trips() {
    let r = host_record();
    assert!(!r.reproducible);
    assert!(
        r.note
            .as_deref()
            .unwrap()
            .contains("not reproducibility evidence")
    );
    assert_eq!(r.cpu, "generic");
    assert_eq!(r.features, "");
    // Written and read back as an explicit record, it becomes evidence.
    let back = TargetRecord::parse(&r.to_json()).unwrap();
    assert!(back.reproducible);
    assert_eq!(back.note, None);
    assert_eq!(back.triple, r.triple);
}

#[test]
fn a_linked_program_rejects_a_record_whose_linker_identity_differs() {
    let unit = loop_unit();
    let rec = TargetRecord::parse(&pinned("x86_64-pc-linux-gnu", "x86-64")).unwrap();
    match aot::AotProgram::build(&unit, &rec) {
        Err(LlvmError::Record(m)) => assert!(m.contains("linker_version"), "{m}"),
        other => panic!("{other:?}"),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Arbitrary text never panics the record reader: a record or C0-EXEC-003.
    #[test]
    fn arbitrary_text_is_a_record_or_a_record_error(s in ".{0,400}") {
        if let Err(e) = TargetRecord::parse(&s) {
            proptest::prop_assert_eq!(e.code(), "C0-EXEC-003");
        }
    }

    /// Any field of a good record replaced by an arbitrary string value is
    /// accepted and round-trips, or is refused with C0-EXEC-003.
    #[test]
    fn arbitrary_field_values_are_checked(field in 0usize..11, v in ".{0,40}") {
        let mut r: serde_json::Value =
            serde_json::from_str(&pinned("x86_64-pc-linux-gnu", "x86-64")).unwrap();
        let key = r.as_object().unwrap().keys().nth(field).unwrap().clone();
        r[&key] = v.into();
        match TargetRecord::parse(&r.to_string()) {
            Ok(rec) => {
                let back = TargetRecord::parse(&rec.to_json()).unwrap();
                proptest::prop_assert_eq!(back, rec);
            }
            Err(e) => proptest::prop_assert_eq!(e.code(), "C0-EXEC-003"),
        }
    }
}
