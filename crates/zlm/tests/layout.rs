//! C0-TYPE-008 finite-layout validation: inline owned-payload cycles reject.

use zlm::{decode::decode, text::parse, write::write};

/// A stores B inline, B stores an Int32, and enum E carries A inside a rich
/// Result payload: finite, accepted.
const ACYCLIC: &str = "zlm 1.9 package demo module t.layout profile exact mode checked

decl value A public
  field 0 b public let @B

decl value B public
  field 0 n public let Int32

decl enum E public
  variant 0 Holds
    pfield 0 r Result<@A,@F>

decl error F public
  variant 0 Oops
";

fn rd(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

#[test]
fn acyclic_inline_payloads_are_accepted() {
    let m = parse(ACYCLIC).expect("parse");
    let bytes = write(&m).expect("finite layout");
    let d = decode(&bytes).expect("valid");
    assert_eq!(write(d.module()).unwrap(), bytes);
}

#[test]
fn direct_and_mutual_cycles_are_rejected_by_the_writer() {
    let direct = ACYCLIC.replace("field 0 n public let Int32", "field 0 n public let @B");
    let e = write(&parse(&direct).unwrap()).unwrap_err();
    assert_eq!(e.code, "ZLM-LAYOUT", "{e}");
    assert!(e.message.contains("B -> B"), "{}", e.message);
    let mutual = ACYCLIC.replace("field 0 n public let Int32", "field 0 n public let @A");
    let e = write(&parse(&mutual).unwrap()).unwrap_err();
    assert_eq!(e.code, "ZLM-LAYOUT", "{e}");
    assert!(e.message.contains("C0-TYPE-008"), "{}", e.message);
    // Through a variant payload and a Result child.
    let via_variant = ACYCLIC.replace("field 0 n public let Int32", "field 0 n public let @E");
    let e = write(&parse(&via_variant).unwrap()).unwrap_err();
    assert_eq!(e.code, "ZLM-LAYOUT", "{e}");
}

/// Invalid mutation of canonical bytes: retarget B.n's type reference at the
/// nominal instance of A. The decoder rejects with ZLM-LAYOUT at a
/// declaration record on the cycle, before any carried ID is compared.
#[test]
fn a_mutated_artifact_with_a_cycle_is_rejected_with_its_record() {
    let bytes = write(&parse(ACYCLIC).unwrap()).unwrap();
    let strings = 256;
    let imports = rd(&bytes, 96);
    let types_n = rd(&bytes, 100);
    let children_n = rd(&bytes, 104);
    let decls_n = rd(&bytes, 108);
    let pool = u64::from_le_bytes(bytes[176..184].try_into().unwrap()) as usize;
    let types = strings + pool + 80 * imports;
    let decls = types + 80 * types_n + 4 * children_n;
    let fields = decls + 80 * decls_n;
    let name = |rec: usize| {
        let (o, l) = (rd(&bytes, rec + 44), rd(&bytes, rec + 48));
        std::str::from_utf8(&bytes[strings + o..strings + o + l]).unwrap()
    };
    let pos = |n: &str| (0..decls_n).find(|&i| name(decls + 80 * i) == n).unwrap();
    let (pa, pb) = (pos("A"), pos("B"));
    let ta = (0..types_n)
        .find(|&i| {
            rd(&bytes, types + 80 * i + 32) == 3 && rd(&bytes, types + 80 * i + 40) == imports + pa
        })
        .unwrap();
    let fb = (0..rd(&bytes, 112))
        .find(|&i| rd(&bytes, fields + 72 * i + 32) == 0 && rd(&bytes, fields + 72 * i + 36) == pb)
        .unwrap();
    let mut m = bytes.clone();
    let at = fields + 72 * fb + 60;
    m[at..at + 4].copy_from_slice(&(ta as u32).to_le_bytes());
    let e = decode(&m).unwrap_err();
    assert_eq!(e.code, "ZLM-LAYOUT", "{e}");
    let off = e.offset.expect("offset") as usize;
    assert!(
        off == decls + 80 * pa || off == decls + 80 * pb,
        "offset {off} is not A's or B's declaration record"
    );
}
