//! Golden identity vectors and an independent re-hash in Python.

use std::io::Write as _;
use std::process::{Command, Stdio};
use zlm::{ids, sample};

fn facts_json(with_preimage: bool) -> String {
    let m = sample::module("geo.shapes", 1);
    let (_, facts) = ids::compute(&m, true).expect("ids");
    let mut out = String::new();
    for f in facts {
        out.push_str(&f.to_json(with_preimage));
        out.push('\n');
    }
    out
}

#[test]
fn golden_vectors_match() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/schema-1.9-semantic-identities-v1.jsonl"
    );
    let now = facts_json(true);
    if std::env::var_os("ZLM_BLESS").is_some() {
        std::fs::write(path, &now).unwrap();
    }
    let golden = std::fs::read_to_string(path).expect("golden file (regenerate with ZLM_BLESS=1)");
    assert_eq!(
        golden, now,
        "identity vectors changed; review and regenerate with ZLM_BLESS=1"
    );
}

#[test]
fn python_rehash_agrees() {
    let json = facts_json(true);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rehash.py");
    let mut child = match Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => panic!("python3 is required for the independent re-hash (.ci/apt-packages): {e}"),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "rehash.py: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // A corrupted digest must be caught by the independent hasher.
    let bad = json.replacen("\"digest\": \"", "\"digest\": \"00", 1);
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(bad.as_bytes())
        .unwrap();
    assert!(!child.wait().unwrap().success());
}

/// Golden vectors of every example module: exactly what `irkit zlm ids` prints.
#[test]
fn example_golden_vectors_match() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/zlm");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "zlt"))
        .collect();
    names.sort();
    let mut all = String::new();
    for path in names {
        let m = zlm::text::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let bytes = zlm::write::write(&m).unwrap();
        let d = zlm::decode::decode(&bytes).unwrap();
        let (_, facts) = ids::compute(d.module(), true).unwrap();
        for f in facts {
            all.push_str(&f.to_json(true));
            all.push('\n');
        }
    }
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/golden/examples-identities-v1.jsonl"
    );
    if std::env::var_os("ZLM_BLESS").is_some() {
        std::fs::write(path, &all).unwrap();
    }
    let golden = std::fs::read_to_string(path).expect("golden file (regenerate with ZLM_BLESS=1)");
    assert_eq!(
        golden, all,
        "example identity vectors changed; review and regenerate with ZLM_BLESS=1"
    );
    // The independent hasher agrees with every example digest.
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/rehash.py");
    let mut child = Command::new("python3")
        .args([script, "--frames-only"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(all.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "rehash.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn traced_and_streamed_hashing_agree() {
    let m = sample::module("geo.shapes", 5);
    let (a, _) = ids::compute(&m, true).unwrap();
    let (b, _) = ids::compute(&m, false).unwrap();
    assert_eq!(a.module_content, b.module_content);
    assert_eq!(a.decls[1].functions[0].body, b.decls[1].functions[0].body);
}
