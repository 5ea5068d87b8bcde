//! The interpreter's fused loops against its other tiers (general path,
//! one-operation fast forms, fused runs): for every step limit through
//! several loops, every tier gives the same result, step count, drop log
//! and fault (kind, function, block, operation), including overflow faults
//! inside a fused loop and step-limit faults at every operation of it.

use proptest::prelude::*;
use zlm::interp::{FaultKind, Interp, Limits, RunError, Tier, Value, canon};
use zlm::model::{ReceiverKind, Type};

const TIERS: [Tier; 4] = [Tier::General, Tier::Ops, Tier::Runs, Tier::Loops];

fn loop_src() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/zlm/run/loop.zlt"
    ))
    .unwrap()
}

/// A one-block loop (JUMP_IF_FALSE back to its own block, leaving when the
/// test is true): `i = 0; acc = 0; do { acc += i; i += 1 } while !(i >= n)`.
const DO_WHILE: &str = include_str!("loops/do_while.zlt");

/// A three-block loop on a Bool local (a branch on a loaded value, a
/// comparison stored to a local, a value read after its place was stored
/// again in the same block, a value read in another block):
/// `i = 0; acc = 0; go = n > 0; while go { i += 1; acc += old i; go = i < n }`.
const FLAG: &str = include_str!("loops/flag.zlt");

/// Nested loops: `acc = sum of j for j < i for i < n`.
const NESTED: &str = include_str!("loops/nested.zlt");

/// A loop on the micro-operation forms of constants and fused stores:
/// comparisons against a constant on either side, arithmetic with a
/// constant first or second operand (commuting or not), a result read
/// after its STORE_LOCAL (from the place register) and after its place was
/// stored again (from its own register), a stored result and a comparison
/// also read in another block. `m = min(max(n, 0), 1000)`;
/// `acc = 1005 m + m (m - 1)`, returned plus `2 m`.
const FORMS: &str = include_str!("loops/forms.zlt");

/// A one-block loop whose counter RETURN reads (a mirrored result stored
/// to two places) and whose exit tests a Bool local stored and loaded in
/// the same block (leaving when it is true); returns `max(n, 1)`.
const MIRRORED: &str = include_str!("loops/mirrored.zlt");

fn checked(src: &str) -> zlm::decode::Checked {
    let m = zlm::text::parse(src).unwrap_or_else(|e| panic!("{e}"));
    zlm::decode::from_model(&m, &[]).unwrap_or_else(|e| panic!("{e}"))
}

/// The increment `1` replaced by 2^62, so the counter overflows Int64.
fn big_step(src: &str) -> String {
    src.replace("c:Int64:1 |", "c:Int64:4611686018427387904 |")
}

/// The program over UInt64 instead of Int64 (unsigned comparisons and
/// overflow checks).
fn unsigned(src: &str) -> String {
    src.replace("Int64", "UInt64")
}

/// The loop with 70 unread constants in its first block, so its function
/// has more registers than the fixed register file holds.
fn wide(src: &str) -> String {
    let pad: String = (0..70)
        .map(|k| format!("      const Int64 c:Int64:{} | - -\n", 1000 + k))
        .collect();
    let at = "      jump - ^1 | block:1 -\n";
    assert!(src.contains(at));
    src.replacen(at, &format!("{pad}{at}"), 1)
}

/// The programs of the differential tests.
fn programs() -> Vec<(&'static str, String)> {
    let with_mirror = FLAG.replace(
        "      load_local Int64 $l1 | path:l1 -\n      return - %4.0 | - -\n",
        "      return - %1.1 | - -\n",
    );
    vec![
        ("loop", loop_src()),
        ("loop overflow", big_step(&loop_src())),
        ("loop, wide register file", wide(&loop_src())),
        (
            "loop overflow, wide register file",
            wide(&big_step(&loop_src())),
        ),
        (
            "loop modular",
            big_step(&loop_src()).replace("profile exact", "profile modular"),
        ),
        ("do-while", DO_WHILE.to_string()),
        ("do-while overflow", big_step(DO_WHILE)),
        ("flag", FLAG.to_string()),
        ("flag overflow", big_step(FLAG)),
        ("flag mirrored", with_mirror),
        ("nested", NESTED.to_string()),
        ("nested overflow", big_step(NESTED)),
        ("forms", FORMS.to_string()),
        ("forms overflow", big_step(FORMS)),
        ("forms unsigned", unsigned(FORMS)),
        ("forms unsigned overflow", unsigned(&big_step(FORMS))),
        (
            "forms modular",
            big_step(FORMS).replace("profile exact", "profile modular"),
        ),
        ("mirrored", MIRRORED.to_string()),
        ("mirrored overflow", big_step(MIRRORED)),
    ]
}

