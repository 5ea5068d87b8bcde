//! Property test of the fast path: random loops of number (and not quite
//! number) arithmetic, compares, stores and branches give the same outcome,
//! or the same error, whether they run in fused forms (large budget), one
//! instruction per call (fast path never fuses) or with small budgets that
//! stop in the middle of fused runs.
mod common;
use common::*;
use proptest::prelude::*;
use serde_json::Value as J;
use tcc_engine::local_host::LocalHost;

/// An expression over locals 0..4 and constants.
#[derive(Debug, Clone)]
enum Expr {
    Local(u32),
    Num(f64),
    Bin(Box<Expr>, usize, Box<Expr>),
}

const OPS: [I; 8] = [I::Add, I::Sub, I::Mul, I::Rem, I::Lt, I::Le, I::Gt, I::Ge];

fn operand() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (0u32..4).prop_map(Expr::Local),
        prop_oneof![
            (-9i32..10).prop_map(f64::from),
            Just(0.5),
            Just(-0.0),
            Just(1e300),
            Just(f64::NAN),
            Just(7.0),
        ]
        .prop_map(Expr::Num),
    ]
}

fn bin(a: Expr, op: usize, b: Expr) -> Expr {
    Expr::Bin(Box::new(a), op, Box::new(b))
}

/// Arithmetic expressions (compares only at the top, see [`stmt`], so most
/// programs stay well-typed and run their loops).
fn expr() -> impl Strategy<Value = Expr> {
    operand().prop_recursive(3, 12, 2, |inner| {
        (inner.clone(), 0..4usize, inner).prop_map(|(a, op, b)| bin(a, op, b))
    })
}

/// The accumulate shape `a op3 ((x op1 y) op2 z)`, and sometimes the
/// chain `(x op1 y) op2 z` alone.
fn accumulate() -> impl Strategy<Value = Expr> {
    (
        (0u32..4).prop_map(Expr::Local),
        operand(),
        operand(),
        operand(),
        (0..4usize, 0..4usize, 0..OPS.len()),
        any::<bool>(),
    )
        .prop_map(|(a, x, y, z, (op1, op2, op3), whole)| {
            let chain = bin(bin(x, op1, y), op2, z);
            if whole { bin(a, op3, chain) } else { chain }
        })
}

/// A statement of the loop body.
#[derive(Debug, Clone)]
enum Stmt {
    Store(Expr, u32),
    Push(Expr),
    /// `if (expr) skip the next statement` (JumpIfTrue when the bool is true).
    Skip(Expr, bool),
}

fn stmt() -> impl Strategy<Value = Stmt> {
    // Compares of small values and the loop counter meet equal operands
    // often, where `<` and `<=` differ.
    let small = || {
        prop_oneof![
            (0u32..5).prop_map(Expr::Local),
            (-1i32..3).prop_map(|n| Expr::Num(f64::from(n))),
        ]
    };
    let compare = move || {
        prop_oneof![
            (expr(), 4..OPS.len(), expr()).prop_map(|(a, op, b)| bin(a, op, b)),
            (small(), 4..OPS.len(), small()).prop_map(|(a, op, b)| bin(a, op, b)),
            (small(), 4..OPS.len()).prop_map(|(a, op)| bin(a.clone(), op, a)),
        ]
    };
    prop_oneof![
        3 => (expr(), 0u32..4).prop_map(|(e, l)| Stmt::Store(e, l)),
        3 => (accumulate(), 0u32..4).prop_map(|(e, l)| Stmt::Store(e, l)),
        1 => prop_oneof![expr(), accumulate()].prop_map(Stmt::Push),
        1 => (compare(), 0u32..4).prop_map(|(e, l)| Stmt::Store(e, l)),
        3 => (prop_oneof![compare(), expr()], any::<bool>()).prop_map(|(e, w)| Stmt::Skip(e, w)),
    ]
}

/// Initial values: mostly numbers, sometimes a bool, string or null (the
/// fast path must fall back to the stepper's rules and errors for those).
fn init() -> impl Strategy<Value = I> {
    prop_oneof![
        12 => (-20i32..20).prop_map(|n| c_num(f64::from(n))),
        1 => Just(c_num(2.5)),
        1 => any::<bool>().prop_map(c_bool),
        1 => Just(c_str("s")),
        1 => Just(I::LoadConst { value: tcc_ir::Constant::Null }),
    ]
}

fn lower_expr(e: &Expr, out: &mut Vec<I>) {
    match e {
        Expr::Local(l) => out.push(I::LoadLocal { local: *l }),
        Expr::Num(n) => out.push(c_num(*n)),
        Expr::Bin(a, op, b) => {
            lower_expr(a, out);
            lower_expr(b, out);
            out.push(OPS[*op].clone());
        }
    }
}

