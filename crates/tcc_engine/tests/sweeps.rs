//! Garbage made between two checkpoints is freed during the step that
//! makes it (issue 42, F3), without changing any id, and so any
//! checkpoint's bytes.
mod common;
use common::*;
use tcc_engine::{Cell, Execution, HostRequest, HostResponse, Limits, Outcome, Value};

/// Allocates `n` objects in a loop and keeps one in `keep` (the first,
/// then every `keep`-th) in an array, which it returns. Locals: 0 the
/// array, 1 the counter, 2 the countdown to the next kept object, 3 the
/// object.
fn garbage_loop(n: f64, keep: f64) -> Vec<Instruction> {
    vec![
        I::NewArray,
        I::StoreLocal { local: 0 },
        c_num(0.0),
        I::StoreLocal { local: 1 },
        c_num(0.0),
        I::StoreLocal { local: 2 },
        // 6: while i < n
        I::LoadLocal { local: 1 },
        c_num(n),
        I::Lt,
        I::JumpIfFalse { target: 31 },
        I::NewObject,
        I::StoreLocal { local: 3 },
        I::LoadLocal { local: 2 },
        c_num(0.0),
        I::StrictEq,
        I::JumpIfFalse { target: 22 },
        I::LoadLocal { local: 0 },
        I::LoadLocal { local: 3 },
        I::ArrayPush,
        I::Pop,
        c_num(keep),
        I::StoreLocal { local: 2 },
        // 22: countdown -= 1; i += 1
        I::LoadLocal { local: 2 },
        c_num(-1.0),
        I::Add,
        I::StoreLocal { local: 2 },
        I::LoadLocal { local: 1 },
        c_num(1.0),
        I::Add,
        I::StoreLocal { local: 1 },
        I::Jump { target: 6 },
        // 31
        I::LoadLocal { local: 0 },
        I::Return,
    ]
}

fn live_cells(e: &Execution) -> usize {
    e.state()
        .heap
        .cells()
        .iter()
        .filter(|c| !matches!(c, Cell::Hole))
        .count()
}

#[test]
fn garbage_is_freed_before_the_checkpoint_and_ids_stay_those_of_allocation_order() {
    let (n, keep) = (100_000usize, 1000usize);
    let p = ts(garbage_loop(n as f64, keep as f64), 4);
    let mut e = Execution::start(p, "sweeps", &[], Limits::default()).unwrap();
    let mut most_cells = 0;
    let mut longest_heap = 0;
    loop {
        match e.run_until_host(5_000).unwrap() {
            Outcome::BudgetExhausted => {
                most_cells = most_cells.max(live_cells(&e));
                longest_heap = longest_heap.max(e.state().heap.cells().len());
            }
            Outcome::Host(HostRequest::PersistCheckpoint { revision, .. }) => {
                e.respond(HostResponse::PersistConfirmed { revision })
                    .unwrap();
            }
            Outcome::Completed(_) => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    // Every object got its own id (no id was reused within the step)…
    assert!(longest_heap > n / 2, "{longest_heap}");
    // …but the dropped ones did not stay: a sweep comes every 8192
    // allocations or so, where 100 001 cells were held before.
    assert!(most_cells < 20_000, "{most_cells} cells held at once");
    // The checkpoint's heap: the array (id 0), the kept objects at the ids
    // allocation order gave them, holes between them, trailing ones trimmed.
    let heap = &e.state().heap;
    let kept: Vec<u32> = (0..n).step_by(keep).map(|i| 1 + i as u32).collect();
    match &heap.cells()[0] {
        Cell::Array(items) => {
            let refs: Vec<u32> = items
                .iter()
                .map(|v| match v {
                    Value::Ref(id) => *id,
                    other => panic!("{other:?}"),
                })
                .collect();
            assert_eq!(refs, kept);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(heap.cells().len(), *kept.last().unwrap() as usize + 1);
    for (id, cell) in heap.cells().iter().enumerate().skip(1) {
        let is_kept = kept.binary_search(&(id as u32)).is_ok();
        assert_eq!(matches!(cell, Cell::Object(_)), is_kept, "id {id}");
        assert_eq!(matches!(cell, Cell::Hole), !is_kept, "id {id}");
    }
}

/// A collection forced by the heap-cell limit inside an allocation keeps
/// the cells the new cell refers to: `NewCell` pops its value before
/// allocating, and before the fix the object it referred to was collected
/// and its id given to the new cell (a cell referring to itself).
#[test]
fn a_collection_at_the_cell_limit_keeps_what_the_new_cell_refers_to() {
    let limits = Limits {
        max_heap_cells: 4,
        ..Limits::default()
    };
    let p = ts(
        vec![
            I::NewObject,
            I::NewObject,
            I::Pop,
            I::NewObject,
            I::Pop,
            I::NewObject,
            I::Pop,
            I::NewCell,
            I::Return,
        ],
        0,
    );
    let mut e = Execution::start(p, "limit", &[], limits).unwrap();
    assert_eq!(e.run_until_host(8).unwrap(), Outcome::BudgetExhausted);
    let state = e.state();
    let Some(Value::Ref(var)) = state.stack.last() else {
        panic!("{:?}", state.stack);
    };
    let Cell::Var(Value::Ref(object)) = &state.heap.cells()[*var as usize] else {
        panic!("{:?}", state.heap.cells());
    };
    assert_ne!(var, object);
    assert!(matches!(
        state.heap.cells()[*object as usize],
        Cell::Object(_)
    ));
}
