//! Property test of definite assignment (section 5.2) against a brute-force
//! model: random small control-flow graphs (loops, joins, constant and
//! register conditions, returns, discards, unreachable blocks) whose blocks
//! write and read one register. The model explores every (block, assigned)
//! state reachable from the entry; the verifier must reject exactly the
//! graphs where some reachable read can see the register unassigned, and
//! report the first such read in program order.

use proptest::prelude::*;
use std::collections::BTreeSet;
use vpl::ir::*;
use vpl::verify::{Rule, Subject, verify};

#[derive(Debug, Clone, Copy)]
enum Action {
    Write,
    Read,
}

#[derive(Debug, Clone, Copy)]
enum End {
    Return,
    Discard,
    Branch(usize),
    BranchIf(u8, usize, usize),
}

#[derive(Debug, Clone)]
struct Graph {
    blocks: Vec<(Vec<Action>, End)>,
}

fn graph() -> impl Strategy<Value = Graph> {
    (1usize..7).prop_flat_map(|n| {
        let action = prop_oneof![Just(Action::Write), Just(Action::Read)];
        let end = prop_oneof![
            1 => Just(End::Return),
            1 => Just(End::Discard),
            3 => (0..n).prop_map(End::Branch),
            3 => (0u8..3, 0..n, 0..n).prop_map(|(c, t, f)| End::BranchIf(c, t, f)),
        ];
        prop::collection::vec((prop::collection::vec(action, 0..3), end), n)
            .prop_map(|blocks| Graph { blocks })
    })
}

/// Instructions before the actions in the entry block: four register
/// declarations, then the color construct/store and the condition copy.
const ENTRY_PREFIX: usize = 7;

fn build(g: &Graph) -> Module {
    let mut m = Module::new();
    let void = m.types.void();
    let color = m.types.vector(ScalarKind::Float, 4);
    let int = m.types.scalar(ScalarKind::Int);
    let boolean = m.types.scalar(ScalarKind::Bool);
    for kind in [StageKind::Vertex, StageKind::Fragment] {
        let (name, location, semantic) = match kind {
            StageKind::Vertex => ("clip", -1, Semantic::Position),
            StageKind::Fragment => ("color", 0, Semantic::FragmentColor),
        };
        m.stage_mut(kind)
            .add_interface(Direction::Out, name, color, location, semantic);
    }
    let one_f = m.float_const(1.0);
    let one = m.int_const(1);
    let t = m.bool_const(true);
    let f = m.bool_const(false);
    for kind in [StageKind::Vertex, StageKind::Fragment] {
        let mut func = Function::new("main", void);
        let r0 = func.declare_register(0, color);
        let r5 = func.declare_register(5, int);
        let r6 = func.declare_register(6, boolean);
        let r7 = func.declare_register(7, int);
        for _ in 1..g.blocks.len() {
            func.add_block();
        }
        let entry = func.entry_block().unwrap();
        func.blocks[entry]
            .push(InstructionKind::Construct {
                result: r0,
                ty: color,
                arguments: vec![one_f],
            })
            .push(InstructionKind::Store {
                target: Reference::root(StorageKind::StageIo, 0, color),
                value: r0.into(),
            })
            .push(InstructionKind::Copy {
                result: r6,
                source: t,
            });
        for (i, (actions, end)) in g.blocks.iter().enumerate() {
            let block = &mut func.blocks[Handle::from_index(i as u32)];
            for a in actions {
                block.push(match a {
                    Action::Write => InstructionKind::Copy {
                        result: r5,
                        source: one,
                    },
                    Action::Read => InstructionKind::Binary {
                        result: r7,
                        op: BinaryOp::Add,
                        lhs: r5.into(),
                        rhs: one,
                    },
                });
            }
            let h = |b: usize| Handle::from_index(b as u32);
            block.terminate(match *end {
                // Discard is fragment-only: the vertex copy returns instead.
                End::Discard if kind == StageKind::Vertex => TerminatorKind::Return { value: None },
                End::Discard => TerminatorKind::Discard,
                End::Return => TerminatorKind::Return { value: None },
                End::Branch(b) => TerminatorKind::Branch { target: h(b) },
                End::BranchIf(c, a, b) => TerminatorKind::BranchIf {
                    condition: [t, f, r6.into()][c as usize],
                    if_true: h(a),
                    if_false: h(b),
                },
            });
        }
        let stage = m.stage_mut(kind);
        let fh = stage.add_function(func);
        stage.entry = Some(fh);
    }
    m
}

/// The reads (block, instruction index) that can execute with r5 unassigned.
fn bad_reads(g: &Graph) -> BTreeSet<(usize, usize)> {
    let mut bad = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut work = vec![(0usize, false)];
    while let Some((b, mut assigned)) = work.pop() {
        if !seen.insert((b, assigned)) {
            continue;
        }
        let (actions, end) = &g.blocks[b];
        let base = if b == 0 { ENTRY_PREFIX } else { 0 };
        for (k, a) in actions.iter().enumerate() {
            match a {
                Action::Write => assigned = true,
                Action::Read if !assigned => {
                    bad.insert((b, base + k));
                }
                Action::Read => {}
            }
        }
        match *end {
            End::Return | End::Discard => {}
            End::Branch(t) => work.push((t, assigned)),
            End::BranchIf(_, t, f) => {
                work.push((t, assigned));
                work.push((f, assigned));
            }
        }
    }
    bad
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]
    #[test]
    fn definite_assignment_matches_path_exploration(g in graph()) {
        let m = build(&g);
        let bad = bad_reads(&g);
        match verify(&m) {
            Ok(_) => prop_assert!(bad.is_empty(), "accepted, but reads {bad:?} may see r5 unassigned"),
            Err(e) => {
                prop_assert_eq!(e.rule, Rule::DefiniteAssignment, "{}", e);
                prop_assert!(e.message.contains("r5"), "{}", e);
                let first = bad.iter().next().copied();
                prop_assert!(first.is_some(), "rejected a graph without bad reads: {}", e);
                let (block, index) = first.unwrap();
                let reported = match e.subject {
                    Subject::Operand { stage: StageKind::Vertex, block, instruction: Some(i), operand: 0, .. } => (block.index(), i),
                    other => return Err(TestCaseError::fail(format!("unexpected subject {other:?}"))),
                };
                prop_assert_eq!(reported, (block, index), "{}", e);
            }
        }
    }
}
