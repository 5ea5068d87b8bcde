//! The BRDF + skinning package pair (`tests/common/packages.rs`): each version
//! verifies and is a version-3 container, the consumer links against version
//! 1, `diff` finds version 2 of BRDF compatible and version 2 of skinning
//! breaking, and the link agrees with what `diff` predicted. The files under
//! `examples/rvnlib/packages/` are what the builder produces
//! (`IRKIT_BLESS=1 cargo test -p rvnlib --test all -- packages::` rewrites them).

#[path = "common/packages.rs"]
mod package_pair;

use package_pair::*;
use rvnlib::diff::{ChangeKind, diff};
use rvnlib::link::{self, LinkInput, LinkOptions};
use rvnlib::*;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/rvnlib/packages")
}

fn golden(name: &str, bytes: &[u8]) -> Option<String> {
    golden::check_bytes(&dir().join(name), bytes)
        .err()
        .map(|e| e.to_string())
}

fn link_app(
    brdf: &CompiledLibrary,
    skinning: &CompiledLibrary,
) -> Result<link::Linked, Vec<link::LinkError>> {
    let app = shade_app();
    let inputs = [
        LinkInput {
            origin: "brdf.rvnlib",
            library: brdf,
        },
        LinkInput {
            origin: "skinning.rvnlib",
            library: skinning,
        },
    ];
    link::link(
        &inputs,
        &LinkOptions {
            name: "ShadeApp".into(),
            consumer: Some(LinkInput {
                origin: "shade-app.rvnlib",
                library: &app,
            }),
            entries: Vec::new(),
        },
    )
}

#[test]
fn package_examples_are_up_to_date() {
    let linked = link_app(&brdf(1), &skinning(1)).expect("version 1 links");
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("brdf-v1.rvnlib", write(&brdf(1)).unwrap()),
        ("brdf-v2.rvnlib", write(&brdf(2)).unwrap()),
        ("skinning-v1.rvnlib", write(&skinning(1)).unwrap()),
        ("skinning-v2.rvnlib", write(&skinning(2)).unwrap()),
        ("shade-app.rvnlib", write(&shade_app()).unwrap()),
        ("shade-app-linked.rvnlib", write(&linked.library).unwrap()),
        (
            "shade-app-linked.json",
            format!("{}\n", write_json(&linked.library)).into_bytes(),
        ),
    ];
    let stale: Vec<String> = files
        .iter()
        .filter_map(|(name, bytes)| golden(name, bytes))
        .collect();
    assert!(
        stale.is_empty(),
        "stale examples (IRKIT_BLESS=1):\n{}",
        stale.join("\n")
    );
}

#[test]
fn every_version_verifies_as_a_version_3_container() {
    for lib in [brdf(1), brdf(2), skinning(1), skinning(2), shade_app()] {
        let bytes = write(&lib).unwrap();
        // Raven's reader accepts version 3 only (`CompiledLibraryFormat.cs` 59, 131).
        assert_eq!(&bytes[7..11], &3i32.to_le_bytes(), "{}", lib.name);
        assert_eq!(read(&bytes).unwrap(), lib, "{}", lib.name);
    }
}

#[test]
fn the_consumer_links_against_version_1_with_one_tuple_type() {
    let linked = link_app(&brdf(1), &skinning(1)).unwrap();
    let tuples: Vec<&LibraryIrStruct> = linked
        .library
        .ir
        .structs
        .iter()
        .filter(|s| s.key == "Tuple_f32_f32")
        .collect();
    // Two libraries, two element-name sets, one type: the first copy (Brdf's).
    assert_eq!(tuples.len(), 1);
    assert_eq!(tuples[0].fields[0].name, "diffuse");
    let keys: Vec<&str> = linked
        .library
        .ir
        .functions
        .iter()
        .map(|f| f.key.as_str())
        .collect();
    for key in [
        APP_SHADE,
        BLEND_V1,
        SKIN,
        SKIN_POSITION,
        EVALUATE,
        SPLIT,
        WEIGHTS,
        LAMBERT,
        GGX_D,
        FRESNEL,
    ] {
        assert!(keys.contains(&key), "{key} missing from {keys:#?}");
    }
    // FromBasis is not reached from the consumer and is pruned.
    assert!(!keys.contains(&FROM_BASIS));
    // The linked module reads back and verifies.
    let bytes = write(&linked.library).unwrap();
    assert_eq!(read(&bytes).unwrap(), linked.library);
}

#[test]
fn diff_finds_brdf_v2_compatible() {
    let report = diff(&brdf(1), &brdf(2));
    assert!(report.compatible(), "{report:#?}");
    let found: Vec<(ChangeKind, &str)> = report
        .changes
        .iter()
        .map(|c| (c.kind, c.subject.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![
            (ChangeKind::FunctionBodyChanged, GGX_D),
            // Unchanged bodies that call the changed one behave differently too.
            (ChangeKind::FunctionCalleeChanged, EVALUATE),
            (ChangeKind::FunctionCalleeChanged, SPLIT),
            (ChangeKind::FunctionAdded, SHEEN),
            (
                ChangeKind::MemberAdded,
                "Brdf.Shading.Sheen(Float, Float): Float"
            ),
        ]
    );
    assert_eq!(
        report.changes[1].detail,
        format!("calls `{GGX_D}`, which changed")
    );
    // …and the consumer built against version 1 links against it.
    assert!(link_app(&brdf(2), &skinning(1)).is_ok());
}

#[test]
fn diff_finds_skinning_v2_breaking_and_the_link_agrees() {
    let report = diff(&skinning(1), &skinning(2));
    assert!(!report.compatible());
    let breaking: Vec<(ChangeKind, &str)> = report
        .breaking()
        .map(|c| (c.kind, c.subject.as_str()))
        .collect();
    assert_eq!(
        breaking,
        vec![
            (ChangeKind::StructLayoutChanged, "SkinVertex"),
            (ChangeKind::FunctionRemoved, BLEND_V1),
            (
                ChangeKind::MemberRemoved,
                "Geometry.Skinning.Blend(Mat4, Mat4, Float, Float): Mat4"
            ),
        ]
    );
    let layout = &report.changes[0].detail;
    assert!(
        layout.contains("field `Position` moved from index 0 to 1"),
        "{layout}"
    );
    let compatible: Vec<(ChangeKind, &str)> = report
        .changes
        .iter()
        .filter(|c| !c.breaking())
        .map(|c| (c.kind, c.subject.as_str()))
        .collect();
    assert_eq!(
        compatible,
        vec![
            (ChangeKind::FunctionBodyChanged, FROM_BASIS),
            (ChangeKind::FunctionBodyChanged, SKIN),
            (ChangeKind::FunctionAdded, BLEND_V2),
            (
                ChangeKind::MemberAdded,
                "Geometry.Skinning.Blend(Mat4, Mat4, Float): Mat4"
            ),
        ]
    );
    // The link refuses exactly what diff called breaking: the removed key and
    // the consumer's field access compiled against the old layout.
    let errors = link_app(&brdf(1), &skinning(2)).unwrap_err();
    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert!(
        text.iter()
            .any(|t| t.contains(&format!("no function has the key `{BLEND_V1}`"))),
        "{text:#?}"
    );
    assert!(
        text.iter()
            .any(|t| t.contains("ShadeApp")
                && t.contains("load: vec<f32,4> does not match vec<f32,3>")),
        "{text:#?}"
    );
}

#[test]
fn a_library_diffed_with_itself_has_no_changes() {
    for lib in [brdf(1), skinning(2), shade_app()] {
        assert_eq!(diff(&lib, &lib).changes, Vec::new());
    }
}
