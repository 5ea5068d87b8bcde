//! The C engine against the reference interpreter on every run example
//! (every profile): every host-callable function, edge-value arguments and
//! tight step/depth limits; identical results, step counts, faults and drop
//! logs. Functions the materializer does not lower yet must be refused with
//! C0-EXEC-002 and are listed in `REFUSED` — the list is exact.

mod c_engine_common;

use c_engine_common::{Case, compare_entry, compare_with, entries, load};
use zlm::interp::Limits;
use zlm::materialize::c::{Scope, TargetConfig, emit};

const EXAMPLES: [&str; 9] = [
    "arms.zlt",
    "bytes.zlt",
    "control.zlt",
    "deep.zlt",
    "drops.zlt",
    "faults.zlt",
    "loop.zlt",
    "ops.zlt",
    "own.zlt",
];

/// `file:Decl.function` cases the C engine refuses today.
const REFUSED: &[&str] = &[];

#[test]
fn every_example_function_matches_the_interpreter_or_is_listed_refused() {
    let cc = c_engine_common::compiler("cc");
    let mut refused = Vec::new();
    let mut compared = 0;
    for file in EXAMPLES {
        for profile in ["exact", "modular", "approximate"] {
            let m = load(file, profile);
            let checked = zlm::decode::from_model(&m, &[]).unwrap();
            let mut lowered = Vec::new();
            for entry in entries(&checked) {
                match emit(
                    &checked,
                    &TargetConfig::default(),
                    &Scope::Entry(entry.clone()),
                ) {
                    Err(r) => {
                        assert_eq!(r.to_string().split(':').next(), Some("C0-EXEC-002"));
                        if profile == "exact" {
                            refused.push(format!("{file}:{entry}"));
                        }
                    }
                    Ok(_) => lowered.push(entry),
                }
            }
            if lowered.is_empty() {
                continue;
            }
            let unit = emit(
                &checked,
                &TargetConfig::default(),
                &Scope::Entries(lowered.clone()),
            )
            .unwrap();
            let program = c_engine_common::build(&unit, &cc);
            for entry in &lowered {
                compared += compare_entry(
                    &checked,
                    &program,
                    &Case {
                        label: &format!("{file}:{entry} ({profile})"),
                        entry,
                    },
                );
            }
        }
    }
    let mut want: Vec<String> = REFUSED.iter().map(|s| s.to_string()).collect();
    want.sort();
    refused.sort();
    assert_eq!(refused, want, "the refused list changed");
    assert!(compared > 80, "only {compared} runs compared");
}

#[test]
fn emitted_c_is_byte_identical_across_runs_and_decodes() {
    for file in EXAMPLES {
        let m = load(file, "exact");
        let bytes = zlm::write::write(&m).unwrap();
        let a = zlm::decode::decode(&bytes).unwrap();
        let b = zlm::decode::decode(&bytes).unwrap();
        let c = zlm::decode::from_model(&m, &[]).unwrap();
        for entry in entries(&a) {
            let scope = Scope::Entry(entry);
            let x = emit(&a, &TargetConfig::default(), &scope);
            assert_eq!(x, emit(&b, &TargetConfig::default(), &scope));
            assert_eq!(x, emit(&c, &TargetConfig::default(), &scope));
        }
    }
}

#[test]
fn the_target_configuration_is_explicit_and_checked() {
    let c =
        TargetConfig::parse("# host\nstandard = c17\nlong_bits = 64\nalloc = my_alloc\n").unwrap();
    assert_eq!(c.standard, "c17");
    assert_eq!(c.alloc, "my_alloc");
    for bad in [
        "standard = c89",
        "char_bits = 9",
        "long_long_bits = 32",
        "alloc = not an ident",
        "colour = blue",
        "int_bits = 32\nint_bits = 32",
        "int_bits",
    ] {
        let r = TargetConfig::parse(bad).and_then(|c| c.check().map(|_| c));
        let e = r.expect_err(bad);
        assert!(e.to_string().starts_with("C0-EXEC-002"), "{e}");
    }
    let m = load("loop.zlt", "exact");
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let t = TargetConfig {
        char_bits: 16,
        ..TargetConfig::default()
    };
    assert!(emit(&checked, &t, &Scope::Module).is_err());
}