/// `locals 0..4 = init; for (l4 = 0; l4 < n; l4 = l4 + 1) { body }; return [l0..l3]`,
/// with pushed values left on the shared stack (returned by `Return` too).
fn lower(inits: &[I], body: &[Stmt], n: f64) -> Vec<I> {
    let mut c = Vec::new();
    for (l, v) in inits.iter().enumerate() {
        c.extend([v.clone(), I::StoreLocal { local: l as u32 }]);
    }
    c.extend([c_num(0.0), I::StoreLocal { local: 4 }]);
    let header = c.len() as u32;
    c.extend([I::LoadLocal { local: 4 }, c_num(n), I::Lt]);
    let exit_jump = c.len();
    c.push(I::JumpIfFalse { target: 0 });
    let mut skips = Vec::new();
    for s in body {
        // A pending skip jumps to the start of this statement's successor.
        let start = c.len();
        match s {
            Stmt::Store(e, l) => {
                lower_expr(e, &mut c);
                c.push(I::StoreLocal { local: *l });
            }
            Stmt::Push(e) => lower_expr(e, &mut c),
            Stmt::Skip(e, when) => {
                lower_expr(e, &mut c);
                skips.push(c.len());
                c.push(if *when {
                    I::JumpIfTrue { target: 0 }
                } else {
                    I::JumpIfFalse { target: 0 }
                });
            }
        }
        // A Skip before this statement jumps past it.
        if let Some(at) = skips.first().copied()
            && at < start
        {
            let target = c.len() as u32;
            match &mut c[at] {
                I::JumpIfTrue { target: t } | I::JumpIfFalse { target: t } => *t = target,
                _ => unreachable!(),
            }
            skips.remove(0);
        }
    }
    c.extend([
        I::LoadLocal { local: 4 },
        c_num(1.0),
        I::Add,
        I::StoreLocal { local: 4 },
        I::Jump { target: header },
    ]);
    let end = c.len() as u32;
    for at in skips.into_iter().chain([exit_jump]) {
        match &mut c[at] {
            I::JumpIfTrue { target: t } | I::JumpIfFalse { target: t } => *t = end,
            _ => unreachable!(),
        }
    }
    c.push(I::NewArray);
    for l in 0..4 {
        c.extend([I::LoadLocal { local: l }, I::ArrayPush]);
    }
    c.push(I::Return);
    c
}

fn run(h: &LocalHost, p: std::sync::Arc<tcc_engine::Program>) -> Result<J, String> {
    h.run(p, "fast", &[])
        .map(|r| r.outcome)
        .map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn fused_runs_match_the_plain_stepper(
        inits in prop::collection::vec(init(), 4),
        body in prop::collection::vec(stmt(), 1..6),
        n in 0u8..4,
        lang in prop_oneof![Just("ts.subset.v1"), Just("py.subset.v1"), Just("rust.subset.v1")],
        small in 2u64..9,
        max_stack in prop_oneof![Just(None), (1usize..10).prop_map(Some)],
    ) {
        let p = program(lang, vec![func(0, 0, 5, lower(&inits, &body, f64::from(n)))]);
        let mut h = host();
        // A small operand-stack limit must be hit at the same instruction
        // whether or not the loads were fused.
        if let Some(max) = max_stack {
            h.limits.max_stack = max;
        }
        let fused = run(&h, p.clone());
        h.budget = 1;
        let single = run(&h, p.clone());
        h.budget = small;
        let split = run(&h, p);
        prop_assert_eq!(&fused, &single);
        prop_assert_eq!(&fused, &split);
    }
}

#[test]
fn fused_compares_on_equal_operands() {
    // For each compare: local1 = (2 op 2) ? 1 : 0 through a fused
    // compare-and-branch, with the plain stepper's answer beside it.
    for (op, expect) in [(I::Lt, 0.0), (I::Le, 1.0), (I::Gt, 0.0), (I::Ge, 1.0)] {
        let code = vec![
            c_num(2.0),
            I::StoreLocal { local: 0 },
            I::LoadLocal { local: 0 },
            c_num(2.0),
            op.clone(),
            I::JumpIfFalse { target: 8 },
            c_num(1.0),
            I::Return,
            c_num(0.0),
            I::Return,
        ];
        let p = ts(code, 1);
        let mut h = host();
        assert_eq!(run(&h, p.clone()).unwrap()["result"], num(expect), "{op:?}");
        h.budget = 1;
        assert_eq!(run(&h, p).unwrap()["result"], num(expect), "{op:?}");
    }
}

