//! `irkit zlm run --engine jit|aot` and `irkit zlm build`: the LLVM engines
//! print exactly what the interpreter prints (stdout, stderr, exit status),
//! refuse what they do not lower with C0-EXEC-002, and a build under a
//! target record is byte-identical across runs and accompanied by the
//! record used.

mod common;
#[path = "common/zlm_engines.rs"]
mod zlm_engines;

use common::{path_arg, run_command, run_irkit};
use std::path::Path;
use zlm_engines::{
    CASES, CATALOG_CONTRACT, agrees_with_interp, assemble, irkit, run, same_as_interp,
};

fn tmp(name: &str) -> std::path::PathBuf {
    zlm_engines::tmp("zlm-llvm", name)
}

#[test]
fn run_engines_jit_and_aot_print_what_the_interpreter_prints() {
    same_as_interp(&["jit", "aot"], CASES);
}

#[test]
fn run_engines_jit_and_aot_fault_in_a_contract_get_as_the_interpreter_does() {
    let d = tmp("cpure");
    let src = d.join("cpure.zlt");
    std::fs::write(&src, CATALOG_CONTRACT).unwrap();
    let src = src.to_string_lossy().into_owned();
    let want = agrees_with_interp(&["jit", "aot"], &[&src, "--entry", "Main.demo"]);
    assert!(
        String::from_utf8_lossy(&want.stderr).contains("out of bounds"),
        "{want:?}"
    );
    let out = run("jit", &[&src, "--entry", "Main.one"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn build_under_a_target_record_is_reproducible_and_records_what_it_used() {
    let d = tmp("build");
    let art = d.join("loop.zlm");
    assemble("loop.zlt", &art);
    // The convenience form: LLVM's default triple, marked as not evidence.
    let conv = d.join("conv.o");
    let (code, _, stderr) = run_irkit(["zlm", "build", path_arg(&art), "-o", path_arg(&conv)]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("not reproducibility evidence"));
    let conv: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("conv.target.json")).unwrap()).unwrap();
    assert_eq!(conv["reproducible"], false);
    assert!(conv["note"].as_str().unwrap().contains("default triple"));
    // An explicit record: every field supplied, x86-64 baseline.
    let mut rec = conv.clone();
    let o = rec.as_object_mut().unwrap();
    o.remove("note");
    o.remove("reproducible");
    o.insert("cpu".into(), "x86-64".into());
    o.insert("triple".into(), "x86_64-pc-linux-gnu".into());
    std::fs::write(d.join("rec.json"), serde_json::to_string(&rec).unwrap()).unwrap();
    let record = d.join("rec.json");
    for n in ["a.o", "b.o", "prog"] {
        let (code, _, stderr) = run_irkit([
            "zlm",
            "build",
            path_arg(&art),
            "--target-record",
            path_arg(&record),
            "-o",
            path_arg(&d.join(n)),
        ]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(stderr.is_empty(), "{stderr}");
    }
    assert_eq!(
        std::fs::read(d.join("a.o")).unwrap(),
        std::fs::read(d.join("b.o")).unwrap()
    );
    let used: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("a.target.json")).unwrap()).unwrap();
    assert_eq!(used["reproducible"], true);
    assert_eq!(used["cpu"], "x86-64");
    // The linked executable speaks the engines' protocol.
    let out = std::process::Command::new(d.join("prog"))
        .args(["0", "5f5e100", "100", "100", "64"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "OK\t1212\t4950\n");
    // A bad record is refused with C0-EXEC-003.
    rec.as_object_mut()
        .unwrap()
        .insert("cpu".into(), "native".into());
    std::fs::write(d.join("bad.json"), serde_json::to_string(&rec).unwrap()).unwrap();
    let (code, stdout, _) = run_irkit([
        "zlm",
        "build",
        path_arg(&art),
        "--target-record",
        path_arg(&d.join("bad.json")),
        "--format",
        "json",
        "-o",
        path_arg(&d.join("c.o")),
    ]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["code"], "C0-EXEC-003");
    assert!(!d.join("c.o").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn build_writes_a_shared_library_with_its_c_header_and_record() {
    let d = tmp("shared");
    let art = d.join("loop.zlm");
    assemble("loop.zlt", &art);
    let build = |record: Option<&std::path::Path>, out: &str| {
        let mut cmd = irkit();
        cmd.args(["zlm", "build"]).arg(&art);
        if let Some(r) = record {
            cmd.arg("--target-record").arg(r);
        }
        cmd.args(["--format", "json", "-o"]).arg(d.join(out));
        run_command(&mut cmd)
    };
    let (code, _, stderr) = build(None, "libloop.so");
    assert_eq!(code, Some(0), "{stderr}");
    let header = std::fs::read_to_string(d.join("libloop.h")).unwrap();
    assert!(header.contains("int zlm_lib_call("), "{header}");
    let used: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("libloop.target.json")).unwrap()).unwrap();
    assert_eq!(used["relocation"], "pic");
    // A C program linked against it calls `Main.sum` by name.
    std::fs::write(
        d.join("main.c"),
        "#include \"libloop.h\"\n#include <stdio.h>\nint main(void) {\n  zlm_limits l = {100000, 100, 100, 0};\n  zlm_outcome o;\n  uint64_t n = 100;\n  if (zlm_lib_call((uint64_t)zlm_lib_find(\"Main.sum\"), &n, 1, &l, 0, 0, &o) != 0) return 1;\n  printf(\"%d %llu %s\\n\", o.faulted, (unsigned long long)o.steps, o.rendered);\n  return 0;\n}\n",
    )
    .unwrap();
    let cc = std::process::Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-o"])
        .arg(d.join("main"))
        .arg(d.join("main.c"))
        .arg(d.join("libloop.so"))
        .arg(format!("-Wl,-rpath,{}", d.display()))
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let ran = std::process::Command::new(d.join("main")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "0 1212 4950\n");
    // A record that is not position-independent cannot make one.
    let mut rec = used.clone();
    let o = rec.as_object_mut().unwrap();
    o.remove("note");
    o.remove("reproducible");
    o.insert("relocation".into(), "static".into());
    std::fs::write(d.join("static.json"), serde_json::to_string(&rec).unwrap()).unwrap();
    let (code, stdout, _) = build(Some(&d.join("static.json")), "libstatic.so");
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["code"], "C0-EXEC-003");
    assert!(v["message"].as_str().unwrap().contains("pic"), "{v}");
    assert!(!d.join("libstatic.so").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// The typed call boundary on all four engines (issue 37's "done when"):
/// `Main.check` takes a record (moved in) and a byte slice (lent) and
/// returns a `Result` of a record; an instance receiver is lent and handed
/// back. Stdout, stderr and the exit status are the interpreter's, for an
/// Ok, an Err with a payload, a step-limit fault and the byte limit.
#[test]
fn run_engines_jit_and_aot_take_typed_arguments_as_the_interpreter_does() {
    let root = format!("{}/../../examples/zlm/run", env!("CARGO_MANIFEST_DIR"));
    let boundary = format!("{root}/boundary.zlt");
    let own = format!("{root}/own.zlt");
    let ok = r#"[{"version": 2, "limit": 8, "tag": [5]}, [7, 1, 2]]"#;
    let too_long = r#"[{"version": 2, "limit": 2, "tag": []}, [7, 1, 2]]"#;
    let cases: Vec<Vec<&str>> = vec![
        vec![
            &boundary,
            "--entry",
            "Main.check",
            "--json-args",
            ok,
            "--drops",
        ],
        vec![
            &boundary,
            "--entry",
            "Main.check",
            "--json-args",
            ok,
            "--format",
            "json",
        ],
        vec![
            &boundary,
            "--entry",
            "Main.check",
            "--json-args",
            too_long,
            "--format",
            "json",
        ],
        vec![
            &boundary,
            "--entry",
            "Main.check",
            "--json-args",
            too_long,
            "--max-steps",
            "5",
            "--drops",
        ],
        vec![
            &boundary,
            "--entry",
            "Main.check",
            "--json-args",
            ok,
            "--max-bytes",
            "3",
        ],
        vec![
            &own,
            "--entry",
            "Box.at_least",
            "--json-args",
            r#"[{"v": 5}, 3]"#,
        ],
    ];
    for args in &cases {
        let want = agrees_with_interp(&["c", "jit", "aot"], args);
        assert!(
            matches!(want.status.code(), Some(0..=3)),
            "{args:?}: {want:?}"
        );
    }
    let out = run("aot", &cases[0]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Main.check: drop p0 : Header\nMain.check: drop p0.tag : Array<Byte>\n\
         {\"Ok\":{\"version\":2,\"length\":3,\"first\":7}}\npayload: [7,1,2]\n"
    );
}

/// The JIT's Rust API for a typed call: slot values in, the result and the
/// lent values handed back out, as the interpreter's `call_host` returns them.
#[test]
fn jit_typed_call_api_matches_the_interpreter() {
    let text = std::fs::read_to_string(format!(
        "{}/../../examples/zlm/run/boundary.zlt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let m = zlm::text::parse(&text).unwrap();
    let checked = zlm::decode::from_model(&m, &[]).unwrap();
    let it = zlm::interp::Interp::new(&checked).unwrap();
    let r = it.resolved();
    let at = it.find("Main.check").unwrap();
    let slots = zlm::boundary::slots(r, at);
    let values = zlm::boundary::parse_args(
        r,
        &slots,
        r#"[{"version": 3, "limit": 8, "tag": [9]}, [4, 5]]"#,
    )
    .unwrap();
    let want = it.call_host(at, values.clone()).unwrap();
    let unit = zlm_llvm::lower(&checked, &zlm_llvm::Scope::Module).unwrap();
    assert!(
        unit.typed.iter().any(|e| e == "Main.check"),
        "{:?}",
        unit.typed
    );
    let got = zlm_llvm::jit::with_jit(&unit, |p| p.call_typed(r, at, &values, it.limits()))
        .unwrap()
        .unwrap();
    let zlm_llvm::jit::TypedRun::Done {
        words,
        steps,
        drops,
    } = got
    else {
        panic!("{got:?}");
    };
    assert_eq!(words.value, want.outcome.value);
    assert_eq!(words.returned, want.returned);
    assert_eq!(steps, want.outcome.steps);
    assert_eq!(drops, want.outcome.drops);
    // A malformed stream (too short, a byte over 255, words left over) is
    // an error on both LLVM engines, never a run.
    let words = zlm::boundary::slot_words(r, &slots, &values);
    let mut over = words.clone();
    over.push(0);
    let mut big = words.clone();
    let at_byte = big.len() - 1;
    big[at_byte] = 256;
    let bad = [words[..3].to_vec(), over, big];
    let aot = zlm_llvm::aot::AotProgram::build(
        &unit,
        &zlm_llvm::TargetRecord::convenience("cc").unwrap(),
    )
    .unwrap();
    for w in &bad {
        let jit =
            zlm_llvm::jit::with_jit(&unit, |p| p.run_typed("Main.check", w, it.limits())).unwrap();
        assert!(jit.is_err(), "{w:?}: {jit:?}");
        let ran = aot.run_typed("Main.check", w, it.limits());
        assert!(ran.is_err(), "{w:?}: {ran:?}");
    }
}

/// `zlm build -o libX.so` writes, beside the fixed C interface, structs and
/// typed call functions generated from the checked signatures
/// (docs/zlm/c-header.md): a C program compiled under strict flags calls
/// `Main.check` with a record and a byte slice and reads a `Result` of a
/// record (Ok, Err with a payload) and a fault, as the interpreter does.
#[test]
fn build_shared_library_header_has_typed_entries_a_c_program_calls() {
    let d = tmp("typed-header");
    let src = format!(
        "{}/../../examples/zlm/run/boundary.zlt",
        env!("CARGO_MANIFEST_DIR")
    );
    build_library(Path::new(&src), &d.join("libboundary.so"));
    let header = std::fs::read_to_string(d.join("libboundary.h")).unwrap();
    for want in [
        "typedef struct zlm_Header {",
        "#define zlm_Reject_TooLong UINT64_C(1)",
        "static inline int zlm_call_Main_check(",
        "const zlm_Header *header, const zlm_byte_array *payload",
    ] {
        assert!(header.contains(want), "{want} in\n{header}");
    }
    let ran = compile_and_run(&d, "main", MAIN_C, "libboundary.so");
    // Steps 20 and the drops are the interpreter's (tests/zlm_run.rs).
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        "D\tMain.check\tp0\tHeader\nD\tMain.check\tp0.tag\tArray<Byte>\n\
         0 20 0 2 3 7\n0 1 1 3 2\n1 StepLimit Main.check\n"
    );
    // Values holding byte arrays handed back (a record, and a Result whose
    // error variant carries bytes) are released with the generated free
    // helpers: the program counts the header's allocations, and none is
    // left after them.
    let echo = d.join("echo.zlt");
    std::fs::write(&echo, ECHO_ZLT).unwrap();
    build_library(&echo, &d.join("libecho.so"));
    let header = std::fs::read_to_string(d.join("libecho.h")).unwrap();
    for want in [
        "static inline void zlm_byte_array_free(zlm_byte_array *a) {",
        "static inline void zlm_free_Header(zlm_Header *v) {",
        "static inline void zlm_free_Reject(zlm_Reject *v) {",
        "static inline void zlm_free_r3(zlm_r3 *v) {",
    ] {
        assert!(header.contains(want), "{want} in\n{header}");
    }
    let ran = compile_and_run(&d, "echo", ECHO_C, "libecho.so");
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        "2 2 1 2 live 1\nlive 0 empty 1\n1 1 3 5 live 1\nlive 0\n"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `irkit zlm build SRC -o LIB` (a shared library and its header), which must succeed.
fn build_library(src: &Path, lib: &Path) {
    let (code, _, stderr) = run_irkit(["zlm", "build", path_arg(src), "-o", path_arg(lib)]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Writes C program `source` as `NAME.c` in `d`, compiles it under strict
/// flags against library `lib` of `d` (its header beside it) and runs it,
/// which must succeed.
fn compile_and_run(d: &Path, name: &str, source: &str, lib: &str) -> std::process::Output {
    let c = d.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let cc = std::process::Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o"])
        .arg(d.join(name))
        .arg(&c)
        .arg(d.join(lib))
        .arg(format!("-Wl,-rpath,{}", d.display()))
        .output()
        .unwrap();
    assert!(
        cc.status.success(),
        "{}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let ran = std::process::Command::new(d.join(name)).output().unwrap();
    assert!(ran.status.success(), "{ran:?}");
    ran
}

/// A library whose entries hand back byte arrays: `Main.echo` returns the
/// record it is given, `Main.reject` an error variant carrying the bytes.
const ECHO_ZLT: &str = "zlm 1.9 package demo module run.echo profile exact mode checked

decl value Header public
  field 0 version public let Byte
  field 1 tag public let Array<Byte>

decl error Reject public
  variant 0 Empty
  variant 1 Bad
    pfield 0 bytes Array<Byte>

decl value Main public
  func message type echo public -> @Header effects []
    param 0 header @Header
    path p0 @Header
    path t%0.0 @Header
    block 0
      place_move @Header $p0 | path:p0 -
      return - %0.0 | - -
    edge 0 return 0 exit

  func message type reject public -> Result<@Header,@Reject> effects []
    param 0 bytes Array<Byte>
    path p0 Array<Byte>
    path t%0.0 Array<Byte>
    path t%0.1 @Reject
    path t%0.2 Result<@Header,@Reject>
    block 0
      place_move Array<Byte> $p0 | path:p0 -
      variant_construct @Reject %0.0 | variant:Reject.Bad lit:1
      result_err_rich Result<@Header,@Reject> %0.1 | type:Result<@Header,@Reject> lit:1
      return - %0.2 | - -
    edge 0 return 0 exit
";

/// The C program of the free helpers: `malloc`, `realloc` and `free` of
/// the header's functions are counted (`live`: blocks not yet freed).
const ECHO_C: &str = r#"#include <stdio.h>
#include <stdlib.h>
static long live;
static void *counted_malloc(size_t n) {
  void *p = malloc(n);
  if (p) live++;
  return p;
}
static void *counted_realloc(void *q, size_t n) {
  void *p = realloc(q, n);
  if (p && !q) live++;
  return p;
}
static void counted_free(void *p) {
  if (p) live--;
  free(p);
}
#define malloc counted_malloc
#define realloc counted_realloc
#define free counted_free
#include "libecho.h"
int main(void) {
  zlm_limits l = {100000, 100, 1000, 0};
  zlm_outcome o;
  uint8_t tag[2] = {1, 2}, bad[3] = {3, 4, 5};
  zlm_Header h, back;
  zlm_byte_array bytes = {bad, 3};
  zlm_r3 r;
  memset(&h, 0, sizeof h);
  h.version = 2;
  h.tag.data = tag;
  h.tag.len = 2;
  if (zlm_call_Main_echo(&l, 0, 0, &o, &h, &back) != 0 || o.faulted) return 1;
  printf("%u %llu %u %u live %ld\n", back.version, (unsigned long long)back.tag.len,
         back.tag.data[0], back.tag.data[1], live);
  zlm_free_Header(&back);
  zlm_free_Header(&back);
  printf("live %ld empty %d\n", live, back.tag.data == 0 && back.tag.len == 0);
  if (zlm_call_Main_reject(&l, 0, 0, &o, &bytes, &r) != 0 || o.faulted) return 1;
  printf("%llu %d %llu %u live %ld\n", (unsigned long long)r.is_err, r.err.tag == zlm_Reject_Bad,
         (unsigned long long)r.err.Bad.bytes.len, r.err.Bad.bytes.data[2], live);
  zlm_free_r3(&r);
  printf("live %ld\n", live);
  return 0;
}
"#;

/// The C program of `build_shared_library_header_has_typed_entries_a_c_program_calls`.
const MAIN_C: &str = r#"#include "libboundary.h"
#include <stdio.h>
static void logline(void *c, const char *s) { (void)c; fputs(s, stdout); }
int main(void) {
  zlm_limits l = {100000, 100, 1000, 0};
  zlm_outcome o;
  uint8_t tag[1] = {5}, bytes[3] = {7, 1, 2};
  zlm_Header h;
  zlm_byte_array payload = {bytes, 3};
  zlm_r4 r;
  memset(&h, 0, sizeof h);
  h.version = 2;
  h.limit = 8;
  h.tag.data = tag;
  h.tag.len = 1;
  if (zlm_call_Main_check(&l, logline, 0, &o, &h, &payload, &r) != 0) return 1;
  printf("%d %llu %llu %u %llu %u\n", o.faulted, (unsigned long long)o.steps,
         (unsigned long long)r.is_err, r.ok.version, (unsigned long long)r.ok.length, r.ok.first);
  h.limit = 2;
  if (zlm_call_Main_check(&l, 0, 0, &o, &h, &payload, &r) != 0) return 1;
  printf("%d %llu %d %llu %llu\n", o.faulted, (unsigned long long)r.is_err,
         r.err.tag == zlm_Reject_TooLong, (unsigned long long)r.err.TooLong.length,
         (unsigned long long)r.err.TooLong.limit);
  l.steps = 5;
  if (zlm_call_Main_check(&l, 0, 0, &o, &h, &payload, &r) != 0) return 1;
  printf("%d %s %s\n", o.faulted, o.fault, o.function);
  return 0;
}
"#;