#[test]
fn a_contract_calling_the_catalog_get_lowers_with_a_blockless_bounds_fault() {
    // A contract calling the catalog's `get` lowers (issue 36): past the
    // end it is a bounds fault at the contract operation, with no block
    // (docs/zlm/semantics.md); the body's `length` of the loaned array too.
    let text = "zlm 1.9 package demo module run.cpure profile exact mode checked

decl value Main public
  func message type len public -> UInt64 effects []
    param 0 bytes Ref<Array<Byte>>
    param 1 floor Byte
    requires
      cop pure_call Byte p0 c:UInt64:0 | 1 0 cfunc:2
      cop ge Bool v0 p1 | 0 0 -
    path p0 Array<Byte>
    path p1 Byte
    loan 0 shared p0 - Ref<Array<Byte>> - -
    block 0
      intrinsic_call UInt64 $p0 | cfunc:1 effects:[]
      return - %0.0 | - -
    edge 0 return 0 exit
";
    let m = zlm::text::parse(text).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let emitted = emit(&checked, &TargetConfig::default(), &Scope::Module).unwrap();
    let module = &emitted
        .files
        .iter()
        .find(|(name, _)| name == "module.c")
        .expect("module.c")
        .1;
    assert!(
        module
            .contains("return zlm_raise(ZK_BOUNDS, zn_zf_Main_len_3edb446cd6c2b22b, -1L, 0L, 0);"),
        "{module}"
    );
    assert!(module.contains("\"requires 0\""), "{module}");
}

/// Every lowered example entry (exact profile) as one unit per file.
fn lowered_units() -> Vec<(
    String,
    zlm::decode::Checked,
    zlm::materialize::c::Emitted,
    Vec<String>,
)> {
    let mut out = Vec::new();
    for file in EXAMPLES {
        let m = load(file, "exact");
        let checked = zlm::decode::from_model(&m, &[]).unwrap();
        let lowered: Vec<String> = entries(&checked)
            .into_iter()
            .filter(|e| emit(&checked, &TargetConfig::default(), &Scope::Entry(e.clone())).is_ok())
            .collect();
        if lowered.is_empty() {
            continue;
        }
        let unit = emit(
            &checked,
            &TargetConfig::default(),
            &Scope::Entries(lowered.clone()),
        )
        .unwrap();
        out.push((file.to_string(), checked, unit, lowered));
    }
    out
}

#[test]
fn gcc_and_clang_accept_the_emitted_c_under_strict_flags_and_agree() {
    let mut n = 0;
    for program in ["gcc", "clang"] {
        let cc = zlm::materialize::c::engine::Compiler::strict(program);
        for (file, checked, unit, lowered) in lowered_units() {
            let p = c_engine_common::build(&unit, &cc);
            for entry in &lowered {
                n += compare_with(
                    &checked,
                    &p,
                    &Case {
                        label: &format!("{file}:{entry} ({program})"),
                        entry,
                    },
                    6,
                    &[Limits::default()],
                );
            }
        }
    }
    assert!(n > 30);
}

#[test]
fn the_examples_run_clean_under_address_and_undefined_behaviour_sanitizers() {
    let mut cc = c_engine_common::compiler("cc");
    cc.flags.extend(
        [
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer",
        ]
        .map(String::from),
    );
    let mut n = 0;
    for (file, checked, unit, lowered) in lowered_units() {
        // Any sanitizer report goes to stderr, which the engine refuses.
        let p = c_engine_common::build(&unit, &cc);
        for entry in &lowered {
            n += compare_with(
                &checked,
                &p,
                &Case {
                    label: &format!("{file}:{entry} (sanitized)"),
                    entry,
                },
                6,
                &[
                    Limits::default(),
                    Limits {
                        depth: 3,
                        ..Limits::default()
                    },
                ],
            );
        }
    }
    assert!(n > 15);
}

