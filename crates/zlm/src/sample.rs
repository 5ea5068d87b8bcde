//! A small but feature-rich sample module built in code, used by tests,
//! benchmarks and the fuzz seeds.

use crate::hash::Id;
use crate::ids::Hasher;
use crate::model::*;

fn s(k: ScalarKind) -> Type {
    Type::Scalar(k)
}

/// The nominal ID of declaration `name` of kind `kind` in `package`/`module`.
pub fn nominal(package: &str, module: &str, kind: DeclKind, name: &str) -> Id {
    let mut h = Hasher::new(false);
    let ns = h.namespace(package, module);
    h.nominal(&ns, kind, name)
}

/// A module named `name` with a record, an enum with payloads, an error,
/// functions with blocks, jumps, loans, cleanup edges and contracts.
/// `width` repeats the arithmetic function body to scale the artifact.
pub fn module(name: &str, width: u32) -> Module {
    use ScalarKind::*;
    let pkg = "demo";
    let point = nominal(pkg, name, DeclKind::Value, "Point");
    let shape = nominal(pkg, name, DeclKind::Enum, "Shape");
    let i32t = s(Int32);
    let c = |bits: u64| Constant { kind: Int32, bits };
    let flow = |block, ordinal| OpRef::Flow { block, ordinal };
    // Point.sum(self: Ref<Point>) -> Int32: field copies and adds.
    let mut ops = Vec::new();
    let recv = PathKey {
        root: Root::Receiver,
        fields: Vec::new(),
    };
    ops.push(Op {
        tag: tag::CONST,
        result: Some(i32t.clone()),
        operands: vec![Operand::Const(c(1))],
        aux0: Aux::None,
        aux1: Aux::None,
    });
    for i in 0..width {
        ops.push(Op {
            tag: tag::CONST,
            result: Some(i32t.clone()),
            operands: vec![Operand::Const(c(u64::from(i) & 0xffff))],
            aux0: Aux::None,
            aux1: Aux::None,
        });
        let n = ops.len() as u32;
        ops.push(Op {
            tag: tag::ADD,
            result: Some(i32t.clone()),
            operands: vec![
                Operand::Value(flow(0, n - 2)),
                Operand::Value(flow(0, n - 1)),
            ],
            aux0: Aux::None,
            aux1: Aux::None,
        });
    }
    let last = ops.len() as u32 - 1;
    ops.push(Op {
        tag: tag::JUMP_IF_FALSE,
        result: None,
        operands: vec![Operand::Value(flow(0, last)), Operand::Block(2)],
        aux0: Aux::Block(2),
        aux1: Aux::None,
    });
    // Condition must be Bool: compare first.
    let n = ops.len() as u32;
    ops.insert(
        n as usize - 1,
        Op {
            tag: tag::LT,
            result: Some(s(Bool)),
            operands: vec![Operand::Value(flow(0, last)), Operand::Value(flow(0, 0))],
            aux0: Aux::None,
            aux1: Aux::None,
        },
    );
    let jif = ops.len() - 1;
    ops[jif].operands[0] = Operand::Value(flow(0, last + 1));
    let ret = |v: OpRef| Op {
        tag: tag::RETURN,
        result: None,
        operands: vec![Operand::Value(v)],
        aux0: Aux::None,
        aux1: Aux::None,
    };
    let b1 = Block {
        id: 1,
        ops: vec![
            Op {
                tag: tag::FIELD_COPY,
                result: Some(i32t.clone()),
                operands: vec![Operand::Place(recv.clone())],
                aux0: Aux::Field(field_id(pkg, name, 0)),
                aux1: Aux::None,
            },
            ret(flow(1, 0)),
        ],
    };
    let b2 = Block {
        id: 2,
        ops: vec![ret(flow(0, 0))],
    };
    let sum = Function {
        callable: CallableKind::Message,
        receiver: ReceiverKind::Shared,
        name: "sum".into(),
        visibility: Visibility::Public,
        params: vec![Param {
            ordinal: 0,
            name: "bias".into(),
            ty: s(Int64),
        }],
        result: i32t.clone(),
        effects: vec![],
        requires: vec![Expr {
            ops: vec![ContractOp {
                tag: 17 + 2,
                result: s(Bool),
                operands: vec![
                    ContractOperand::Param(0),
                    ContractOperand::Const(Constant {
                        kind: Int64,
                        bits: 100,
                    }),
                ],
                aux0: 0,
                aux1: 0,
                reference: None,
            }],
        }],
        ensures: vec![Expr {
            ops: vec![ContractOp {
                tag: 18,
                result: s(Bool),
                operands: vec![
                    ContractOperand::Result,
                    ContractOperand::Const(c(0x8000_0000)),
                ],
                aux0: 0,
                aux1: 0,
                reference: None,
            }],
        }],
        body: Body {
            locals: vec![],
            blocks: vec![b2, Block { id: 0, ops }, b1],
            paths: vec![
                OwnedPath {
                    key: PathKey {
                        root: Root::Param(0),
                        fields: vec![],
                    },
                    ty: s(Int64),
                },
                OwnedPath {
                    key: recv.clone(),
                    ty: Type::Nominal(point),
                },
            ],
            loans: vec![Loan {
                id: 0,
                kind: LoanKind::Shared,
                origin: recv.clone(),
                parent: None,
                borrowed: Type::Ref(Box::new(Type::Nominal(point))),
                creation: None,
                last_use: None,
            }],
            edges: vec![
                CleanupEdge {
                    id: 0,
                    kind: EdgeKind::Branch,
                    source: 0,
                    successor: Some(1),
                    drops: vec![],
                },
                CleanupEdge {
                    id: 1,
                    kind: EdgeKind::Branch,
                    source: 0,
                    successor: Some(2),
                    drops: vec![],
                },
                CleanupEdge {
                    id: 2,
                    kind: EdgeKind::Return,
                    source: 1,
                    successor: None,
                    drops: vec![],
                },
                CleanupEdge {
                    id: 3,
                    kind: EdgeKind::Return,
                    source: 2,
                    successor: None,
                    drops: vec![],
                },
            ],
        },
    };
    // Shape.circle() -> Shape (type receiver) building a payload variant.
    let mk = Function {
        callable: CallableKind::Message,
        receiver: ReceiverKind::Type,
        name: "unit".into(),
        visibility: Visibility::Module,
        params: vec![],
        result: Type::Nominal(shape),
        effects: vec![Effect::Io, Effect::Abort],
        requires: vec![],
        ensures: vec![],
        body: Body {
            locals: vec![Param {
                ordinal: 0,
                name: "tmp".into(),
                ty: s(UInt8),
            }],
            blocks: vec![Block {
                id: 0,
                ops: vec![
                    Op {
                        tag: tag::CONST,
                        result: Some(s(Int64)),
                        operands: vec![Operand::Const(Constant {
                            kind: Int64,
                            bits: u64::MAX,
                        })],
                        aux0: Aux::None,
                        aux1: Aux::None,
                    },
                    Op {
                        tag: tag::VARIANT_CONSTRUCT,
                        result: Some(Type::Nominal(shape)),
                        operands: vec![Operand::Value(flow(0, 0))],
                        aux0: Aux::Variant(variant_id(pkg, name, 1)),
                        aux1: Aux::Lit(1),
                    },
                    ret(flow(0, 1)),
                ],
            }],
            paths: vec![],
            loans: vec![],
            edges: vec![CleanupEdge {
                id: 0,
                kind: EdgeKind::Return,
                source: 0,
                successor: None,
                drops: vec![],
            }],
        },
    };
    Module {
        package: pkg.into(),
        name: name.into(),
        profile: NumericProfile::Exact,
        mode: VerificationMode::Checked,
        imports: vec![],
        declarations: vec![
            Declaration {
                kind: DeclKind::Enum,
                name: "Shape".into(),
                visibility: Visibility::Public,
                fields: vec![],
                variants: vec![
                    Variant {
                        tag: 1,
                        name: "Circle".into(),
                        fields: vec![Field {
                            ordinal: 0,
                            name: "radius".into(),
                            visibility: Visibility::Public,
                            mutability: Mutability::Let,
                            ty: s(Int64),
                        }],
                    },
                    Variant {
                        tag: 0,
                        name: "Empty".into(),
                        fields: vec![],
                    },
                ],
                functions: vec![mk],
            },
            Declaration {
                kind: DeclKind::Value,
                name: "Point".into(),
                visibility: Visibility::Public,
                fields: vec![
                    Field {
                        ordinal: 1,
                        name: "y".into(),
                        visibility: Visibility::Private,
                        mutability: Mutability::Var,
                        ty: i32t.clone(),
                    },
                    Field {
                        ordinal: 0,
                        name: "x".into(),
                        visibility: Visibility::Public,
                        mutability: Mutability::Let,
                        ty: i32t.clone(),
                    },
                ],
                variants: vec![],
                functions: vec![sum],
            },
        ],
    }
}

fn field_id(pkg: &str, module: &str, ordinal: u32) -> Id {
    let point = nominal(pkg, module, DeclKind::Value, "Point");
    let mut h = Hasher::new(false);
    let t = h.type_id(&Type::Scalar(ScalarKind::Int32));
    let (name, vis, mt) = if ordinal == 0 {
        ("x", 0u32, 0u32)
    } else {
        ("y", 2, 1)
    };
    crate::hash::h(
        crate::hash::domain::FIELD,
        &[
            crate::hash::u32p(0),
            point.to_vec(),
            crate::hash::u32p(ordinal),
            name.as_bytes().to_vec(),
            crate::hash::u32p(vis),
            crate::hash::u32p(mt),
            t.to_vec(),
            crate::hash::u32p(0),
        ],
    )
}

fn variant_id(pkg: &str, module: &str, tag: u32) -> Id {
    let shape = nominal(pkg, module, DeclKind::Enum, "Shape");
    let name = if tag == 0 { "Empty" } else { "Circle" };
    crate::hash::h(
        crate::hash::domain::VARIANT,
        &[
            shape.to_vec(),
            crate::hash::u32p(tag),
            name.as_bytes().to_vec(),
        ],
    )
}