/// A loop value: numbers at the edges of the float rules and of the
/// integer remainder path (NaN, -0, 2^52 and 2^53 neighbours, 1e300,
/// infinity) and some values that are not numbers.
fn edge_value() -> impl Strategy<Value = I> {
    prop_oneof![
        6 => (-30i32..30).prop_map(|n| c_num(f64::from(n))),
        1 => Just(c_num(f64::NAN)),
        1 => Just(c_num(-0.0)),
        1 => Just(c_num(0.5)),
        1 => Just(c_num(4_503_599_627_370_495.0)),
        1 => Just(c_num(4_503_599_627_370_496.0)),
        1 => Just(c_num(-9_007_199_254_740_993.0)),
        1 => Just(c_num(1e300)),
        1 => Just(c_num(f64::INFINITY)),
        1 => any::<bool>().prop_map(c_bool),
        1 => Just(c_str("s")),
    ]
}

/// A loop whose back edge (`counter = counter + step; Jump header`) runs
/// the header's compare-and-branch without a dispatch of its own:
/// `locals 0..4 = inits; loop { if !(l0 cmp bound) break; l1 = l1 + (l2
/// op1 l3) op2 k; [push l1]; l0 = l0 + step }; return [l0..l3]`. The
/// bound is a local or a constant, the compare and the branch sense are
/// random, and the operands hit NaN, -0, huge values and non-numbers, so
/// the threaded compare meets every case that sends it back to the
/// stepper.
#[allow(clippy::too_many_arguments)]
fn threaded_loop(
    inits: &[I],
    bound: Option<f64>,
    cmp: usize,
    exit_when: bool,
    ops: (usize, usize),
    k: f64,
    push: bool,
    step: f64,
) -> Vec<I> {
    let mut c = Vec::new();
    for (l, v) in inits.iter().enumerate() {
        c.extend([v.clone(), I::StoreLocal { local: l as u32 }]);
    }
    let header = c.len() as u32;
    c.push(I::LoadLocal { local: 0 });
    c.push(match bound {
        Some(n) => c_num(n),
        None => I::LoadLocal { local: 4 },
    });
    c.push(OPS[cmp].clone());
    let exit_jump = c.len();
    c.push(I::JumpIfTrue { target: 0 });
    c.extend([
        I::LoadLocal { local: 1 },
        I::LoadLocal { local: 2 },
        I::LoadLocal { local: 3 },
        OPS[ops.0].clone(),
        c_num(k),
        OPS[ops.1].clone(),
        I::Add,
        I::StoreLocal { local: 1 },
    ]);
    if push {
        c.push(I::LoadLocal { local: 1 });
    }
    c.extend([
        I::LoadLocal { local: 0 },
        c_num(step),
        I::Add,
        I::StoreLocal { local: 0 },
        I::Jump { target: header },
    ]);
    let end = c.len() as u32;
    c[exit_jump] = if exit_when {
        I::JumpIfTrue { target: end }
    } else {
        I::JumpIfFalse { target: end }
    };
    c.push(I::NewArray);
    for l in 0..4 {
        c.extend([I::LoadLocal { local: l }, I::ArrayPush]);
    }
    c.push(I::Return);
    c
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn threaded_back_edges_match_the_plain_stepper(
        inits in prop::collection::vec(edge_value(), 5),
        bound in prop_oneof![Just(None), (-3i32..12).prop_map(|n| Some(f64::from(n)))],
        cmp in 4..OPS.len(),
        exit_when in any::<bool>(),
        ops in (0..4usize, 0..4usize),
        k in prop_oneof![Just(7.0), Just(-3.0), Just(0.0), Just(0.5), Just(f64::NAN)],
        push in any::<bool>(),
        step in prop_oneof![Just(1.0), Just(2.0), Just(-1.0), Just(0.25)],
        lang in prop_oneof![Just("ts.subset.v1"), Just("py.subset.v1"), Just("rust.subset.v1")],
        small in 2u64..14,
        max_stack in prop_oneof![Just(None), (1usize..8).prop_map(Some)],
    ) {
        let code = threaded_loop(&inits, bound, cmp, exit_when, ops, k, push, step);
        let p = program(lang, vec![func(0, 0, 5, code)]);
        let mut h = host();
        // Loops that never end are cut off the same way in every mode.
        h.max_total_steps = 3_000;
        if let Some(max) = max_stack {
            h.limits.max_stack = max;
        }
        let fused = run(&h, p.clone());
        h.budget = 1;
        let single = run(&h, p.clone());
        h.budget = small;
        let split = run(&h, p);
        prop_assert_eq!(&fused, &single);
        prop_assert_eq!(&fused, &split);
    }
}
