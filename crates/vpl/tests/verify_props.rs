//! Property test: arbitrary mutations of valid modules never make the
//! verifier panic, and whatever it accepts can be written as canonical text
//! and read back (the reader and the verifier agree on validity).

use proptest::prelude::*;
use vpl::ir::*;

fn corpus() -> Vec<Module> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/verify/valid");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read(p).expect("readable");
            let mut m = vpl::text::read(&text, "case").expect("valid case");
            m.clear_spans();
            m
        })
        .collect()
}

/// One mutation: which kind, and three selectors.
type Edit = (u8, u32, u32, u32);

fn apply(m: &mut Module, (kind, a, b, c): Edit) {
    let ntypes = m.types.len() as u32 + 2;
    let stage = if a % 2 == 0 {
        &mut m.vertex
    } else {
        &mut m.fragment
    };
    let nf = stage.functions.len() as u32;
    if nf == 0 {
        return;
    }
    let fh = Handle::from_index(b % nf);
    let f = &mut stage.functions[fh];
    let nb = f.blocks.len() as u32;
    let bh = Handle::from_index(c % nb.max(1));
    match kind % 8 {
        0 => {
            // Remove an instruction.
            if let Some(block) = f.blocks.get_mut(bh)
                && !block.instructions.is_empty()
            {
                let i = (a as usize / 2) % block.instructions.len();
                block.instructions.remove(i);
            }
        }
        1 => {
            // Retarget a branch.
            if let Some(block) = f.blocks.get_mut(bh)
                && let Some(t) = &mut block.terminator
            {
                match &mut t.kind {
                    TerminatorKind::Branch { target } => *target = Handle::from_index(a % (nb + 1)),
                    TerminatorKind::BranchIf { if_false, .. } => {
                        *if_false = Handle::from_index(a % (nb + 1))
                    }
                    _ => t.kind = TerminatorKind::Return { value: None },
                }
            }
        }
        2 => {
            // Change a declared register's type.
            if let Some(block) = f.blocks.get_mut(Handle::from_index(0))
                && let Some(i) = block.instructions.first_mut()
                && let InstructionKind::DeclareLocal { register } = &mut i.kind
            {
                register.ty = Handle::from_index(a % ntypes);
            }
        }
        3 => f.return_type = Handle::from_index(a % ntypes),
        4 => {
            // Swap two instructions of a block.
            if let Some(block) = f.blocks.get_mut(bh) {
                let n = block.instructions.len();
                if n > 1 {
                    block.instructions.swap(a as usize % n, b as usize % n);
                }
            }
        }
        5 => {
            // Replace the first operand of an instruction by a constant.
            if let Some(block) = f.blocks.get_mut(bh) {
                let n = block.instructions.len();
                if n > 0 {
                    let ins = &mut block.instructions[a as usize % n];
                    let op =
                        Operand::constant(Handle::from_index(b % ntypes), Literal::Int(c as i32));
                    match &mut ins.kind {
                        InstructionKind::Copy { source, .. } => *source = op,
                        InstructionKind::Binary { rhs, .. } => *rhs = op,
                        InstructionKind::Store { value, .. } => *value = op,
                        InstructionKind::Construct { arguments, .. }
                        | InstructionKind::Call { arguments, .. } => arguments.push(op),
                        _ => {}
                    }
                }
            }
        }
        6 => {
            // Move the terminator away or discard.
            if let Some(block) = f.blocks.get_mut(bh) {
                block.terminator = if a % 3 == 0 {
                    None
                } else {
                    Some(TerminatorKind::Discard.into())
                };
            }
        }
        _ => {
            let n = stage.interface.len();
            if n > 0 {
                let v = &mut stage.interface[a as usize % n];
                match b % 3 {
                    0 => v.location = c as i32 % 4 - 1,
                    1 => v.ty = Handle::from_index(c % ntypes),
                    _ => {
                        v.direction = if v.direction == Direction::In {
                            Direction::Out
                        } else {
                            Direction::In
                        }
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]
    #[test]
    fn mutated_modules_never_panic_and_accepted_ones_round_trip(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec(any::<Edit>(), 1..4),
    ) {
        thread_local! {
            static CORPUS: Vec<Module> = corpus();
        }
        let mut m = CORPUS.with(|c| which.get(c).clone());
        for e in edits {
            apply(&mut m, e);
        }
        if vpl::verify::verify(&m).is_ok() {
            let text = vpl::text::write(&m);
            prop_assert!(text.is_ok(), "verified module not writable: {:?}", text.err());
        }
    }
}