/// The calls of the interpreter's own tests (interp_ops, interp_faults,
/// interp_loop) whose functions the C engine lowers, with their profile,
/// source edit, limits and arguments: identical observations.
#[test]
fn the_interpreters_test_cases_run_identically() {
    let i32w = |x: i32| x as i64 as u64;
    let ensures_flip = (
        "cop ge Bool result c:Int64:0",
        "cop lt Bool result c:Int64:0",
    );
    let none = ("", "");
    type Row<'a> = (
        &'a str,
        &'a str,
        (&'a str, &'a str),
        &'a str,
        Vec<u64>,
        Limits,
    );
    let d = Limits::default();
    let rows: Vec<Row<'_>> = vec![
        ("ops.zlt", "exact", none, "Main.scalar", vec![2, 3], d),
        ("ops.zlt", "exact", none, "Main.scalar", vec![5, 3], d),
        ("ops.zlt", "exact", none, "Main.scalar", vec![4, 4], d),
        ("ops.zlt", "exact", none, "Main.bits", vec![0x1234, 4], d),
        (
            "ops.zlt",
            "exact",
            none,
            "Main.bits",
            vec![0x8000_0000, 1],
            d,
        ),
        ("ops.zlt", "exact", none, "Main.bits", vec![1, 32], d),
        ("ops.zlt", "exact", none, "Main.unit", vec![], d),
        (
            "faults.zlt",
            "exact",
            none,
            "Main.add",
            vec![i32w(-5), 3],
            d,
        ),
        (
            "faults.zlt",
            "exact",
            none,
            "Main.add",
            vec![i32w(i32::MAX), 1],
            d,
        ),
        (
            "faults.zlt",
            "modular",
            none,
            "Main.add",
            vec![i32w(i32::MAX), 1],
            d,
        ),
        (
            "faults.zlt",
            "modular",
            none,
            "Main.div",
            vec![i32w(i32::MIN), i32w(-1)],
            d,
        ),
        (
            "faults.zlt",
            "approximate",
            none,
            "Main.add",
            vec![i32w(i32::MAX), 1],
            d,
        ),
        (
            "faults.zlt",
            "exact",
            none,
            "Main.div",
            vec![i32w(i32::MIN), i32w(-1)],
            d,
        ),
        (
            "faults.zlt",
            "exact",
            none,
            "Main.div",
            vec![i32w(-7), 2],
            d,
        ),
        ("faults.zlt", "exact", none, "Main.div", vec![1, 0], d),
        ("faults.zlt", "modular", none, "Main.div", vec![1, 0], d),
        ("faults.zlt", "approximate", none, "Main.div", vec![1, 0], d),
        ("faults.zlt", "exact", none, "Main.positive", vec![3], d),
        ("faults.zlt", "exact", none, "Main.positive", vec![0], d),
        ("loop.zlt", "exact", none, "Main.sum", vec![10], d),
        ("loop.zlt", "exact", none, "Main.sum", vec![-1i64 as u64], d),
        ("loop.zlt", "exact", ensures_flip, "Main.sum", vec![3], d),
        (
            "loop.zlt",
            "exact",
            none,
            "Main.sum",
            vec![1_000_000],
            Limits { steps: 1000, ..d },
        ),
        ("deep.zlt", "exact", none, "Main.down", vec![300], d),
        (
            "deep.zlt",
            "exact",
            none,
            "Main.down",
            vec![10],
            Limits { depth: 4, ..d },
        ),
    ];
    let cc = c_engine_common::compiler("cc");
    for (file, profile, (from, to), entry, args, limits) in rows {
        let mut m = load(file, profile);
        if !from.is_empty() {
            let p = format!(
                "{}/../../examples/zlm/run/{file}",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(p).unwrap().replace(from, to);
            m = zlm::text::parse(&text.replace("profile exact", &format!("profile {profile}")))
                .unwrap();
        }
        let checked = zlm::decode::from_model(&m, &[]).unwrap();
        let unit = emit(
            &checked,
            &TargetConfig::default(),
            &Scope::Entry(entry.into()),
        )
        .unwrap();
        let p = c_engine_common::build(&unit, &cc);
        let it = zlm::interp::Interp::new(&checked)
            .unwrap()
            .with_limits(limits);
        let want = c_engine_common::interp_run(&it, entry, &args);
        let got = c_engine_common::c_run(&p, entry, &args, limits);
        assert_eq!(
            Some(&got),
            want.as_ref(),
            "{file} {profile} {entry} {args:x?}"
        );
    }
}

