//! Verifier tests on directly built and mutated modules: the rules that the
//! text grammar cannot express (handles, stage kinds, missing entries,
//! blocks and terminators, misplaced declarations, forged descriptors),
//! verifier reuse and reruns after mutation, and resource robustness.

use vpl::ir::*;
use vpl::verify::{Rule, Subject, Verifier, verify};

const MINIMAL: &str = include_str!("../../../examples/vpl/minimal.vpl");
const NESTED: &str = include_str!("../../../examples/vpl/nested_storage.vpl");
const LOOP: &str = include_str!("../../../examples/vpl/loop_call.vpl");

fn read(text: &str) -> Module {
    let mut m = vpl::text::read(text.as_bytes(), "t.vpl").expect("example verifies");
    m.clear_spans();
    m
}

fn entry_block(m: &mut Module, stage: StageKind) -> &mut Block {
    let s = m.stage_mut(stage);
    let e = s.entry.expect("entry");
    let f = &mut s.functions[e];
    let b = f.entry_block().expect("block");
    &mut f.blocks[b]
}

fn expect(m: &Module, rule: Rule, text: &str) -> vpl::verify::VerifyError {
    let e = verify(m).expect_err("expected a verification error");
    assert_eq!(e.rule, rule, "{e}");
    assert!(e.message.contains(text), "{e} lacks {text:?}");
    assert_eq!(e.span, None, "built objects have no span");
    e
}

