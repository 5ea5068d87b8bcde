//! File-based conformance corpus: `tests/corpus/invalid/*.json`, each listed
//! in `EXPECTED` with the single error it must produce.

use std::path::PathBuf;
use tcc_ir::{FeatureSet, IrError, decode_artifact, validate_all};

#[test]
fn every_invalid_file_fails_with_its_expected_error() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/invalid");
    let manifest = std::fs::read_to_string(dir.join("EXPECTED")).unwrap();
    let mut listed = Vec::new();
    for line in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [file, code, kind, path] = fields[..] else {
            panic!("bad manifest line {line:?}")
        };
        listed.push(file.to_string());
        let bytes = std::fs::read(dir.join(file)).unwrap();
        match decode_artifact(&bytes) {
            Err(IrError::InvalidEncoding {
                kind: got_kind,
                path: got_path,
                ..
            }) => {
                assert_eq!(code, "TCC-E001", "{file}: unexpected encoding error");
                assert_eq!(got_kind.as_str(), kind, "{file}");
                assert_eq!(got_path, path, "{file}");
            }
            Err(other) => panic!("{file}: {other}"),
            Ok(artifact) => {
                let errors = validate_all(
                    &artifact,
                    &FeatureSet::all_engine_features(),
                    &FeatureSet::all_host_capabilities(),
                );
                let codes: Vec<&str> = errors.iter().map(|e| e.code()).collect();
                assert_eq!(codes, [code], "{file}: {errors:?}");
            }
        }
    }
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    present.sort();
    listed.sort();
    assert_eq!(present, listed, "EXPECTED and the corpus files disagree");
}
