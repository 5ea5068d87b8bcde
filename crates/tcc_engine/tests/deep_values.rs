//! Run-time values nested or shared far beyond any stack: every function
//! that walks a value (Python equality, export and inlining, absorbing an
//! inlined value, continuation writing and reading, canonical JSON) either
//! answers or fails the execution with an engine error, never overflows the
//! thread's stack (issue 42, F1). The walks run on threads with a small
//! stack, so a walk that recursed once per level would abort the test.
mod common;
use common::*;
use proptest::prelude::*;
use tcc_engine::ObjectMap;
use tcc_engine::absorb_text::absorb_value_text;
use tcc_engine::json::{
    MAX_EXPORT_NODES, ValueContext, absorb, export, export_text, parse_strict, to_canonical,
};
use tcc_engine::lang::{EvalError, Language, strict_eq};
use tcc_engine::{
    Cell, Continuation, Heap, Limits, Value, apply_delta, apply_delta_text, compute_delta,
    compute_delta_text, decode_delta,
};

/// Runs `f` on a thread with a 1 MiB stack (a recursion of some ten
/// thousand frames overflows it) and returns its result.
fn small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the walk finished without a panic")
}

/// `x = []; y = []; for i in range(n): x = [x]; y = [y]; return x == y`,
/// in Python semantics (the program of issue 42, F1).
fn nested_equal_program(n: f64) -> std::sync::Arc<tcc_engine::Program> {
    let code = vec![
        I::NewArray,
        I::StoreLocal { local: 0 },
        I::NewArray,
        I::StoreLocal { local: 1 },
        c_num(0.0),
        I::StoreLocal { local: 2 },
        // 6: loop head
        I::LoadLocal { local: 2 },
        c_num(n),
        I::Lt,
        I::JumpIfFalse { target: 25 },
        I::NewArray,
        I::LoadLocal { local: 0 },
        I::ArrayPush,
        I::StoreLocal { local: 0 },
        I::NewArray,
        I::LoadLocal { local: 1 },
        I::ArrayPush,
        I::StoreLocal { local: 1 },
        I::LoadLocal { local: 2 },
        c_num(1.0),
        I::Add,
        I::StoreLocal { local: 2 },
        I::Jump { target: 6 },
        I::Nop,
        I::Nop,
        // 25
        I::LoadLocal { local: 0 },
        I::LoadLocal { local: 1 },
        I::StrictEq,
        I::Return,
    ];
    program("py.subset.v1", vec![func(0, 0, 3, code)])
}

#[test]
fn python_equality_of_lists_nested_100000_deep_answers_without_recursing() {
    let out = small_stack(|| run_host(nested_equal_program(100_000.0), &host()));
    assert_eq!(out["type"], "completed", "{out}");
    assert_eq!(out["result"], serde_json::json!({"t": "bool", "v": true}));
}

/// One level of a generated value: a container holding `width` scalars and
/// (except at the bottom) the next level, at `at`, once or twice.
#[derive(Debug, Clone)]
struct Level {
    object: bool,
    width: usize,
    at: usize,
    shared: bool,
}

fn level() -> impl Strategy<Value = Level> {
    (
        any::<bool>(),
        0usize..4,
        0usize..4,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(object, width, at, shared)| Level {
            object,
            width,
            at,
            shared,
        })
}

/// Builds the value described by `levels` (deepest last) in `heap`; `leaf`
/// is the bottom scalar and `cycle` makes the bottom refer back to the top.
fn build(heap: &mut Heap, levels: &[Level], leaf: f64, cycle: bool) -> Value {
    let top = heap.cells().len() as u32;
    let mut below = Value::Number(leaf);
    // Ids are assigned top first so that `cycle` can name the top.
    let base = heap.cells().len();
    let mut cells = heap.cells().to_vec();
    cells.extend(std::iter::repeat_n(Cell::Hole, levels.len().max(1)));
    if levels.is_empty() {
        cells[base] = Cell::Array(vec![below]);
        *heap = Heap::from_cells(cells);
        return Value::Ref(top);
    }
    for (i, l) in levels.iter().enumerate().rev() {
        let id = (base + i) as u32;
        let mut items: Vec<Value> = (0..l.width).map(|k| Value::Number(k as f64)).collect();
        let child = if i + 1 == levels.len() && cycle {
            Value::Ref(top)
        } else {
            below.clone()
        };
        let at = l.at.min(items.len());
        items.insert(at, child.clone());
        if l.shared {
            items.push(child);
        }
        cells[base + i] = if l.object {
            Cell::Object(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(k, v)| (format!("k{k}"), v))
                    .collect::<ObjectMap<_>>(),
            )
        } else {
            Cell::Array(items)
        };
        below = Value::Ref(id);
    }
    *heap = Heap::from_cells(cells);
    below
}

