//! The two-thread decoder (`Threads::Two`: bodies hashed on a second thread
//! while the model, canonical and semantic phases run) accepts exactly what
//! the sequential decoder accepts and reports the identical first error
//! (code, offset, message) on every mutated input.

use zlm::decode::{PARALLEL_MIN_OPS, Threads, decode, decode_with};
use zlm::{sample, text, write::write};

fn same(bytes: &[u8], what: &str) {
    let one = decode_with(bytes, Threads::One).map(|(d, p)| {
        assert_eq!(p.threads, 1);
        (d.module().clone(), d.module_content())
    });
    let two = decode_with(bytes, Threads::Two).map(|(d, p)| {
        assert_eq!(p.threads, 2);
        (d.module().clone(), d.module_content())
    });
    assert_eq!(one, two, "{what}");
}

/// Artifacts and the stride of the byte sweep over each (the larger
/// example is sampled to keep the test short).
fn artifacts() -> Vec<(String, Vec<u8>, usize)> {
    let mut out = vec![(
        "sample".to_string(),
        write(&sample::module("geo.shapes", 2)).unwrap(),
        1,
    )];
    for (name, src, stride) in [
        (
            "shapes",
            include_str!("../../../examples/zlm/shapes.zlt"),
            1,
        ),
        ("own", include_str!("../../../examples/zlm/run/own.zlt"), 7),
    ] {
        let m = text::parse(src).unwrap();
        out.push((name.to_string(), write(&m).unwrap(), stride));
    }
    out
}

#[test]
fn both_paths_agree_on_every_single_byte_change() {
    for (name, bytes, stride) in artifacts() {
        same(&bytes, &name);
        for i in (0..bytes.len()).step_by(stride) {
            // Low and high bits alternately (the full sweep of each is in
            // tests/mutation.rs).
            let x = if i % 2 == 0 { 0x01u8 } else { 0x80 };
            let mut m = bytes.clone();
            m[i] ^= x;
            same(&m, &format!("{name}: byte {i} xor {x:#x}"));
        }
    }
}

#[test]
fn a_wrong_module_content_is_the_same_error_on_both_paths() {
    let bytes = write(&sample::module("geo.shapes", 2)).unwrap();
    for i in 56..88 {
        let mut m = bytes.clone();
        m[i] ^= 0x10;
        let e = decode_with(&m, Threads::Two).unwrap_err();
        assert_eq!(e.code, "ZLM-ID");
        assert_eq!(e.offset, Some(i as u64));
        same(&m, &format!("content byte {i}"));
    }
    // A later header mismatch and a wrong content: the content byte comes first.
    let mut m = bytes.clone();
    m[60] ^= 1;
    m[88] ^= 1;
    same(&m, "content and module-name slice");
}

#[test]
fn a_large_module_takes_two_threads_and_agrees_under_mutation() {
    // Enough body operations for `Threads::Auto` to choose two threads.
    let width = (PARALLEL_MIN_OPS as u32) / 2 + 64;
    let bytes = write(&sample::module("geo.big", width)).unwrap();
    let (d, p) = decode_with(&bytes, Threads::Auto).unwrap();
    let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
    assert_eq!(p.threads, if two_cores { 2 } else { 1 });
    assert_eq!(
        d.module(),
        decode_with(&bytes, Threads::One).unwrap().0.module()
    );
    assert_eq!(decode(&bytes).unwrap().module(), d.module());
    // Mutations spread over every section, with a fixed stride.
    let stride = bytes.len() / 157;
    for i in (0..bytes.len()).step_by(stride.max(1)) {
        let mut m = bytes.clone();
        m[i] ^= 0x41;
        same(&m, &format!("large: byte {i}"));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]
    /// Arbitrary patches anywhere in an artifact: both paths agree (and
    /// neither panics).
    #[test]
    fn both_paths_agree_on_arbitrary_patches(
        patch in proptest::collection::vec((proptest::prelude::any::<usize>(), proptest::prelude::any::<u8>()), 1..6)
    ) {
        let mut bytes = write(&sample::module("geo.patch", 3)).unwrap();
        let len = bytes.len();
        for (at, v) in patch {
            bytes[at % len] = v;
        }
        same(&bytes, "patched");
    }

    /// Arbitrary bytes: both paths agree (and neither panics).
    #[test]
    fn both_paths_agree_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..1024)) {
        same(&bytes, "arbitrary");
    }
}
