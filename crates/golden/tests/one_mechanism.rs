//! Every golden test in the workspace decides whether to bless through this
//! crate: no source reads a bless variable of its own (`IRKIT_BLESS` or any
//! other `…BLESS…` environment variable).

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_crate_reads_a_bless_variable_itself() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    rust_files(&crates, &mut files);
    assert!(files.len() > 50, "found only {} sources", files.len());
    let own = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .unwrap();
    let mut offenders = Vec::new();
    for file in files {
        if file.canonicalize().unwrap().starts_with(&own) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        for (number, line) in text.lines().enumerate() {
            let reads_env = line.contains("env::var") || line.contains("var_os(");
            if reads_env && line.contains("BLESS") {
                offenders.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    number + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "golden tests decide with `golden::blessing()` (IRKIT_BLESS=1), not their own variable:\n{}",
        offenders.join("\n")
    );
}
