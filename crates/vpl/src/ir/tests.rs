//! Builder tests: modules built directly go through the same verifier.

use super::*;
use crate::verify::{Subject, verify};

/// Builds the minimal module of spec section 10.3 directly.
pub(crate) fn minimal_module() -> Module {
    let mut m = Module::new();
    let void = m.types.void();
    let color = m.types.vector(ScalarKind::Float, 4);
    for kind in [StageKind::Vertex, StageKind::Fragment] {
        let slot = match kind {
            StageKind::Vertex => {
                m.vertex
                    .add_interface(Direction::Out, "position", color, -1, Semantic::Position)
            }
            StageKind::Fragment => {
                m.fragment
                    .add_interface(Direction::Out, "color", color, 0, Semantic::FragmentColor)
            }
        };
        let one = m.float_const(1.0);
        let mut f = Function::new(format!("{}_main", kind.keyword()), void);
        let r0 = f.declare_register(0, color);
        let entry = f
            .entry_block()
            .expect("declare_register creates the entry block");
        f.blocks[entry]
            .push(InstructionKind::Construct {
                result: r0,
                ty: color,
                arguments: vec![one],
            })
            .push(InstructionKind::Store {
                target: Reference::root(StorageKind::StageIo, slot, color),
                value: r0.into(),
            })
            .terminate(TerminatorKind::Return { value: None });
        let stage = m.stage_mut(kind);
        let h = stage.add_function(f);
        stage.entry = Some(h);
    }
    m
}

#[test]
fn built_module_verifies() {
    let m = minimal_module();
    verify(&m).expect("the minimal module verifies");
    assert_eq!(m.vertex.functions.len(), 1);
    assert_eq!(
        m.vertex.functions[m.vertex.entry.unwrap()]
            .declared_registers()
            .count(),
        1
    );
}

#[test]
fn structural_types_are_interned_and_records_are_nominal() {
    let mut t = TypeArena::new();
    let a = t.vector(ScalarKind::Float, 4);
    let b = t.insert(
        TypeInner::Vector {
            kind: ScalarKind::Float,
            size: 4,
        },
        None,
    );
    assert_eq!(a, b);
    let int = t.scalar(ScalarKind::Int);
    let f = |ty| Field {
        name: "x".into(),
        ty,
        span: None,
    };
    let r1 = t.declare_record("R", vec![f(int)], None);
    let r2 = t.declare_record("R", vec![f(int)], None);
    assert_ne!(r1, r2, "equal declarations are distinct types");
    assert_ne!(t.array(r1, 2), t.array(r2, 2));
    assert_eq!(t.array(r1, 2), t.array(r1, 2));
}

#[test]
fn missing_terminator_is_reported() {
    let mut m = minimal_module();
    let entry = m.fragment.entry.unwrap();
    m.fragment.functions[entry].blocks[Handle::from_index(0)].terminator = None;
    let e = verify(&m).unwrap_err();
    assert!(
        matches!(
            e.subject,
            Subject::Block {
                stage: StageKind::Fragment,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn missing_entry_is_reported() {
    let mut m = minimal_module();
    m.vertex.entry = None;
    let e = verify(&m).unwrap_err();
    assert_eq!(e.subject, Subject::Stage(StageKind::Vertex));
}

#[test]
fn undeclared_and_mistyped_registers_are_reported() {
    let mut m = minimal_module();
    let int = m.types.scalar(ScalarKind::Int);
    let entry = m.vertex.entry.unwrap();
    let block = &mut m.vertex.functions[entry].blocks[Handle::from_index(0)];
    block.instructions.push(
        InstructionKind::Copy {
            result: Register::new(7, int),
            source: Operand::constant(int, Literal::Int(1)),
        }
        .into(),
    );
    assert!(verify(&m).is_err(), "undeclared register");
    let block = &mut m.vertex.functions[entry].blocks[Handle::from_index(0)];
    block.instructions.pop();
    block.instructions.push(
        InstructionKind::Copy {
            result: Register::new(0, int),
            source: Operand::constant(int, Literal::Int(1)),
        }
        .into(),
    );
    assert!(verify(&m).is_err(), "register used with a foreign type");
}

#[test]
fn recursive_records_are_rejected() {
    let mut m = minimal_module();
    let r = m.types.declare_record("R", Vec::new(), None);
    let arr = m.types.array(r, 2);
    m.types.record_mut(r).unwrap().fields.push(Field {
        name: "next".into(),
        ty: arr,
        span: None,
    });
    assert!(verify(&m).is_err(), "recursive record");
}

#[test]
fn declarations_outside_the_entry_prefix_are_rejected() {
    let mut m = minimal_module();
    let entry = m.vertex.entry.unwrap();
    let f = &mut m.vertex.functions[entry];
    let color = f.return_type;
    let block = &mut f.blocks[Handle::from_index(0)];
    block.instructions.push(
        InstructionKind::DeclareLocal {
            register: Register::new(5, color),
        }
        .into(),
    );
    assert!(
        verify(&m).is_err(),
        "declaration after an executable instruction"
    );
}

#[test]
fn constant_type_must_match_literal() {
    let mut m = minimal_module();
    let int = m.types.scalar(ScalarKind::Int);
    let entry = m.fragment.entry.unwrap();
    let block = &mut m.fragment.functions[entry].blocks[Handle::from_index(0)];
    if let InstructionKind::Construct { arguments, .. } = &mut block.instructions[1].kind {
        arguments[0] = Operand::constant(int, Literal::Float(1.0));
    }
    assert!(verify(&m).is_err(), "float literal typed as int");
}

#[test]
fn instructions_stay_compact() {
    // A large module's memory is mostly its instructions (docs/vpl/decisions.md,
    // issue 41): a packed register keeps an operand at 32 bytes and an
    // instruction at 104.
    assert_eq!(std::mem::size_of::<Register>(), 12);
    assert_eq!(std::mem::size_of::<Operand>(), 32);
    assert!(std::mem::size_of::<Instruction>() <= 104);
}

#[test]
fn binary_keywords_round_trip() {
    for op in BinaryOp::ALL {
        assert_eq!(BinaryOp::from_keyword(op.keyword()), Some(op));
    }
    for word in ["", "ad", "add_", "Add", "less_", "copy", "not"] {
        assert_eq!(BinaryOp::from_keyword(word), None, "{word:?}");
    }
}
