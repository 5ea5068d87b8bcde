//! The scaffolding of the engine CLI tests (`zlm_c`, `zlm_llvm`): the
//! binary, the run examples, `irkit zlm run --engine E`, a scratch
//! directory, and the comparison of one engine's output with the
//! interpreter's on a list of cases.
#![allow(dead_code)] // each test crate uses a different subset

use std::process::{Command, Output};

/// The `irkit` binary under test.
pub fn irkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
}

/// The path of a run example (`examples/zlm/run/NAME`).
pub fn example(name: &str) -> String {
    format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// `irkit zlm run` cases every compiled engine must print exactly as the
/// interpreter does (the first argument names a run example).
pub const CASES: &[&[&str]] = &[
    &[
        "loop.zlt", "--entry", "sum", "--args", "100", "--format", "json",
    ],
    &["loop.zlt", "--entry", "sum", "--args", "100", "--contracts"],
    &["loop.zlt", "--entry", "sum", "--args", "-1"],
    &[
        "loop.zlt",
        "--entry",
        "sum",
        "--args",
        "100",
        "--max-steps",
        "50",
        "--format",
        "json",
    ],
    &[
        "deep.zlt",
        "--entry",
        "down",
        "--args",
        "10",
        "--max-depth",
        "5",
    ],
    &["deep.zlt", "--entry", "down", "--args", "10", "--drops"],
    &[
        "faults.zlt",
        "--entry",
        "Main.div",
        "--args",
        "1",
        "0",
        "--format",
        "json",
    ],
    &[
        "faults.zlt",
        "--entry",
        "Main.div",
        "--args",
        "-2147483648",
        "-1",
    ],
    &[
        "faults.zlt",
        "--entry",
        "Main.add",
        "--args",
        "2147483647",
        "1",
    ],
    &["faults.zlt", "--entry", "Main.positive", "--args", "0"],
    &["ops.zlt", "--entry", "Main.scalar", "--args", "5", "3"],
    &[
        "ops.zlt",
        "--entry",
        "Main.bits",
        "--args",
        "4660",
        "4",
        "--format",
        "json",
    ],
    &["ops.zlt", "--entry", "Main.bits", "--args", "1", "32"],
    &["ops.zlt", "--entry", "Main.unit"],
    &["ops.zlt", "--entry", "Main.scalar", "--args", "5"],
    &["ops.zlt", "--entry", "Main.swap", "--drops"],
    &["ops.zlt", "--entry", "Main.half", "--args", "4"],
    &[
        "ops.zlt",
        "--entry",
        "Main.half",
        "--args",
        "3",
        "--format",
        "json",
    ],
    &[
        "own.zlt",
        "--entry",
        "Main.try_demo",
        "--args",
        "true",
        "--drops",
    ],
    &[
        "own.zlt",
        "--entry",
        "Main.try_demo",
        "--args",
        "false",
        "--drops",
    ],
    &[
        "own.zlt",
        "--entry",
        "Main.demo",
        "--drops",
        "--max-steps",
        "9",
    ],
    &[
        "own.zlt",
        "--entry",
        "Main.probe",
        "--args",
        "3",
        "5",
        "--drops",
    ],
    &["drops.zlt", "--entry", "Main.field_replace", "--drops"],
    &[
        "drops.zlt",
        "--entry",
        "Main.drop_err",
        "--drops",
        "--format",
        "json",
    ],
    &[
        "faults.zlt",
        "--entry",
        "Main.byte_at",
        "--args",
        "0",
        "--drops",
    ],
    &[
        "faults.zlt",
        "--entry",
        "Main.byte_at",
        "--args",
        "5",
        "--drops",
    ],
    &[
        "bytes.zlt",
        "--entry",
        "Main.demo",
        "--args",
        "0",
        "2",
        "--drops",
    ],
    &[
        "bytes.zlt",
        "--entry",
        "Main.demo",
        "--args",
        "1",
        "9",
        "--drops",
    ],
    &[
        "loop.zlt",
        "--entry",
        "sum",
        "--args",
        "100",
        "--max-steps",
        "50",
    ],
];

/// A contract that calls the catalog's `get` and `length`, reached from a
/// host-callable entry: the array is empty, so the `get` is a bounds fault
/// at the contract operation on every engine; and a function without one.
pub const CATALOG_CONTRACT: &str =
    "zlm 1.9 package demo module run.cpure profile exact mode checked

decl value Main public
  func message type one public -> UInt64 effects []
    block 0
      const UInt64 c:UInt64:1 | - -
      return - %0.0 | - -
    edge 0 return 0 exit

  func message type len public -> UInt64 effects []
    param 0 bytes Ref<Array<Byte>>
    requires
      cop pure_call UInt64 p0 | 1 0 cfunc:1
      cop ge Bool v0 c:UInt64:0 | 0 0 -
      cop pure_call Byte p0 c:UInt64:0 | 1 0 cfunc:2
      cop pure_call Byte p0 c:UInt64:0 | 1 0 cfunc:2
      cop eq Bool v2 v3 | 0 0 -
      cop and Bool v1 v4 | 0 0 -
    path p0 Array<Byte>
    loan 0 shared p0 - Ref<Array<Byte>> - -
    block 0
      intrinsic_call UInt64 $p0 | cfunc:1 effects:[]
      return - %0.0 | - -
    edge 0 return 0 exit

  func message type demo public -> Result<UInt64,UInt64> effects [alloc]
    param 0 alloc Ref<Allocator<BytesError>>
    local 0 buf Array<Byte>
    path p0 Allocator<BytesError>
    path l0 Array<Byte>
    path t%0.1 Result<Array<Byte>,UInt64>
    path t%0.2 Array<Byte>
    loan 0 shared p0 - Ref<Allocator<BytesError>> - -
    loan 1 shared l0 - Ref<Array<Byte>> %0.4 %0.5
    block 0
      const UInt64 c:UInt64:4 | - -
      intrinsic_call Result<Array<Byte>,UInt64> $p0 %0.0 | cfunc:3 effects:[alloc]
      result_try_rich Array<Byte> %0.1 | type:Result<UInt64,UInt64> edge:0
      store_local - $l0 %0.2 | path:l0 -
      borrow_shared Ref<Array<Byte>> $l0 | loan:1 -
      call UInt64 %0.4 | func:Main.len effects:[]
      result_ok_rich Result<UInt64,UInt64> %0.5 | type:Result<UInt64,UInt64> lit:0
      return - %0.6 | - -
    edge 0 try-error 0 exit
    edge 1 return 0 exit
      place_drop - $l0 | path:l0 -
";

/// `irkit zlm run ARGS --engine ENGINE`.
/// Assembles example `name` of examples/zlm/run into the artifact `out`.
pub fn assemble(name: &str, out: &std::path::Path) {
    let st = irkit()
        .args(["zlm", "asm", &example(name), "-o"])
        .arg(out)
        .status()
        .unwrap();
    assert!(st.success(), "zlm asm {name}");
}

pub fn run(engine: &str, args: &[&str]) -> Output {
    irkit()
        .args(["zlm", "run"])
        .args(args)
        .args(["--engine", engine])
        .output()
        .unwrap()
}

/// A fresh scratch directory for this process, `tag` and `name`.
pub fn tmp(tag: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Asserts that every engine of `engines` prints what `--engine interp`
/// prints (exit status, stdout, stderr) for every case; a case's first
/// argument names a run example.
pub fn same_as_interp(engines: &[&str], cases: &[&[&str]]) {
    for case in cases {
        let mut args: Vec<String> = case.iter().map(|s| s.to_string()).collect();
        args[0] = example(case[0]);
        let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
        agrees_with_interp(engines, &args);
    }
}

/// Runs `irkit zlm run ARGS` on the interpreter and asserts that every
/// engine of `engines` prints the same (exit status, stdout, stderr);
/// returns the interpreter's output.
pub fn agrees_with_interp(engines: &[&str], args: &[&str]) -> Output {
    let want = run("interp", args);
    for engine in engines {
        let got = run(engine, args);
        assert_eq!(
            (
                got.status.code(),
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&got.stderr)
            ),
            (
                want.status.code(),
                String::from_utf8_lossy(&want.stdout),
                String::from_utf8_lossy(&want.stderr)
            ),
            "{engine} {args:?}"
        );
    }
    want
}