/// A completed continuation whose result is `result` over `heap`.
fn continuation_with(heap: Heap, result: Value) -> Continuation {
    let mut e = start(ts(vec![c_num(1.0), I::Return], 0));
    let _ = next(&mut e);
    let mut c = e.state().clone();
    c.heap = heap;
    c.result = Some(result);
    c
}

/// The size of the value `levels` builds, expanded into a tree (a shared
/// level holds the level below twice): `(containers, nodes)`, saturating.
/// Equality visits container pairs and export counts nodes, each against
/// its cap, so a value under half the cap must be answered.
fn expanded_size(levels: &[Level]) -> (u64, u64) {
    let (mut containers, mut nodes) = (0u64, 1u64); // the leaf scalar
    for l in levels.iter().rev() {
        let copies = if l.shared { 2 } else { 1 };
        containers = containers.saturating_mul(copies).saturating_add(1);
        nodes = nodes
            .saturating_mul(copies)
            .saturating_add(1 + l.width as u64);
    }
    (containers.max(1), nodes)
}

/// Every walk over one generated value; returns what each answered.
fn walk_everything(levels: Vec<Level>, cycle: bool, differ: bool) -> Result<(), TestCaseError> {
    let mut heap = Heap::default();
    let a = build(&mut heap, &levels, 1.0, cycle);
    let b = build(&mut heap, &levels, if differ { 2.0 } else { 1.0 }, cycle);
    let (containers, nodes) = expanded_size(&levels);
    // Equality: a cycle met is fatal, else structural.
    match strict_eq(Language::Py, &heap, &a, &b) {
        Ok(eq) => {
            prop_assert!(!cycle, "a cycle compared without error");
            prop_assert_eq!(eq, !differ);
        }
        Err(EvalError::Fatal(e)) => {
            // Only a cycle, or more container pairs than the visit cap.
            prop_assert!(cycle || containers > (1 << 21), "{e}");
        }
        Err(EvalError::Throw(_)) => prop_assert!(false, "equality threw"),
    }
    prop_assert!(strict_eq(Language::Py, &heap, &a, &a).unwrap_or(false));
    // Export: deep, cyclic or too large values are a fatal not_exportable.
    // Its text, written without a tree, is the tree's canonical text, or
    // the same error (issue 42, F3).
    match (export(&heap, &a), export_text(&heap, &a)) {
        (Ok(j), Ok(text)) => prop_assert_eq!(to_canonical(&j), text),
        (Err(e), Err(f)) => prop_assert_eq!(e.to_string(), f.to_string()),
        (j, t) => prop_assert!(false, "tree {:?}, text {:?}", j.is_ok(), t.is_ok()),
    }
    match export(&heap, &a) {
        Ok(j) => {
            prop_assert!(!cycle && levels.len() <= 100);
            // Absorbing the inlined value again, and its canonical text.
            let mut h2 = Heap::default();
            let v = absorb(ValueContext::Message, &j, "$", &mut h2, &Limits::default())
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let again = export(&h2, &v).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(to_canonical(&again), to_canonical(&j));
            // Absorbed from its text without a tree: the same cells.
            let mut h3 = Heap::default();
            let w = absorb_value_text(&to_canonical(&j), "$", &mut h3, &Limits::default())
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(h3.cells().len(), h2.cells().len());
            for (x, y) in h3.cells().iter().zip(h2.cells()) {
                prop_assert!(x.same_encoding(y));
            }
            prop_assert!(w.same_encoding(&v));
        }
        Err(e) => {
            prop_assert!(
                cycle || levels.len() > 100 || nodes > MAX_EXPORT_NODES as u64 / 2,
                "{e}"
            );
            prop_assert!(e.to_string().contains("not_exportable"), "{e}");
        }
    }
    // Continuation writing and reading: the heap is flat, any depth goes.
    let c = continuation_with(heap, a);
    let text = c.encode();
    prop_assert_eq!(c.encoded_len(), text.len());
    let sized = c.encode_sized(text.len());
    prop_assert_eq!(&sized, &text);
    prop_assert_eq!(sized.capacity(), text.len());
    let back = Continuation::decode(text.as_bytes(), &Limits::default())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&back.encode(), &text);
    // The heap read from the text (decode) and from a tree agree.
    let tree = parse_strict(text.as_bytes()).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let from_tree = Continuation::from_json(&tree, &Limits::default())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&from_tree.encode(), &text);
    // A delta from an empty heap to this one: its text is the tree's, and
    // applied from its text it gives this continuation.
    let mut base = c.clone();
    base.heap = Heap::default();
    base.result = None;
    let delta = compute_delta(&base, &c).expect("same frames");
    let delta_text = compute_delta_text(&base, &c).expect("same frames");
    // Measured before written: the plan's length is the text's, and it
    // writes the same text into a buffer of exactly that length.
    let plan = tcc_engine::continuation::plan_delta(&base, &c).expect("same frames");
    let planned = plan.len(|| c.heap_text_len());
    prop_assert_eq!(planned, delta_text.len());
    let written = plan.write(&c, planned);
    prop_assert_eq!(&written, &delta_text);
    // A base kept without its heap's cells (the engine's) makes the same
    // deltas: to this continuation, and to itself (no heap).
    let digest = base.heap.digest();
    let kept = tcc_engine::continuation::DeltaBase::of(&mut base.clone(), digest);
    prop_assert_eq!(kept.delta(&c, c.heap.digest()), Some(delta.clone()));
    let plan = kept.plan(&c, c.heap.digest()).expect("same frames");
    prop_assert_eq!(plan.write(&c, planned), delta_text.clone());
    let digest = c.heap.digest();
    let itself = tcc_engine::continuation::DeltaBase::of(&mut c.clone(), digest);
    prop_assert_eq!(itself.delta(&c, c.heap.digest()), compute_delta(&c, &c));
    prop_assert!(
        itself
            .delta(&c, c.heap.digest())
            .is_some_and(|d| d.get("heap").is_none())
    );
    prop_assert_eq!(&to_canonical(&delta), &delta_text);
    let limits = Limits::default();
    let via_text = apply_delta_text(&base, delta_text.as_bytes(), &limits)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let via_tree = apply_delta(
        &base,
        &decode_delta(delta_text.as_bytes(), &limits).unwrap(),
        &limits,
    )
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(&via_text.encode(), &text);
    prop_assert_eq!(via_tree.encode(), text);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn deep_and_wide_values_never_overflow_a_walk(
        levels in prop::collection::vec(level(), 0..60),
        repeat in 1usize..120,
        cycle in prop::bool::weighted(0.2),
        differ in any::<bool>(),
    ) {
        // Repeating the generated levels gives depths up to ~7 000.
        let levels: Vec<Level> = levels.iter().cycle().take(levels.len() * repeat).cloned().collect();
        let cycle = cycle && !levels.is_empty();
        small_stack(move || walk_everything(levels, cycle, differ))?;
    }
}

#[test]
fn inlining_a_shared_value_is_capped_not_exponential() {
    // 40 levels, each holding the level below twice: 2^40 nodes inlined.
    let levels = vec![
        Level {
            object: false,
            width: 0,
            at: 0,
            shared: true
        };
        40
    ];
    let mut heap = Heap::default();
    let v = build(&mut heap, &levels, 0.0, false);
    let e = export(&heap, &v).expect_err("capped");
    assert!(e.to_string().contains(&MAX_EXPORT_NODES.to_string()), "{e}");
}

#[test]
fn absorbing_an_inlined_value_deeper_than_the_cap_is_an_error() {
    let mut j = serde_json::json!({"t": "null"});
    for _ in 0..200 {
        j = serde_json::json!({"t": "array", "v": [j]});
    }
    let mut heap = Heap::default();
    let e = small_stack(move || {
        absorb(
            ValueContext::Message,
            &j,
            "$",
            &mut heap,
            &Limits::default(),
        )
        .map(|_| ())
        .map_err(|e| e.to_string())
    })
    .expect_err("too deep");
    assert!(e.contains("nested deeper"), "{e}");
}