/// Nine pushes into an array of the given capacity: the growth steps
/// (double, at least eight) and the byte budget agree with the interpreter
/// under budgets around each growth.
#[test]
fn byte_array_growth_and_budget_match_the_interpreter() {
    let mut body = String::new();
    let mut loans = String::from("    loan 0 shared p0 - Ref<Allocator<BytesError>> - -\n");
    let mut edges = String::from("    edge 0 try-error 0 exit\n");
    for k in 0..9u32 {
        let base = 4 + 4 * k;
        body.push_str(&format!(
            "      borrow_mut Mut<Array<Byte>> $l0 | loan:{l} -\n      const Byte c:Byte:{k} | - -\n      intrinsic_call Result<Unit,UInt64> %0.{base} $p0 %0.{b1} | cfunc:4 effects:[alloc]\n      result_try_rich Unit %0.{b2} | type:Result<UInt64,UInt64> edge:{l}\n",
            l = k + 1,
            b1 = base + 1,
            b2 = base + 2
        ));
        loans.push_str(&format!(
            "    loan {} exclusive l0 - Mut<Array<Byte>> %0.{base} %0.{}\n",
            k + 1,
            base + 2
        ));
        edges.push_str(&format!(
            "    edge {} try-error 0 exit\n      place_drop - $l0 | path:l0 -\n",
            k + 1
        ));
    }
    loans.push_str("    loan 10 shared l0 - Ref<Array<Byte>> %0.40 %0.41\n");
    edges.push_str("    edge 10 return 0 exit\n      place_drop - $l0 | path:l0 -\n");
    let text = format!(
        "zlm 1.9 package demo module run.grow profile exact mode checked

decl value Main public
  func message type fill public -> Result<UInt64,UInt64> effects [alloc]
    param 0 alloc Ref<Allocator<BytesError>>
    param 1 cap UInt64
    local 0 buf Array<Byte>
    path p0 Allocator<BytesError>
    path p1 UInt64
    path l0 Array<Byte>
    path t%0.1 Result<Array<Byte>,UInt64>
    path t%0.2 Array<Byte>
{loans}    block 0
      load_local UInt64 $p1 | path:p1 -
      intrinsic_call Result<Array<Byte>,UInt64> $p0 %0.0 | cfunc:3 effects:[alloc]
      result_try_rich Array<Byte> %0.1 | type:Result<UInt64,UInt64> edge:0
      store_local - $l0 %0.2 | path:l0 -
{body}      borrow_shared Ref<Array<Byte>> $l0 | loan:10 -
      intrinsic_call UInt64 %0.40 | cfunc:1 effects:[]
      result_ok_rich Result<UInt64,UInt64> %0.41 | type:Result<UInt64,UInt64> lit:0
      return - %0.42 | - -
{edges}"
    );
    let m = zlm::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let checked = zlm::decode::from_model(&m, &[]).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let unit = emit(
        &checked,
        &TargetConfig::default(),
        &Scope::Entry("Main.fill".into()),
    )
    .unwrap();
    let program = c_engine_common::build(&unit, &c_engine_common::compiler("cc"));
    let budgets: Vec<Limits> = [0u64, 1, 2, 7, 8, 9, 10, 15, 16, 17, 100, 101, 116]
        .iter()
        .map(|&bytes| Limits {
            bytes,
            ..Limits::default()
        })
        .collect();
    let n = compare_with(
        &checked,
        &program,
        &Case {
            label: "run.grow Main.fill",
            entry: "Main.fill",
        },
        8,
        &budgets,
    );
    assert!(n >= 60, "only {n} runs");
}

/// Compiles `text` strictly and runs `entry` on the C engine and the
/// interpreter over edge-value arguments: identical observations. Returns
/// how many runs completed and how many faulted.
fn agrees_with_the_interpreter(text: &str, entry: &str) -> (usize, usize) {
    let m = zlm::text::parse(text).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let unit = emit(&checked, &TargetConfig::default(), &Scope::Module).unwrap();
    let program = c_engine_common::build(&unit, &c_engine_common::compiler("cc"));
    let it = zlm::interp::Interp::new(&checked).unwrap();
    let (mut done, mut faulted) = (0, 0);
    for args in c_engine_common::arg_vectors(&it.params(it.find(entry).unwrap()), 16) {
        let want = c_engine_common::interp_run(&it, entry, &args);
        let got = c_engine_common::c_run(&program, entry, &args, Limits::default());
        assert_eq!(Some(&got), want.as_ref(), "args {args:?}");
        match got {
            c_engine_common::Seen::Done(..) => done += 1,
            c_engine_common::Seen::Fault(..) => faulted += 1,
        }
    }
    (done, faulted)
}