/// Everything observable of a run.
fn observe(it: &Interp<'_>, arg: i64) -> String {
    observe_entry(it, "Main.sum", &[Value::Scalar(arg as u64)])
}

/// Everything observable of a run of `entry`.
fn observe_entry(it: &Interp<'_>, entry: &str, args: &[Value]) -> String {
    match it.run(entry, args) {
        Ok(out) => format!(
            "ok {:?} steps {} drops {:?}",
            out.value, out.steps, out.drops
        ),
        Err(RunError::Fault { fault, drops }) => format!("fault {fault:?} drops {drops:?}"),
        Err(e) => format!("error {e}"),
    }
}

fn tiered(c: &zlm::decode::Checked, tier: Tier, steps: u64) -> Interp<'_> {
    Interp::new(c).unwrap().with_tier(tier).with_limits(Limits {
        steps,
        ..Limits::default()
    })
}

/// Every tier agrees with the general path at every step limit from zero
/// to one past the whole run.
fn agree_at_every_limit(name: &str, c: &zlm::decode::Checked, arg: i64) {
    let full = Interp::new(c)
        .unwrap()
        .with_tier(Tier::General)
        .with_limits(Limits {
            steps: 5_000,
            ..Limits::default()
        })
        .run("Main.sum", &[Value::Scalar(arg as u64)]);
    let total = match &full {
        Ok(out) => out.steps,
        // A faulting run: its steps are at most the limit.
        Err(_) => 5_000,
    };
    for limit in 0..=total.min(400) + 1 {
        let want = observe(&tiered(c, Tier::General, limit), arg);
        for tier in &TIERS[1..] {
            let got = observe(&tiered(c, *tier, limit), arg);
            assert_eq!(got, want, "{name}({arg}), limit {limit}, {tier:?}");
        }
    }
}

#[test]
fn every_tier_agrees_at_every_step_limit() {
    for (name, src) in programs() {
        let c = checked(&src);
        for arg in [0, 1, 2, 5, i64::MAX] {
            agree_at_every_limit(name, &c, arg);
        }
    }
}

/// The sum a program computes for its argument.
type Sum = fn(i64) -> i64;

#[test]
fn fused_loops_compute_the_sums() {
    let forms: Sum = |n| {
        let m = n.clamp(0, 1000);
        1005 * m + m * (m - 1) + 2 * m
    };
    // (program, its sum, whether it is also run past its bound of 1000).
    let cases: [(String, Sum, bool); 7] = [
        (DO_WHILE.into(), |n| n.max(1) * (n.max(1) - 1) / 2, false),
        (FLAG.into(), |n| n.max(0) * (n.max(0) - 1) / 2, false),
        (
            NESTED.into(),
            |n| n.max(0) * (n.max(0) - 1) * (n.max(0) - 2) / 6,
            false,
        ),
        (loop_src(), |n| n * (n - 1) / 2, false),
        (FORMS.into(), forms, true),
        (unsigned(FORMS), forms, true),
        (MIRRORED.into(), |n| n.max(1), false),
    ];
    for (src, sum, bounded) in cases {
        let c = checked(&src);
        let long: &[i64] = if bounded {
            &[999, 1000, 1001, 1500]
        } else {
            &[]
        };
        for &n in [0i64, 1, 2, 3, 10, 57].iter().chain(long) {
            let want = Interp::new(&c)
                .unwrap()
                .with_tier(Tier::General)
                .run("Main.sum", &[Value::Scalar(n as u64)])
                .unwrap();
            let got = Interp::new(&c)
                .unwrap()
                .run("Main.sum", &[Value::Scalar(n as u64)])
                .unwrap();
            assert_eq!(got.value, Value::Scalar(sum(n) as u64), "n {n}");
            assert_eq!((got.value, got.steps), (want.value, want.steps), "n {n}");
        }
    }
}

