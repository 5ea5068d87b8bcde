//! Canonical writer (section 11): goldens, builder-made modules, escapes,
//! float bits, nominal records, limits, and publication.

use vpl::VerifiedModule;
use vpl::ir::*;
use vpl::text::{ErrorKind, read, write};

const EXAMPLES: [&str; 3] = ["minimal", "loop_call", "nested_storage"];

fn example(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../examples/vpl/{name}.vpl",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn examples_match_their_reviewed_goldens() {
    for name in EXAMPLES {
        let m = read(&example(name), name).unwrap_or_else(|e| panic!("{e}"));
        let text = write(&m).unwrap();
        let golden = std::fs::read_to_string(format!(
            "{}/tests/golden/{name}.vpl",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert_eq!(
            text, golden,
            "{name}: canonical text changed; review and update tests/golden"
        );
        // Canonical text is a fixed point and LF-only, ASCII here.
        assert_eq!(
            write(&read(text.as_bytes(), "golden").unwrap()).unwrap(),
            text
        );
        assert!(!text.contains('\r'));
        assert!(text.ends_with(")\n"));
    }
}

/// A module built directly: a fragment stage storing constants, with extra
/// uniforms to exercise names and records.
fn built(constants: &[f32]) -> Module {
    let mut m = Module::new();
    let void = m.types.void();
    let color = m.types.vector(ScalarKind::Float, 4);
    let float = m.types.scalar(ScalarKind::Float);
    for kind in [StageKind::Vertex, StageKind::Fragment] {
        let slot = match kind {
            StageKind::Vertex => {
                m.vertex
                    .add_interface(Direction::Out, "p", color, -1, Semantic::Position)
            }
            StageKind::Fragment => {
                m.fragment
                    .add_interface(Direction::Out, "c", color, 0, Semantic::FragmentColor)
            }
        };
        let mut f = Function::new("main", void);
        let r0 = f.declare_register(0, color);
        let r1 = f.declare_register(1, float);
        let entry = f.entry_block().unwrap();
        let mut ops: Vec<InstructionKind> = Vec::new();
        for &c in constants {
            ops.push(InstructionKind::Copy {
                result: r1,
                source: Operand::constant(float, Literal::Float(c)),
            });
        }
        ops.push(InstructionKind::Construct {
            result: r0,
            ty: color,
            arguments: vec![Operand::constant(float, Literal::Float(1.0))],
        });
        ops.push(InstructionKind::Store {
            target: Reference::root(StorageKind::StageIo, slot, color),
            value: r0.into(),
        });
        for op in ops {
            f.blocks[entry].push(op);
        }
        f.blocks[entry].terminate(TerminatorKind::Return { value: None });
        let h = m.stage_mut(kind).add_function(f);
        m.stage_mut(kind).entry = Some(h);
    }
    m
}

fn fragment_floats(m: &Module) -> Vec<u32> {
    let f = &m.fragment.functions[m.fragment.entry.unwrap()];
    f.blocks
        .iter()
        .flat_map(|(_, b)| b.instructions.iter())
        .filter_map(|i| match &i.kind {
            InstructionKind::Copy { source, .. } => match source.value {
                Value::Constant(Constant {
                    value: Literal::Float(v),
                    ..
                }) => Some(v.to_bits()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn float_bits_survive_including_signed_zero_and_subnormals() {
    let values = [
        -0.0f32,
        0.0,
        f32::from_bits(1),
        f32::from_bits(0x007F_FFFF),
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        0.1,
        1.0 / 3.0,
        16777217.0,
        -2.5e-30,
    ];
    let m = built(&values);
    let text = write(&m).unwrap();
    assert!(text.contains("(float -0.0)"), "{text}");
    let back = read(text.as_bytes(), "w").unwrap();
    assert_eq!(
        fragment_floats(&back),
        values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
}

#[test]
fn non_finite_literals_are_rejected_before_writing() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let e = write(&built(&[bad])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Semantic);
        assert!(e.verify.is_some());
    }
}

#[test]
fn strings_use_double_quotes_and_unicode_escapes_for_controls() {
    let mut m = built(&[]);
    let entry = m.fragment.entry.unwrap();
    m.fragment.functions[entry].name = "a\"b\\c'd\n\t\u{0}\u{7f}\u{85}é🦀".into();
    let text = write(&m).unwrap();
    assert!(
        text.contains(r#"(function f0 "a\"b\\c'd\u000A\u0009\u0000\u007F\u0085é🦀" t"#),
        "{text}"
    );
    let back = read(text.as_bytes(), "w").unwrap();
    assert_eq!(
        back.fragment.functions[back.fragment.entry.unwrap()].name,
        m.fragment.functions[entry].name
    );
}

#[test]
fn records_keep_nominal_identity_and_unused_types_are_dropped() {
    let mut m = built(&[]);
    let float = m.types.scalar(ScalarKind::Float);
    let field = |ty| Field {
        name: "x".into(),
        ty,
        span: None,
    };
    let a = m.types.declare_record("Same", vec![field(float)], None);
    let b = m.types.declare_record("Same", vec![field(float)], None);
    let _unused = m.types.declare_record("Unused", vec![], None);
    let _unused_vec = m.types.vector(ScalarKind::Int, 3);
    m.add_uniform(UniformKind::Record, "ua", a);
    m.add_uniform(UniformKind::Record, "ub", b);
    m.add_uniform(UniformKind::Record, "ua2", a);
    let text = write(&m).unwrap();
    assert_eq!(text.matches("record \"Same\"").count(), 2, "{text}");
    assert!(
        !text.contains("Unused") && !text.contains("vector int 3"),
        "{text}"
    );
    let back = read(text.as_bytes(), "w").unwrap();
    assert_eq!(back.uniforms[0].ty, back.uniforms[2].ty);
    assert_ne!(back.uniforms[0].ty, back.uniforms[1].ty);
    // First-discovery order: uniform types come first.
    assert!(text.contains("(type t0 record \"Same\" (field \"x\" t1))\n    (type t1 float)\n    (type t2 record \"Same\""), "{text}");
}

#[test]
fn derived_reference_depth_is_limited_to_120() {
    for (depth, ok) in [(120usize, true), (121, false)] {
        let mut m = built(&[]);
        let color = m.types.vector(ScalarKind::Float, 4);
        let mut ty = color;
        let mut chain = vec![];
        for i in 0..depth {
            ty = m.types.declare_record(
                format!("N{i}"),
                vec![Field {
                    name: "x".into(),
                    ty,
                    span: None,
                }],
                None,
            );
            chain.push(ty);
        }
        let slot = m.add_uniform(UniformKind::Record, "deep", ty);
        let mut reference = Reference::root(StorageKind::Uniform, slot, ty);
        for i in (0..depth).rev() {
            let field_ty = if i == 0 { color } else { chain[i - 1] };
            reference = reference.member("x", field_ty);
        }
        let entry = m.fragment.entry.unwrap();
        let f = &mut m.fragment.functions[entry];
        let r0 = Register::new(0, color);
        f.blocks[Handle::from_index(0)].instructions.insert(
            2,
            InstructionKind::Load {
                result: r0,
                source: reference,
            }
            .into(),
        );
        let result = write(&m);
        assert_eq!(result.is_ok(), ok, "depth {depth}: {result:?}");
        if let Err(e) = result {
            assert!(e.message.contains("120"), "{e}");
        }
    }
}

#[test]
fn invalid_modules_are_not_written() {
    let mut m = built(&[]);
    m.vertex.entry = None;
    let e = write(&m).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Semantic);
    assert_eq!(e.label, vpl::text::WRITER_LABEL);
    // A built module has no spans: the error falls back to the module
    // opening, here the start of the (absent) text.
    assert_eq!(
        (e.position.offset, e.position.line, e.position.column),
        (0, 1, 1)
    );
    assert!(e.verify.is_some());
    // A read module falls back to its `(module` form.
    let mut read_back = read(b"  (module 1 (types (type V void) (type C vector float 4)) (uniforms)\n (vertex e (interface (out p \"p\" C -1 position)) (functions (function e \"e\" V (parameters) (registers (register r0 C)) (block b (construct r0 (float 1.0)) (store (stage p) r0) (return)))))\n (fragment e (interface (out c \"c\" C 0 fragment_color)) (functions (function e \"e\" V (parameters) (registers (register r0 C)) (block b (construct r0 (float 1.0)) (store (stage c) r0) (return))))))", "m").unwrap();
    read_back.vertex.span = None;
    read_back.vertex.entry = None;
    let e = write(&read_back).unwrap_err();
    assert_eq!(
        (e.position.offset, e.position.line, e.position.column),
        (2, 1, 3)
    );
}

#[test]
fn register_numbers_and_order_are_preserved() {
    let text = String::from_utf8(example("loop_call")).unwrap();
    let m = read(text.as_bytes(), "x").unwrap();
    let w = write(&m).unwrap();
    assert!(
        w.contains("(register r1 t0)\n          (register r2 t1)"),
        "{w}"
    );
}

#[test]
fn publication_is_an_immutable_snapshot() {
    let mut source = read(&example("loop_call"), "loop").unwrap();
    let published = VerifiedModule::new(&source).unwrap();
    let text = published.text().to_string();
    assert_eq!(text, write(&source).unwrap());
    // Mutating the source does not alter the snapshot.
    let entry = source.fragment.entry.unwrap();
    source.fragment.functions[entry].name = "changed".into();
    assert_eq!(published.text(), text);
    // Materializations are fresh and independent.
    let mut a = published.materialize().unwrap();
    let b = published.materialize().unwrap();
    a.uniforms.clear();
    a.fragment.functions[entry].name = "also changed".into();
    assert_eq!(write(&b).unwrap(), text);
    assert_eq!(published.text(), text);
    assert_eq!(published.materialize().unwrap(), b);
    // Invalid modules cannot be published.
    source.fragment.entry = None;
    assert!(VerifiedModule::new(&source).is_err());
}

#[test]
fn verifier_is_reusable_and_stateless() {
    let verifier = vpl::verify::Verifier::new();
    let good = read(&example("minimal"), "m").unwrap();
    let mut bad = good.clone();
    bad.fragment.entry = None;
    assert!(verifier.verify(&good).is_ok());
    assert!(verifier.verify(&bad).is_err());
    assert!(verifier.verify(&good).is_ok());
}

#[test]
fn builders_and_text_meet_the_same_verifier() {
    // The built module's text reads back to a module whose text is equal.
    let m = built(&[2.0]);
    let text = write(&m).unwrap();
    let back = read(text.as_bytes(), "b").unwrap();
    assert_eq!(write(&back).unwrap(), text);
    // A register used with a foreign type is rejected for both paths.
    let mut wrong = m.clone();
    let int = wrong.types.scalar(ScalarKind::Int);
    let entry = wrong.fragment.entry.unwrap();
    wrong.fragment.functions[entry].blocks[Handle::from_index(0)]
        .instructions
        .insert(
            2,
            InstructionKind::Copy {
                result: Register::new(1, int),
                source: Operand::constant(int, Literal::Int(0)),
            }
            .into(),
        );
    assert!(write(&wrong).is_err());
}
