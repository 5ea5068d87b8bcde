//! Every integration-test file of the workspace runs. Crates with
//! `autotests = false` build their `tests/*.rs` files into one binary per
//! crate (a harness file includes each as `#[path = "FILE"] mod NAME;`), so
//! a new file that no harness includes and no `[[test]]` names would
//! silently never run: this test fails instead, naming it.

use std::path::Path;

/// The `tests/*.rs` files of the crate at `dir` that no `[[test]]` of its
/// manifest names, no harness includes by `#[path]`, and no test file uses
/// as a helper module (`mod NAME;`).
fn files_left_out(dir: &Path, manifest: &str) -> Vec<String> {
    let harnesses: Vec<&str> = manifest
        .split("path = \"tests/")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    let tests = dir.join("tests");
    let mut files: Vec<String> = std::fs::read_dir(&tests)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".rs"))
        .collect();
    files.sort();
    let sources: Vec<String> = files
        .iter()
        .map(|name| std::fs::read_to_string(tests.join(name)).unwrap())
        .collect();
    let suites: String = harnesses
        .iter()
        .filter_map(|h| std::fs::read_to_string(tests.join(h)).ok())
        .collect();
    files
        .into_iter()
        .filter(|name| {
            let stem = name.trim_end_matches(".rs");
            let named = harnesses.contains(&name.as_str());
            let included = suites.contains(&format!("#[path = \"{name}\"]"));
            let helper = sources
                .iter()
                .any(|source| source.contains(&format!("mod {stem};")));
            !named && !included && !helper
        })
        .collect()
}

#[test]
fn every_test_file_of_every_crate_runs() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = Vec::new();
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        if !manifest.contains("autotests = false") || !dir.join("tests").is_dir() {
            continue;
        }
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        missing.extend(
            files_left_out(&dir, &manifest)
                .into_iter()
                .map(|file| format!("crates/{name}/tests/{file}")),
        );
        checked.push(name);
    }
    checked.sort();
    for name in ["irkit", "vpl", "zlm", "tcc_engine"] {
        assert!(
            checked.iter().any(|c| c == name),
            "crates/{name} builds its tests as one binary but was not checked: {checked:?}"
        );
    }
    assert!(
        missing.is_empty(),
        "{missing:?} run in no test binary: add `#[path = \"FILE\"] mod NAME;` to the crate's \
         harness (tests/all.rs, or tests/cli.rs in irkit) or a [[test]] to its Cargo.toml"
    );
}

#[test]
fn a_file_no_harness_includes_is_found() {
    let dir = std::env::temp_dir().join(format!("irkit-test-suites-{}", std::process::id()));
    let tests = dir.join("tests");
    std::fs::create_dir_all(&tests).unwrap();
    std::fs::write(tests.join("all.rs"), "#[path = \"kept.rs\"]\nmod kept;\n").unwrap();
    std::fs::write(tests.join("kept.rs"), "mod common;\n").unwrap();
    std::fs::write(tests.join("common.rs"), "").unwrap();
    std::fs::write(tests.join("own.rs"), "").unwrap();
    std::fs::write(tests.join("forgotten.rs"), "").unwrap();
    let manifest = "autotests = false\n[[test]]\nname = \"all\"\npath = \"tests/all.rs\"\n\
                    [[test]]\nname = \"own\"\npath = \"tests/own.rs\"\n";
    let left = files_left_out(&dir, manifest);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(left, ["forgotten.rs"]);
}
