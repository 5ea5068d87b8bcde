//! Property test of output definedness (section 6.3) against a brute-force
//! model: random small fragment-entry graphs store elements of a two-element
//! output array with constant or dynamic indices, read it, call a helper
//! that assigns element 1 (or discards), and end in returns, discards,
//! branches and loops. The model explores every (block, assigned-leaves)
//! state; the verifier must reject exactly the graphs in which some
//! reachable read or normal return can see an unassigned leaf, reporting the
//! first such event in program order.

use proptest::prelude::*;
use std::collections::BTreeSet;
use vpl::ir::*;
use vpl::verify::{Rule, Subject, verify};

#[derive(Debug, Clone, Copy)]
enum Action {
    Store0,
    Store1,
    StoreDynamic,
    Read0,
    ReadDynamic,
    CallAssign1,
    CallDiscard,
}

#[derive(Debug, Clone, Copy)]
enum End {
    Return,
    Discard,
    Branch(usize),
    BranchIf(usize, usize),
}

type Graph = Vec<(Vec<Action>, End)>;

fn graph() -> impl Strategy<Value = Graph> {
    (1usize..6).prop_flat_map(|n| {
        let action = prop_oneof![
            Just(Action::Store0),
            Just(Action::Store1),
            Just(Action::StoreDynamic),
            Just(Action::Read0),
            Just(Action::ReadDynamic),
            Just(Action::CallAssign1),
            Just(Action::CallDiscard),
        ];
        let end = prop_oneof![
            2 => Just(End::Return),
            1 => Just(End::Discard),
            2 => (0..n).prop_map(End::Branch),
            3 => (0..n, 0..n).prop_map(|(t, f)| End::BranchIf(t, f)),
        ];
        prop::collection::vec((prop::collection::vec(action, 0..3), end), n)
    })
}

/// Entry-block instructions before the actions: three declarations, the
/// color construct/store and the index copy.
const ENTRY_PREFIX: usize = 6;

fn build(g: &Graph) -> Module {
    let mut m = Module::new();
    let void = m.types.void();
    let color = m.types.vector(ScalarKind::Float, 4);
    let int = m.types.scalar(ScalarKind::Int);
    let float = m.types.scalar(ScalarKind::Float);
    let pair = m.types.array(float, 2);
    let one_f = m.float_const(1.0);
    let zero = m.int_const(0);
    let one = m.int_const(1);
    let t = m.bool_const(true);
    // Vertex: trivially valid.
    m.vertex
        .add_interface(Direction::Out, "clip", color, -1, Semantic::Position);
    let mut vf = Function::new("main", void);
    let r0 = vf.declare_register(0, color);
    let b = vf.entry_block().unwrap();
    vf.blocks[b]
        .push(InstructionKind::Construct {
            result: r0,
            ty: color,
            arguments: vec![one_f],
        })
        .push(InstructionKind::Store {
            target: Reference::root(StorageKind::StageIo, 0, color),
            value: r0.into(),
        })
        .terminate(TerminatorKind::Return { value: None });
    let h = m.vertex.add_function(vf);
    m.vertex.entry = Some(h);
    // Fragment: `color` plus the array output `pair`.
    m.fragment
        .add_interface(Direction::Out, "color", color, 0, Semantic::FragmentColor);
    m.fragment
        .add_interface(Direction::Out, "pair", pair, 1, Semantic::None);
    let element = |i: Operand| Reference::root(StorageKind::StageIo, 1, pair).index(i, float);
    // Helpers: f1 assigns pair[1]; f2 discards.
    let mut assign1 = Function::new("assign1", void);
    let b = assign1.add_block();
    assign1.blocks[b]
        .push(InstructionKind::Store {
            target: element(one),
            value: one_f,
        })
        .terminate(TerminatorKind::Return { value: None });
    let mut kill = Function::new("kill", void);
    let b = kill.add_block();
    kill.blocks[b].terminate(TerminatorKind::Discard);
    let mut func = Function::new("main", void);
    let r0 = func.declare_register(0, color);
    let r5 = func.declare_register(5, int);
    let r6 = func.declare_register(6, float);
    for _ in 1..g.len() {
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
            result: r5,
            source: one,
        });
    let (f_assign, f_kill) = (Handle::from_index(1), Handle::from_index(2));
    for (i, (actions, end)) in g.iter().enumerate() {
        let block = &mut func.blocks[Handle::from_index(i as u32)];
        for a in actions {
            block.push(match a {
                Action::Store0 => InstructionKind::Store {
                    target: element(zero),
                    value: one_f,
                },
                Action::Store1 => InstructionKind::Store {
                    target: element(one),
                    value: one_f,
                },
                Action::StoreDynamic => InstructionKind::Store {
                    target: element(r5.into()),
                    value: one_f,
                },
                Action::Read0 => InstructionKind::Load {
                    result: r6,
                    source: element(zero),
                },
                Action::ReadDynamic => InstructionKind::Load {
                    result: r6,
                    source: element(r5.into()),
                },
                Action::CallAssign1 => InstructionKind::Call {
                    result: None,
                    callee: Callee::Function(f_assign),
                    arguments: vec![],
                },
                Action::CallDiscard => InstructionKind::Call {
                    result: None,
                    callee: Callee::Function(f_kill),
                    arguments: vec![],
                },
            });
        }
        let h = |b: usize| Handle::from_index(b as u32);
        block.terminate(match *end {
            End::Return => TerminatorKind::Return { value: None },
            End::Discard => TerminatorKind::Discard,
            End::Branch(b) => TerminatorKind::Branch { target: h(b) },
            End::BranchIf(a, b) => TerminatorKind::BranchIf {
                condition: t,
                if_true: h(a),
                if_false: h(b),
            },
        });
    }
    let main = m.fragment.add_function(func);
    m.fragment.add_function(assign1);
    m.fragment.add_function(kill);
    m.fragment.entry = Some(main);
    m
}

