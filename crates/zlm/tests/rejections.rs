//! Specific rejections carry their stable code and the offset they concern.

use zlm::model::*;
use zlm::{decode::decode, sample, write::write};

fn bytes() -> Vec<u8> {
    write(&sample::module("geo.shapes", 1)).unwrap()
}
fn rd(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

#[test]
fn header_faults() {
    let b = bytes();
    let mut m = b.clone();
    m[0] = b'X';
    assert_eq!(decode(&m).unwrap_err().code, "ZLM-HEADER");
    let mut m = b.clone();
    m[12] = 1;
    let e = decode(&m).unwrap_err();
    assert_eq!((e.code, e.offset), ("ZLM-HEADER", Some(12)));
    let mut m = b.clone();
    m[250] = 1;
    let e = decode(&m).unwrap_err();
    assert_eq!((e.code, e.offset), ("ZLM-HEADER", Some(250)));
    let mut m = b.clone();
    m[4] = 2;
    assert_eq!(decode(&m).unwrap_err().code, "ZLM-SCHEMA");
    assert_eq!(decode(&b[..100]).unwrap_err().code, "ZLM-LENGTH");
}

#[test]
fn huge_counts_are_rejected_before_allocation() {
    let mut m = bytes();
    for off in [96usize, 100, 120, 164, 168] {
        let mut x = m.clone();
        x[off..off + 4].copy_from_slice(&0xfffffffeu32.to_le_bytes());
        assert_eq!(decode(&x).unwrap_err().code, "ZLM-LENGTH");
    }
    m[176..184].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(decode(&m).unwrap_err().code, "ZLM-LENGTH");
}

#[test]
fn carried_identities_are_recomputed() {
    let b = bytes();
    // Module-content identity in the header.
    let mut m = b.clone();
    m[60] ^= 1;
    let e = decode(&m).unwrap_err();
    assert_eq!((e.code, e.offset), ("ZLM-ID", Some(60)));
    // Catalog identity.
    let mut m = b.clone();
    m[30] ^= 1;
    assert_eq!(decode(&m).unwrap_err().code, "ZLM-CATALOG");
    // First declaration's nominal ID.
    let decl0 = 256 + rd(&b, 176) + 80 * rd(&b, 96) + 80 * rd(&b, 100) + 4 * rd(&b, 104);
    let mut m = b.clone();
    m[decl0 + 5] ^= 1;
    assert!(matches!(
        decode(&m).unwrap_err().code,
        "ZLM-ID" | "ZLM-NONCANONICAL" | "ZLM-REF"
    ));
}

#[test]
fn noncanonical_tags_reject() {
    let mut m = sample::module("geo.shapes", 1);
    for bad in [27u32, 28, 30, 31, 32, 33, 34, 53] {
        let f = &mut m.declarations[1].functions[0];
        let op = &mut f.body.blocks.iter_mut().find(|b| b.id == 0).unwrap().ops[0];
        let old = op.tag;
        op.tag = bad;
        let e = write(&m).unwrap_err();
        assert_eq!(e.code, "ZLM-SHAPE", "tag {bad}: {e}");
        let f = &mut m.declarations[1].functions[0];
        f.body.blocks.iter_mut().find(|b| b.id == 0).unwrap().ops[0].tag = old;
    }
    // The decoder rejects the same tag written into the typed-operation table.
    let b = bytes();
    let ops_start = b.len() - 32 * rd(&b, 168);
    let mut x = b.clone();
    x[ops_start..ops_start + 4].copy_from_slice(&30u32.to_le_bytes());
    let e = decode(&x).unwrap_err();
    assert_eq!((e.code, e.offset), ("ZLM-TAG", Some(ops_start as u64)));
}

#[test]
fn model_rules_reject() {
    let base = sample::module("geo.shapes", 1);
    // A value declaration cannot own variants.
    let mut m = base.clone();
    let v = m.declarations[0].variants[0].clone();
    m.declarations[1].variants.push(v);
    assert_eq!(write(&m).unwrap_err().code, "ZLM-MODEL");
    // Payload fields are public let.
    let mut m = base.clone();
    m.declarations[0].variants[0].fields[0].mutability = Mutability::Var;
    assert_eq!(write(&m).unwrap_err().code, "ZLM-MODEL");
    // Contract-bearing modules must be checked.
    let mut m = base.clone();
    m.mode = VerificationMode::Trusted;
    assert_eq!(write(&m).unwrap_err().code, "ZLM-MODEL");
    // Non-dense variant tags.
    let mut m = base.clone();
    m.declarations[0].variants[0].tag = 5;
    assert_eq!(write(&m).unwrap_err().code, "ZLM-MODEL");
    // Out-of-width constant.
    let mut m = base.clone();
    let f = &mut m.declarations[1].functions[0];
    f.body.blocks.iter_mut().find(|b| b.id == 0).unwrap().ops[0].operands[0] =
        Operand::Const(Constant {
            kind: ScalarKind::Int8,
            bits: 256,
        });
    assert!(write(&m).is_err());
    // Duplicate declarations collide.
    let mut m = base.clone();
    let d = m.declarations[0].clone();
    m.declarations.push(d);
    assert!(matches!(write(&m).unwrap_err().code, "ZLM-DUPLICATE"));
    // Mismatched redundant reference: jump_if_false operand vs auxiliary.
    let mut m = base.clone();
    let f = &mut m.declarations[1].functions[0];
    let b0 = f.body.blocks.iter_mut().find(|b| b.id == 0).unwrap();
    b0.ops.last_mut().unwrap().aux0 = Aux::Block(1);
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // Reserved contract tags 2 and 6.
    let mut m = base.clone();
    m.declarations[1].functions[0].requires[0].ops[0].tag = 2;
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
}

#[test]
fn artifact_address_is_not_the_content_identity() {
    let b = bytes();
    let d = decode(&b).unwrap();
    assert_ne!(zlm::address(&b), d.module_content());
    assert_eq!(
        zlm::address(&b),
        zlm::hash::h("zerglang.zlm1.artifact.v1", std::slice::from_ref(&b))
    );
}

#[test]
fn typing_rules_reject() {
    let base = sample::module("geo.shapes", 1);
    // ADD with a result type different from its operands.
    let mut m = base.clone();
    let b = entry(&mut m);
    b.ops[2].result = Some(Type::Scalar(ScalarKind::Int64));
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // RETURN of a value whose type is not the function result.
    let mut m = base.clone();
    let f = &mut m.declarations[1].functions[0];
    let b2 = f.body.blocks.iter_mut().find(|b| b.id == 2).unwrap();
    b2.ops[0].operands[0] = Operand::Value(OpRef::Flow {
        block: 0,
        ordinal: 3,
    });
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // Condition of JUMP_IF_FALSE must be Bool.
    let mut m = base.clone();
    let b = entry(&mut m);
    let last = b.ops.len() - 1;
    b.ops[last].operands[0] = Operand::Value(OpRef::Flow {
        block: 0,
        ordinal: 0,
    });
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // Loan kind and borrowed type must agree.
    let mut m = base.clone();
    m.declarations[1].functions[0].body.loans[0].kind = LoanKind::Exclusive;
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
}

fn entry(m: &mut Module) -> &mut Block {
    m.declarations[1].functions[0]
        .body
        .blocks
        .iter_mut()
        .find(|b| b.id == 0)
        .unwrap()
}

#[test]
fn cfg_rules_reject() {
    let base = sample::module("geo.shapes", 1);
    // Edge kinds are derived: a conditional arm is a branch, not a fallthrough.
    let mut m = base.clone();
    m.declarations[1].functions[0].body.edges[0].kind = EdgeKind::Fallthrough;
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // A missing cleanup edge.
    let mut m = base.clone();
    m.declarations[1].functions[0].body.edges.pop();
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // Block numbering must be the depth-first preorder: swap the two arms.
    let mut m = base.clone();
    let b = entry(&mut m);
    let last = b.ops.len() - 1;
    b.ops[last].operands[1] = Operand::Block(1);
    b.ops[last].aux0 = Aux::Block(1);
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // A block must end with a terminator.
    let mut m = base.clone();
    let b = entry(&mut m);
    b.ops.pop();
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
}

#[test]
fn ownership_facts_reject() {
    let base = sample::module("geo.shapes", 1);
    // The shared receiver's entry loan is mandatory.
    let mut m = base.clone();
    m.declarations[1].functions[0].body.loans.clear();
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // A non-Copy owner local needs its root owned path.
    let mut m = base.clone();
    let point = Type::Nominal(zlm::sample::nominal(
        "demo",
        "geo.shapes",
        DeclKind::Value,
        "Point",
    ));
    m.declarations[1].functions[0].body.locals.push(Param {
        ordinal: 0,
        name: "p".into(),
        ty: point,
    });
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
}

#[test]
fn ssa_dominance_rejects() {
    let mut m = sample::module("geo.shapes", 1);
    // Block 2 cannot use a value defined in its sibling block 1.
    let f = &mut m.declarations[1].functions[0];
    let b2 = f.body.blocks.iter_mut().find(|b| b.id == 2).unwrap();
    b2.ops[0].operands[0] = Operand::Value(OpRef::Flow {
        block: 1,
        ordinal: 0,
    });
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
    // A use before its definition in the same block.
    let mut m = sample::module("geo.shapes", 1);
    let b = entry(&mut m);
    b.ops[2].operands[0] = Operand::Value(OpRef::Flow {
        block: 0,
        ordinal: 3,
    });
    assert_eq!(write(&m).unwrap_err().code, "ZLM-SHAPE");
}