/// Regression (issue 36, found by the extended generator): `assert_eq` of a
/// value with itself is valid ZLM; the C engine once emitted it as a C
/// self-comparison that strict compilers (`-Werror`) refuse. It now
/// compiles and agrees with the interpreter, as does a failing assertion.
#[test]
fn an_assertion_of_a_value_against_itself_compiles_and_agrees() {
    let text = "zlm 1.9 package demo module run.selfeq profile exact mode checked

decl value Main public
  func message type same public -> Int32 effects []
    param 0 a Int32
    param 1 b Int32
    path p0 Int32
    path p1 Int32
    block 0
      load_local Int32 $p0 | path:p0 -
      load_local Int32 $p1 | path:p1 -
      assert_eq - %0.0 %0.0 | - -
      assert_eq - %0.0 %0.1 | - -
      return - %0.1 | - -
    edge 0 return 0 exit
";
    let (done, faulted) = agrees_with_the_interpreter(text, "Main.same");
    assert!(
        done > 0 && faulted > 0,
        "{done} completed, {faulted} faulted"
    );
}

/// Regression (issue 36, found by the extended generator): a slice window
/// whose start and end are the same value (an empty window, or a bounds
/// fault past the length) once emitted `start > start`, refused by strict
/// compilers.
#[test]
fn a_slice_window_with_one_value_for_both_bounds_compiles_and_agrees() {
    let text = "zlm 1.9 package demo module run.window profile exact mode checked

decl value Main public
  func message type empty public -> Result<UInt64,UInt64> effects [alloc]
    param 0 alloc Ref<Allocator<BytesError>>
    param 1 at UInt64
    local 0 buf Array<Byte>
    path p0 Allocator<BytesError>
    path p1 UInt64
    path l0 Array<Byte>
    path t%0.1 Result<Array<Byte>,UInt64>
    path t%0.2 Array<Byte>
    loan 0 shared p0 - Ref<Allocator<BytesError>> - -
    loan 1 exclusive l0 - Mut<Array<Byte>> %0.4 %0.6
    loan 2 slice l0 - Slice<Byte> %0.9 %0.10
    loan 3 shared l0 2 Ref<Slice<Byte>> %0.10 %0.11
    block 0
      const UInt64 c:UInt64:4 | - -
      intrinsic_call Result<Array<Byte>,UInt64> $p0 %0.0 | cfunc:3 effects:[alloc]
      result_try_rich Array<Byte> %0.1 | type:Result<UInt64,UInt64> edge:0
      store_local - $l0 %0.2 | path:l0 -
      borrow_mut Mut<Array<Byte>> $l0 | loan:1 -
      const Byte c:Byte:7 | - -
      intrinsic_call Result<Unit,UInt64> %0.4 $p0 %0.5 | cfunc:4 effects:[alloc]
      result_try_rich Unit %0.6 | type:Result<UInt64,UInt64> edge:1
      load_local UInt64 $p1 | path:p1 -
      borrow_slice_byte Slice<Byte> $l0 %0.8 %0.8 | loan:2 cfunc:6
      borrow_shared Ref<Slice<Byte>> %0.9 | loan:3 -
      intrinsic_call UInt64 %0.10 | cfunc:9 effects:[]
      result_ok_rich Result<UInt64,UInt64> %0.11 | type:Result<UInt64,UInt64> lit:0
      return - %0.12 | - -
    edge 0 try-error 0 exit
    edge 1 try-error 0 exit
      place_drop - $l0 | path:l0 -
    edge 2 return 0 exit
      place_drop - $l0 | path:l0 -
";
    let (done, faulted) = agrees_with_the_interpreter(text, "Main.empty");
    assert!(
        done > 0 && faulted > 0,
        "{done} completed, {faulted} faulted"
    );
}