/// A fresh module with both stages, built only through the builder API.
fn built() -> Module {
    let mut m = Module::new();
    let void = m.types.void();
    let color = m.types.vector(ScalarKind::Float, 4);
    for kind in [StageKind::Vertex, StageKind::Fragment] {
        let (name, location, semantic) = match kind {
            StageKind::Vertex => ("clip", -1, Semantic::Position),
            StageKind::Fragment => ("color", 0, Semantic::FragmentColor),
        };
        let slot = m
            .stage_mut(kind)
            .add_interface(Direction::Out, name, color, location, semantic);
        let one = m.float_const(1.0);
        let mut f = Function::new("main", void);
        let r0 = f.declare_register(0, color);
        let b = f.entry_block().expect("entry block");
        f.blocks[b]
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
fn built_and_read_modules_use_the_same_verifier() {
    verify(&built()).expect("built module verifies");
    for text in [MINIMAL, NESTED, LOOP] {
        verify(&read(text)).expect("read module verifies again");
    }
}

#[test]
fn stage_kinds_are_checked() {
    let mut m = built();
    std::mem::swap(&mut m.vertex, &mut m.fragment);
    let e = expect(&m, Rule::Container, "has the fragment stage kind");
    assert_eq!(e.subject, Subject::Stage(StageKind::Vertex));
}

#[test]
fn entries_are_required_and_in_range() {
    let mut m = built();
    m.fragment.entry = None;
    let e = expect(&m, Rule::Container, "no entry function");
    assert_eq!(e.subject, Subject::Stage(StageKind::Fragment));
    m.fragment.entry = Some(Handle::from_index(3));
    expect(
        &m,
        Rule::Container,
        "does not name a function of this stage",
    );
}

#[test]
fn functions_need_blocks_and_terminators() {
    let mut m = built();
    let void = m.types.void();
    m.fragment.add_function(Function::new("empty", void));
    let e = expect(&m, Rule::Container, "has no blocks");
    assert!(matches!(e.subject, Subject::Function { .. }));

    let mut m = built();
    entry_block(&mut m, StageKind::Vertex).terminator = None;
    let e = expect(&m, Rule::Container, "no terminator");
    assert!(matches!(
        e.subject,
        Subject::Block {
            stage: StageKind::Vertex,
            ..
        }
    ));
}

#[test]
fn branch_targets_and_callees_stay_in_their_function_and_stage() {
    // A handle that does not address a block of this function stands for a
    // block of another function.
    let mut m = built();
    entry_block(&mut m, StageKind::Fragment).terminate(TerminatorKind::Branch {
        target: Handle::from_index(7),
    });
    expect(&m, Rule::Container, "not a block of this function");

    // A callee handle beyond the stage's function list: a function of the
    // other stage.
    let mut m = built();
    let helper = m.vertex.add_function({
        let void = m.types.void();
        let mut f = Function::new("helper", void);
        let b = f.add_block();
        f.blocks[b].terminate(TerminatorKind::Return { value: None });
        f
    });
    entry_block(&mut m, StageKind::Fragment)
        .instructions
        .insert(
            1,
            InstructionKind::Call {
                result: None,
                callee: Callee::Function(helper),
                arguments: vec![],
            }
            .into(),
        );
    expect(&m, Rule::Container, "not a function of the calling stage");
}

#[test]
fn registers_are_declared_once_in_the_entry_prefix() {
    let mut m = built();
    let color = m.types.vector(ScalarKind::Float, 4);
    let block = entry_block(&mut m, StageKind::Fragment);
    block.instructions.insert(
        1,
        InstructionKind::DeclareLocal {
            register: Register::new(0, color),
        }
        .into(),
    );
    expect(&m, Rule::Register, "declared twice");

    // A declaration in another block.
    let mut m = built();
    let color = m.types.vector(ScalarKind::Float, 4);
    let s = &mut m.fragment;
    let f = &mut s.functions[s.entry.unwrap()];
    let b = f.add_block();
    f.blocks[b]
        .push(InstructionKind::DeclareLocal {
            register: Register::new(1, color),
        })
        .terminate(TerminatorKind::Return { value: None });
    let e = expect(&m, Rule::Register, "outside the declaration prefix");
    assert!(matches!(e.subject, Subject::Instruction { index: 0, .. }));

    // A descriptor that disagrees with the declared type.
    let mut m = built();
    let int = m.types.scalar(ScalarKind::Int);
    let block = entry_block(&mut m, StageKind::Fragment);
    if let InstructionKind::Store { value, .. } = &mut block.instructions[2].kind {
        *value = Register::new(0, int).into();
    }
    expect(&m, Rule::Register, "other than its declared type");

    // Void registers.
    let mut m = built();
    let void = m.types.void();
    let block = entry_block(&mut m, StageKind::Fragment);
    block.instructions.insert(
        0,
        InstructionKind::DeclareLocal {
            register: Register::new(9, void),
        }
        .into(),
    );
    expect(&m, Rule::Register, "type void");
}

#[test]
fn type_shapes_and_recursion() {
    let cases: [(TypeInner, &str); 4] = [
        (
            TypeInner::Vector {
                kind: ScalarKind::Float,
                size: 5,
            },
            "vector size 5",
        ),
        (
            TypeInner::Matrix {
                rows: 1,
                columns: 2,
            },
            "matrix dimensions 1x2",
        ),
        (
            TypeInner::Array {
                element: Handle::from_index(1),
                length: 0,
            },
            "array length is zero",
        ),
        (
            TypeInner::Array {
                element: Handle::from_index(999),
                length: 1,
            },
            "out of range",
        ),
    ];
    for (inner, text) in cases {
        let mut m = built();
        m.types.insert(inner, None);
        let e = expect(&m, Rule::Type, text);
        assert!(matches!(e.subject, Subject::Type(_)));
    }
    // An unused record containing itself through an array.
    let mut m = built();
    let r = m.types.declare_record("Node", Vec::new(), None);
    let arr = m.types.array(r, 2);
    m.types.record_mut(r).unwrap().fields.push(Field {
        name: "children".into(),
        ty: arr,
        span: None,
    });
    expect(&m, Rule::Type, "recursive");
}

#[test]
fn forged_references_are_rejected() {
    let base = built();
    let color = base.fragment.interface[0].ty;
    let float = {
        let mut t = base.types.clone();
        t.scalar(ScalarKind::Float)
    };
    let cases: Vec<(Reference, &str)> = vec![
        (
            Reference::root(StorageKind::StageIo, 5, color),
            "stage slot 5 does not exist",
        ),
        (
            Reference::root(StorageKind::Parameter, 0, color),
            "parameter slot 0 does not exist",
        ),
        (
            Reference::root(StorageKind::Uniform, 0, color),
            "uniform slot 0 does not exist",
        ),
        (
            Reference::root(StorageKind::Local, 3, color),
            "register r3 is not declared",
        ),
        (
            Reference::root(StorageKind::StageIo, 0, color).member("x", float),
            "needs record storage",
        ),
        (
            Reference::root(StorageKind::StageIo, 0, color).index(
                Operand::constant(Handle::from_index(0), Literal::Int(0)),
                float,
            ),
            "needs array storage",
        ),
    ];
    for (reference, text) in cases {
        let mut m = built();
        m.types.scalar(ScalarKind::Float);
        if let InstructionKind::Store { target, .. } =
            &mut entry_block(&mut m, StageKind::Fragment).instructions[2].kind
        {
            *target = reference;
        }
        expect(&m, Rule::Storage, text);
    }
}

#[test]
fn derived_reference_types_must_agree() {
    let mut m = read(NESTED);
    let int = m.types.scalar(ScalarKind::Int);
    let s = &mut m.fragment;
    let f = &mut s.functions[s.entry.unwrap()];
    let b = f.entry_block().unwrap();
    // (store (member_ref (index_ref (member_ref ..) r4) "rgb") r0): forge the
    // member selector's inherited type.
    let store = f.blocks[b]
        .instructions
        .iter_mut()
        .find(
            |i| matches!(&i.kind, InstructionKind::Store { target, .. } if target.path.len() == 3),
        )
        .unwrap();
    if let InstructionKind::Store { target, .. } = &mut store.kind {
        target.path[2].ty = int;
    }
    expect(&m, Rule::Storage, "differs from the selected stored type");
}

#[test]
fn constants_and_builtins_are_checked() {
    let mut m = built();
    let int = m.types.scalar(ScalarKind::Int);
    if let InstructionKind::Construct { arguments, .. } =
        &mut entry_block(&mut m, StageKind::Fragment).instructions[1].kind
    {
        arguments[0] = Operand::constant(int, Literal::Float(1.0));
    }
    expect(&m, Rule::Instruction, "constant type");

    let mut m = built();
    let float = m.types.scalar(ScalarKind::Float);
    if let InstructionKind::Construct { arguments, .. } =
        &mut entry_block(&mut m, StageKind::Fragment).instructions[1].kind
    {
        arguments[0] = Operand::constant(float, Literal::Float(f32::INFINITY));
    }
    expect(&m, Rule::Instruction, "not finite");

    let mut m = built();
    entry_block(&mut m, StageKind::Fragment).instructions[1] = InstructionKind::Call {
        result: None,
        callee: Callee::Builtin(Builtin::Texture),
        arguments: vec![],
    }
    .into();
    expect(&m, Rule::Instruction, "requires a destination register");

    let mut m = built();
    let color = m.types.vector(ScalarKind::Float, 4);
    let r0 = Register::new(0, color);
    entry_block(&mut m, StageKind::Fragment).instructions[1] = InstructionKind::Swizzle {
        result: r0,
        source: r0.into(),
        pattern: vec![SwizzleComponent::X; 5],
    }
    .into();
    expect(&m, Rule::Instruction, "1 to 4 selectors");

    let mut m = built();
    let int = m.types.scalar(ScalarKind::Int);
    let color = m.types.vector(ScalarKind::Float, 4);
    entry_block(&mut m, StageKind::Fragment).instructions[1] = InstructionKind::Construct {
        result: Register::new(0, color),
        ty: int,
        arguments: vec![],
    }
    .into();
    expect(
        &m,
        Rule::Instruction,
        "differs from the destination register's type",
    );
}

#[test]
fn discard_is_fragment_only_for_built_modules_too() {
    let mut m = built();
    entry_block(&mut m, StageKind::Vertex).terminate(TerminatorKind::Discard);
    let e = expect(&m, Rule::ControlFlow, "only allowed in the fragment stage");
    assert!(matches!(
        e.subject,
        Subject::Terminator {
            stage: StageKind::Vertex,
            ..
        }
    ));
}

#[test]
fn the_verifier_is_reusable_and_reruns_see_mutations() {
    let verifier = Verifier::new();
    let mut m = built();
    verifier.verify(&m).expect("valid");
    // Mutate: the fragment entry no longer stores its color.
    entry_block(&mut m, StageKind::Fragment)
        .instructions
        .remove(2);
    let e = verifier.verify(&m).expect_err("mutated module fails");
    assert_eq!(e.rule, Rule::Output);
    // Same verifier, unrelated valid module: no state carried over.
    verifier.verify(&read(LOOP)).expect("other module verifies");
    assert_eq!(verifier.verify(&m), Err(e.clone()), "same answer on rerun");
    // Publication re-verifies the current graph.
    assert!(vpl::VerifiedModule::new(&m).is_err());
    let color = m.types.vector(ScalarKind::Float, 4);
    entry_block(&mut m, StageKind::Fragment).instructions.push(
        InstructionKind::Store {
            target: Reference::root(StorageKind::StageIo, 0, color),
            value: Register::new(0, color).into(),
        }
        .into(),
    );
    verifier.verify(&m).expect("repaired module verifies");
    let published = vpl::VerifiedModule::new(&m).expect("publishes");
    // Mutating the builder after publication does not alter the snapshot.
    entry_block(&mut m, StageKind::Fragment)
        .instructions
        .clear();
    assert!(verifier.verify(&m).is_err());
    verifier
        .verify(&published.materialize().expect("materializes"))
        .expect("snapshot still verifies");
}

/// Definite assignment on an irreducible graph: entry branches into a
/// two-block cycle at either block; only one of them assigns.
#[test]
fn irreducible_graphs_reach_the_fixed_point() {
    let mut m = built();
    let int = m.types.scalar(ScalarKind::Int);
    let boolean = m.types.scalar(ScalarKind::Bool);
    let t = m.bool_const(true);
    let one = m.int_const(1);
    let s = &mut m.fragment;
    let f = &mut s.functions[s.entry.unwrap()];
    let r5 = f.declare_register(5, int);
    let _ = boolean;
    let a = f.add_block();
    let b = f.add_block();
    let entry = f.entry_block().unwrap();
    f.blocks[entry].terminate(TerminatorKind::BranchIf {
        condition: t,
        if_true: a,
        if_false: b,
    });
    f.blocks[a]
        .push(InstructionKind::Copy {
            result: r5,
            source: one,
        })
        .terminate(TerminatorKind::Branch { target: b });
    f.blocks[b]
        .push(InstructionKind::Binary {
            result: r5,
            op: BinaryOp::Add,
            lhs: r5.into(),
            rhs: one,
        })
        .terminate(TerminatorKind::Branch { target: a });
    let e = expect(&m, Rule::DefiniteAssignment, "r5 is read");
    assert!(matches!(e.subject, Subject::Operand { operand: 0, .. }));
}

#[test]
fn deep_types_and_huge_outputs_stay_bounded() {
    // 20 000 nested array types: no recursion on the type depth.
    let mut m = built();
    let mut t = m.types.scalar(ScalarKind::Float);
    for _ in 0..20_000 {
        t = m.types.array(t, 2);
    }
    verify(&m).expect("deep unused types are fine");

    // A 2^40-element output array assigned by constant-index stores of its
    // first and last element: leaf ranges, not per-leaf bits.
    let mut m = built();
    let float = m.types.scalar(ScalarKind::Float);
    let big = m.types.array(float, 1 << 40);
    let slot = m
        .fragment
        .add_interface(Direction::Out, "big", big, 1, Semantic::None);
    let zero = m.float_const(0.0);
    let first = m.int_const(0);
    let last = m.int_const(i32::MAX);
    let block = entry_block(&mut m, StageKind::Fragment);
    for index in [first, last] {
        block.instructions.push(
            InstructionKind::Store {
                target: Reference::root(StorageKind::StageIo, slot, big).index(index, float),
                value: zero,
            }
            .into(),
        );
    }
    let e = expect(&m, Rule::Output, "\"big\" is not fully assigned");
    assert!(matches!(e.subject, Subject::Terminator { .. }));

    // Leaf counts beyond 2^64 are an implementation bound, not a panic.
    let mut m = built();
    let float = m.types.scalar(ScalarKind::Float);
    let a = m.types.array(float, u64::MAX);
    let aa = m.types.array(a, 4);
    m.fragment
        .add_interface(Direction::Out, "huge", aa, 1, Semantic::None);
    expect(&m, Rule::Limit, "2^64 leaves");
}

#[test]
fn many_registers_use_several_groups() {
    // More registers than one analysis group: the last one is read unassigned.
    let mut m = built();
    let int = m.types.scalar(ScalarKind::Int);
    let one = m.int_const(1);
    let n = vpl::verify::REGISTER_GROUP as u64 * 2 + 10;
    let s = &mut m.fragment;
    let f = &mut s.functions[s.entry.unwrap()];
    let regs: Vec<Register> = (1..=n).map(|i| f.declare_register(i, int)).collect();
    let b = f.entry_block().unwrap();
    let block = &mut f.blocks[b];
    let ret = block.instructions.len();
    let copies = regs[..regs.len() - 1].iter().map(|r| {
        Instruction::from(InstructionKind::Copy {
            result: *r,
            source: one,
        })
    });
    block.instructions.splice(ret..ret, copies);
    verify(&m).expect("all assigned before use (none read)");
    let last = *regs.last().unwrap();
    let s = &mut m.fragment;
    let f = &mut s.functions[s.entry.unwrap()];
    f.blocks[b].instructions.push(
        InstructionKind::Binary {
            result: regs[0],
            op: BinaryOp::Add,
            lhs: regs[1].into(),
            rhs: last.into(),
        }
        .into(),
    );
    let e = expect(&m, Rule::DefiniteAssignment, &format!("r{n} is read"));
    assert!(matches!(e.subject, Subject::Operand { operand: 1, .. }));
}

#[test]
fn dynamic_reads_of_large_record_arrays_are_bounded() {
    // out[i].a over an array of records selects one strided leaf per
    // element: fine for small arrays, an implementation bound beyond
    // MAX_DYNAMIC_READ_RANGES ranges.
    for (length, expect_limit) in [(8u64, false), (1 << 20, true)] {
        let mut m = built();
        let float = m.types.scalar(ScalarKind::Float);
        let int = m.types.scalar(ScalarKind::Int);
        let pair = m.types.declare_record(
            "Pair",
            vec![
                Field {
                    name: "a".into(),
                    ty: float,
                    span: None,
                },
                Field {
                    name: "b".into(),
                    ty: float,
                    span: None,
                },
            ],
            None,
        );
        let pairs = m.types.array(pair, length);
        let slot = m
            .fragment
            .add_interface(Direction::Out, "pairs", pairs, 1, Semantic::None);
        let zero = m.int_const(0);
        let s = &mut m.fragment;
        let f = &mut s.functions[s.entry.unwrap()];
        let r5 = f.declare_register(5, int);
        let r6 = f.declare_register(6, float);
        let b = f.entry_block().unwrap();
        let reference = Reference::root(StorageKind::StageIo, slot, pairs)
            .index(r5, pair)
            .member("a", float);
        f.blocks[b]
            .push(InstructionKind::Copy {
                result: r5,
                source: zero,
            })
            .push(InstructionKind::Load {
                result: r6,
                source: reference,
            });
        let e = verify(&m).expect_err("pairs is never assigned");
        if expect_limit {
            assert_eq!(e.rule, Rule::Limit, "{e}");
            assert!(
                e.message
                    .contains(&vpl::verify::MAX_DYNAMIC_READ_RANGES.to_string()),
                "{e}"
            );
        } else {
            assert_eq!(e.rule, Rule::Output, "{e}");
            assert!(e.message.contains("\"pairs\" is read before"), "{e}");
        }
    }
}

#[test]
fn declarations_with_bad_types_are_rejected() {
    // Uniform declaration forms must match their types.
    let mut m = built();
    let float = m.types.scalar(ScalarKind::Float);
    m.add_uniform(UniformKind::Record, "u", float);
    let e = expect(&m, Rule::Type, "a record uniform needs a record type");
    assert_eq!(e.subject, Subject::Uniform(0));

    let mut m = built();
    let float = m.types.scalar(ScalarKind::Float);
    let arr = m.types.array(float, 3);
    m.add_uniform(UniformKind::Scalar, "u", arr);
    expect(
        &m,
        Rule::Type,
        "a scalar uniform needs a non-aggregate value type",
    );

    let mut m = built();
    m.add_uniform(UniformKind::Scalar, "u", Handle::from_index(99));
    expect(&m, Rule::Type, "uniform type handle is out of range");

    let mut m = built();
    let void = m.types.void();
    m.add_uniform(UniformKind::Scalar, "u", void);
    expect(&m, Rule::Type, "not void");

    // Interface, parameter and return types.
    let mut m = built();
    m.fragment.add_interface(
        Direction::In,
        "x",
        Handle::from_index(99),
        3,
        Semantic::None,
    );
    let e = expect(&m, Rule::Type, "interface type handle is out of range");
    assert_eq!(
        e.subject,
        Subject::Interface {
            stage: StageKind::Fragment,
            slot: 1
        }
    );

    let mut m = built();
    let void = m.types.void();
    let s = &mut m.vertex;
    let entry = s.entry.unwrap();
    s.functions[entry].return_type = Handle::from_index(99);
    expect(&m, Rule::Type, "return type handle is out of range");
    let s = &mut m.vertex;
    s.functions[entry].return_type = void;
    s.functions[entry].add_parameter(void);
    let e = expect(&m, Rule::Type, "parameter type is void");
    assert!(matches!(e.subject, Subject::Parameter { slot: 0, .. }));
}

#[test]
fn uniqueness_compares_exact_contents() {
    // Case and Unicode normalization distinguish names; equal contents clash.
    let mut m = built();
    let float = m.types.scalar(ScalarKind::Float);
    m.add_uniform(UniformKind::Scalar, "\u{e9}", float);
    m.add_uniform(UniformKind::Scalar, "e\u{301}", float);
    m.add_uniform(UniformKind::Scalar, "E\u{301}", float);
    verify(&m).expect("distinct decoded contents");
    m.add_uniform(UniformKind::Scalar, "e\u{301}", float);
    let e = expect(&m, Rule::Container, "unique module-wide");
    assert_eq!(e.subject, Subject::Uniform(3));
}