#[test]
fn overflow_inside_a_fused_loop_names_its_operation() {
    // (program, the faulting block and operation): the counter increment.
    let cases = [
        (big_step(&loop_src()), 2, 5),
        (big_step(DO_WHILE), 1, 5),
        (big_step(FLAG), 2, 2),
        (big_step(NESTED), 5, 2),
        // Twice the counter, an immediate form.
        (big_step(FORMS), 1, 2),
        (big_step(MIRRORED), 1, 2),
    ];
    for (src, block, op) in cases {
        let c = checked(&src);
        let fault_of = |tier| {
            let Err(RunError::Fault { fault, drops }) = Interp::new(&c)
                .unwrap()
                .with_tier(tier)
                .run("Main.sum", &[Value::Scalar(i64::MAX as u64)])
            else {
                panic!("the run must fault");
            };
            assert!(drops.is_empty());
            assert_eq!(
                (fault.kind.clone(), fault.block, fault.op),
                (FaultKind::Overflow, Some(block), Some(op))
            );
            fault
        };
        assert_eq!(fault_of(Tier::Loops), fault_of(Tier::General));
    }
}

#[test]
fn a_long_loop_agrees_across_tiers() {
    // Many iterations through the fused loop, then the exit, against the
    // general path; and a limit in the middle of the loop.
    for (name, src) in programs() {
        let c = checked(&src);
        for limit in [100_000, 54_321] {
            let want = observe(&tiered(&c, Tier::General, limit), 3_000);
            let got = observe(&tiered(&c, Tier::Loops, limit), 3_000);
            assert_eq!(got, want, "{name}, limit {limit}");
        }
    }
}

/// The generated modules of the engine oracles (loops, diamonds, calls,
/// contracts, owned values, byte arrays) agree on every tier, under the
/// default limit and step limits through their bodies.
#[test]
fn generated_modules_agree_on_every_tier() {
    const WORDS: [u64; 6] = [0, 1, 2, 5, u64::MAX, i64::MAX as u64];
    for seed in 0..32u64 {
        let text = zlm::testgen::module_text(seed);
        let c = checked(&text);
        let mut entries = Vec::new();
        for d in &c.module().declarations {
            for f in &d.functions {
                if matches!(f.receiver, ReceiverKind::Type | ReceiverKind::None) {
                    entries.push(format!("{}.{}", d.name, f.name));
                }
            }
        }
        let limits = (0..60).step_by(3).chain([20_000]);
        for limit in limits {
            let its = TIERS.map(|tier| tiered(&c, tier, limit));
            for entry in &entries {
                let at = its[0].find(entry).unwrap();
                let tys = its[0].params(at);
                for i in 0..4 {
                    let args: Vec<Value> = tys
                        .iter()
                        .enumerate()
                        .map(|(j, t)| match t {
                            Type::Scalar(k) => Value::Scalar(canon(*k, WORDS[(i * 5 + j * 3) % 6])),
                            _ => Value::Unit,
                        })
                        .collect();
                    let want = observe_entry(&its[0], entry, &args);
                    for (tier, it) in TIERS.iter().zip(&its).skip(1) {
                        assert_eq!(
                            observe_entry(it, entry, &args),
                            want,
                            "seed {seed} {entry} {args:?} limit {limit} {tier:?}\n{text}"
                        );
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random arguments and step limits: the fused loops agree with the
    /// fused runs and the general path.
    #[test]
    fn random_arguments_and_limits_agree(which in 0usize..19, arg in -3i64..80, limit in 0u64..3_000) {
        let (name, src) = &programs()[which];
        let c = checked(src);
        let want = observe(&tiered(&c, Tier::General, limit), arg);
        for tier in [Tier::Runs, Tier::Loops] {
            prop_assert_eq!(observe(&tiered(&c, tier, limit), arg), want.clone(), "{} {:?}", name, tier);
        }
    }
}
