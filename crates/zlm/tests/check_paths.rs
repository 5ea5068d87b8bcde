//! The owned-path presence rule: every partially moved or addressed owner
//! field has exactly its canonical parent-linked path, and no path exists
//! that no rule prescribes (Copy/borrow-only values have none).

fn src() -> String {
    let p = format!(
        "{}/../../examples/zlm/run/own.zlt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(p).unwrap()
}

fn reject(text: &str, code: &str, needle: &str) {
    let m = zlm::text::parse(text).unwrap();
    let err = zlm::check::check(&m).expect_err("mutant must be rejected");
    assert_eq!(err.code, code, "{err}");
    assert!(err.message.contains(needle), "{err}");
    if let Ok(bytes) = zlm::write::write(&m) {
        let e = zlm::decode::decode(&bytes).expect_err("decode must reject");
        assert_eq!(e.code, code, "{e}");
    }
}

#[test]
fn partially_moved_field_path_is_present() {
    let m = zlm::text::parse(&src()).unwrap();
    zlm::check::check(&m).unwrap();
}

#[test]
fn partially_moved_field_without_its_path() {
    reject(
        &src().replace("    path l1/Pair.left @Box\n", ""),
        "ZLM-C-OWN",
        "FIELD_MOVE needs the field's owned path",
    );
}

#[test]
fn unprescribed_copy_field_path() {
    reject(
        &src().replace(
            "    path l1/Pair.left @Box\n",
            "    path l1/Pair.left @Box\n    path l0/Box.v Int32\n",
        ),
        "ZLM-C-OWN",
        "not prescribed",
    );
}

#[test]
fn unprescribed_owner_field_path() {
    reject(
        &src().replace(
            "    path l1/Pair.left @Box\n",
            "    path l1/Pair.left @Box\n    path l1/Pair.right @Box\n",
        ),
        "ZLM-C-OWN",
        "not prescribed",
    );
}

#[test]
fn unprescribed_copy_local_path() {
    reject(
        &src().replace(
            "    local 1 pair @Pair\n    path l0 @Box\n",
            "    local 1 pair @Pair\n    local 2 unused Int32\n    path l0 @Box\n    path l2 Int32\n",
        ),
        "ZLM-C-OWN",
        "not prescribed",
    );
}
