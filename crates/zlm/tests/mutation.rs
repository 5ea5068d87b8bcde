//! Mutation, permutation and arbitrary-input tests of the decoder.

use proptest::prelude::*;
use zlm::{decode::decode, sample, write::write};

#[test]
fn every_single_byte_change_is_rejected() {
    let bytes = write(&sample::module("geo.shapes", 2)).unwrap();
    assert!(decode(&bytes).is_ok());
    for i in 0..bytes.len() {
        for x in [0x01u8, 0x80, 0xff] {
            let mut m = bytes.clone();
            m[i] ^= x;
            let e = decode(&m)
                .err()
                .unwrap_or_else(|| panic!("mutation at byte {i} (xor {x:#x}) accepted"));
            assert!(e.offset.is_some() || !e.code.is_empty());
        }
    }
    // Truncation and trailing bytes.
    assert_eq!(
        decode(&bytes[..bytes.len() - 1]).unwrap_err().code,
        "ZLM-LENGTH"
    );
    let mut long = bytes.clone();
    long.push(0);
    assert_eq!(decode(&long).unwrap_err().code, "ZLM-LENGTH");
}

#[test]
fn other_minor_versions_are_unsupported() {
    let mut bytes = write(&sample::module("geo.shapes", 1)).unwrap();
    bytes[6] = 8;
    let e = decode(&bytes).unwrap_err();
    assert_eq!(e.code, "ZLM-SCHEMA");
    assert!(e.message.contains("unsupported schema 1.8"));
}

fn shuffle<T>(v: &mut [T], seed: &mut u64) {
    for i in (1..v.len()).rev() {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = (*seed >> 33) as usize % (i + 1);
        v.swap(i, j);
    }
}

#[test]
fn permuting_logical_collections_gives_identical_bytes() {
    let m = sample::module("geo.shapes", 2);
    let want = write(&m).unwrap();
    for mut seed in 1..20u64 {
        let mut p = m.clone();
        shuffle(&mut p.declarations, &mut seed);
        for d in &mut p.declarations {
            shuffle(&mut d.fields, &mut seed);
            shuffle(&mut d.variants, &mut seed);
            shuffle(&mut d.functions, &mut seed);
            for f in &mut d.functions {
                shuffle(&mut f.params, &mut seed);
                shuffle(&mut f.body.blocks, &mut seed);
                shuffle(&mut f.body.paths, &mut seed);
                shuffle(&mut f.body.edges, &mut seed);
                shuffle(&mut f.body.locals, &mut seed);
            }
        }
        assert_eq!(write(&p).unwrap(), want);
    }
}

#[test]
fn swapping_records_with_consistent_references_is_rejected() {
    // Swap the two declaration records and rewrite every reference to them.
    let bytes = write(&sample::module("geo.shapes", 1)).unwrap();
    let d = decode(&bytes).unwrap();
    let mut m = d.module().clone();
    m.declarations.swap(0, 1);
    // Re-encoding a permuted model is canonical again...
    assert_eq!(write(&m).unwrap(), bytes);
    // ...but directly swapping the serialized records is not.
    let mut swapped = bytes.clone();
    let rd = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize;
    let nstr = rd(&bytes, 176);
    let (ni, nt, nc, nd) = (
        rd(&bytes, 96),
        rd(&bytes, 100),
        rd(&bytes, 104),
        rd(&bytes, 108),
    );
    assert_eq!(nd, 2);
    let decl0 = 256 + nstr + 80 * ni + 80 * nt + 4 * nc;
    let (a, b) = (
        bytes[decl0..decl0 + 80].to_vec(),
        bytes[decl0 + 80..decl0 + 160].to_vec(),
    );
    swapped[decl0..decl0 + 80].copy_from_slice(&b);
    swapped[decl0 + 80..decl0 + 160].copy_from_slice(&a);
    // Rewrite the declaration references held by field, variant and function records and nominal types.
    let nf = rd(&bytes, 112);
    let nv = rd(&bytes, 116);
    let nfn = rd(&bytes, 120);
    let fields = decl0 + 160;
    let variants = fields + 72 * nf;
    let functions = variants + 64 * nv;
    let flip = |b: &mut Vec<u8>, at: usize| {
        let v = rd(b, at);
        let w = if v == ni {
            ni + 1
        } else if v == ni + 1 {
            ni
        } else {
            v
        };
        b[at..at + 4].copy_from_slice(&(w as u32).to_le_bytes());
    };
    let flip_local = |b: &mut Vec<u8>, at: usize| {
        let v = rd(b, at);
        let w = 1 - v.min(1);
        b[at..at + 4].copy_from_slice(&(w as u32).to_le_bytes());
    };
    for i in 0..nf {
        if rd(&swapped, fields + 72 * i + 32) == 0 {
            flip_local(&mut swapped, fields + 72 * i + 36);
        }
    }
    for i in 0..nv {
        flip_local(&mut swapped, variants + 64 * i + 32);
    }
    for i in 0..nfn {
        flip_local(&mut swapped, functions + 176 * i + 32);
    }
    let types = 256 + nstr + 80 * ni;
    for i in 0..nt {
        if rd(&swapped, types + 80 * i + 32) == 3 {
            flip(&mut swapped, types + 80 * i + 40);
        }
    }
    let e = decode(&swapped).unwrap_err();
    assert!(matches!(e.code, "ZLM-NONCANONICAL" | "ZLM-REF"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = decode(&bytes);
    }

    #[test]
    fn arbitrary_header_counts_never_panic(patch in proptest::collection::vec((0usize..256, any::<u8>()), 1..12)) {
        let mut bytes = write(&sample::module("geo.shapes", 1)).unwrap();
        for (at, v) in patch {
            bytes[at] = v;
        }
        let _ = decode(&bytes);
    }
}
