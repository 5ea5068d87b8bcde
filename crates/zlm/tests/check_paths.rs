//! The owned-path presence rule: every partially moved or addressed owner
//! field has exactly its canonical parent-linked path, and no path exists
//! that no rule prescribes (Copy/borrow-only values have none).

mod common;

fn src() -> String {
    common::src("own.zlt")
}

fn reject(text: &str, code: &str, needle: &str) {
    let err = common::reject(text, code);
    assert!(err.message.contains(needle), "{err}");
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
