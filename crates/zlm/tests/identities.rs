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
    golden::assert_text(path.as_ref(), &now, "identity vectors changed");
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
    golden::assert_text(path.as_ref(), &all, "example identity vectors changed");
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

/// Sharing a body's operations between two hashers gives the same
/// digests for every split point, and the same first error wherever the
/// failing operation lies (before or after the split).
#[test]
fn shared_body_operations_give_the_same_digests_and_errors() {
    let m = zlm::sample::module("t.share", 300);
    let p = ids::prepare(&m, false).unwrap();
    let (at, n) = ids::Pending::largest_body(&m).unwrap();
    let run = |m: &zlm::model::Module, k: usize| {
        let p = ids::prepare(m, false).unwrap();
        let mut tail_hs = ids::Hasher::new(false);
        let tail = p.body_tail(&mut tail_hs, m, at, k);
        let mut tail = Some(tail);
        let mut get = || tail.take().unwrap_or_else(|| Ok(Vec::new()));
        p.bodies_sharing(&mut ids::Hasher::new(false), m, at, k, &mut get)
    };
    let want = p.bodies(&mut ids::Hasher::new(false), &m).unwrap();
    for k in [0, 1, n / 3, n / 2, n - 1, n, n + 5] {
        assert_eq!(run(&m, k).unwrap(), want, "split at {k}");
    }
    // An operand naming a missing operation, early and late in the body.
    for bad in [5, n - 3] {
        let mut b = m.clone();
        let f = &mut b.declarations[at.0].functions[at.1];
        let mut left = bad;
        'find: for blk in &mut f.body.blocks {
            for op in &mut blk.ops {
                if left == 0 {
                    op.operands = vec![zlm::model::Operand::Value(zlm::model::OpRef::Flow {
                        block: 0,
                        ordinal: 999_999,
                    })];
                    break 'find;
                }
                left -= 1;
            }
        }
        let p = ids::prepare(&b, false).unwrap();
        let want = p.bodies(&mut ids::Hasher::new(false), &b).unwrap_err();
        assert_eq!(want.code, zlm::error::code::REF, "{want}");
        for k in [0, n / 2, n] {
            assert_eq!(run(&b, k).unwrap_err(), want, "bad op {bad}, split at {k}");
        }
    }
}

/// The streaming body hash (no tracing) and the materialised parts
/// (tracing, the golden-vector path) give the same digests, and every
/// traced fact hashes to its digest.
#[test]
fn streaming_and_traced_identities_agree() {
    let m = zlm::sample::module("t.stream", 40);
    let (fast, none) = ids::compute(&m, false).unwrap();
    let (traced, facts) = ids::compute(&m, true).unwrap();
    assert!(none.is_empty());
    assert!(
        facts
            .iter()
            .any(|f| f.domain == zlm::hash::domain::FUNCTION_BODY)
    );
    for f in &facts {
        assert_eq!(zlm::hash::sha256(&f.preimage()), f.digest, "{}", f.fact);
    }
    assert_eq!(fast.module_content, traced.module_content);
    for (a, b) in fast.decls.iter().zip(&traced.decls) {
        for (x, y) in a.functions.iter().zip(&b.functions) {
            assert_eq!(x.body, y.body);
        }
    }
    for src in [
        include_str!("../../../examples/zlm/shapes.zlt"),
        include_str!("../../../examples/zlm/canvas.zlt"),
        include_str!("../../../examples/zlm/run/own.zlt"),
        include_str!("../../../examples/zlm/run/faults.zlt"),
        include_str!("../../../examples/zlm/run/loop.zlt"),
        include_str!("../../../examples/zlm/run/ops.zlt"),
    ] {
        // Loans with creation/last use, field paths, temporaries, recipes.
        let m = zlm::text::parse(src).unwrap();
        let (a, _) = ids::compute(&m, false).unwrap();
        let (b, _) = ids::compute(&m, true).unwrap();
        assert_eq!(a.module_content, b.module_content);
        for (x, y) in a.decls.iter().zip(&b.decls) {
            for (p, q) in x.functions.iter().zip(&y.functions) {
                assert_eq!(p.body, q.body);
            }
        }
    }
    // Memoized constants equal their traced hashes.
    for f in facts
        .iter()
        .filter(|f| f.domain == zlm::hash::domain::CONSTANT)
    {
        assert!(fast.constants.values().any(|id| *id == f.digest));
    }
}