/// Bad events: (block, instruction index or usize::MAX for the return).
fn bad_events(g: &Graph) -> BTreeSet<(usize, usize)> {
    let mut bad = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut work = vec![(0usize, 0u8)];
    'states: while let Some((b, mut leaves)) = work.pop() {
        if !seen.insert((b, leaves)) {
            continue;
        }
        let (actions, end) = &g[b];
        let base = if b == 0 { ENTRY_PREFIX } else { 0 };
        for (k, a) in actions.iter().enumerate() {
            match a {
                Action::Store0 => leaves |= 1,
                Action::Store1 | Action::CallAssign1 => leaves |= 2,
                Action::StoreDynamic => {}
                Action::Read0 if leaves & 1 == 0 => {
                    bad.insert((b, base + k));
                }
                Action::ReadDynamic if leaves != 3 => {
                    bad.insert((b, base + k));
                }
                Action::Read0 | Action::ReadDynamic => {}
                Action::CallDiscard => continue 'states,
            }
        }
        match *end {
            End::Return if leaves != 3 => {
                bad.insert((b, usize::MAX));
            }
            End::Return | End::Discard => {}
            End::Branch(t) => work.push((t, leaves)),
            End::BranchIf(t, f) => {
                work.push((t, leaves));
                work.push((f, leaves));
            }
        }
    }
    bad
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]
    #[test]
    fn output_definedness_matches_path_exploration(g in graph()) {
        let m = build(&g);
        let bad = bad_events(&g);
        match verify(&m) {
            Ok(_) => prop_assert!(bad.is_empty(), "accepted, but {bad:?} may see pair unassigned"),
            Err(e) => {
                prop_assert_eq!(e.rule, Rule::Output, "{}", e);
                prop_assert!(e.message.contains("\"pair\""), "{}", e);
                let first = bad.iter().next().copied();
                prop_assert!(first.is_some(), "rejected without a bad event: {}", e);
                let reported = match e.subject {
                    Subject::Instruction { block, index, .. } => (block.index(), index),
                    Subject::Terminator { block, .. } => (block.index(), usize::MAX),
                    other => return Err(TestCaseError::fail(format!("unexpected subject {other:?}"))),
                };
                prop_assert_eq!(Some(reported), first, "{}", e);
            }
        }
    }
}
