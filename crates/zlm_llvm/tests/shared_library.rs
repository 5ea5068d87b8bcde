//! AOT shared libraries and their C interface (`host/zlm_lib.h`): every
//! function of every run example, called through `zlm_lib_call` from a C
//! host program linked against the library, observes what the interpreter
//! observes (results, steps, faults, drop logs) under the engines' limits;
//! the interface rejects bad calls, and a record that is not
//! position-independent is refused.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::*;
use zlm::interp::{Interp, Limits};
use zlm::materialize::c::engine::parse_report;
use zlm_llvm::aot::{LIBRARY_H, link_shared, object};
use zlm_llvm::{LlvmError, Scope, lower};

/// A host that calls one entry by name (`NAME steps depth bytes args…`, hex)
/// and prints the engines' protocol, or probes the interface (`probe`).
const HOST_C: &str = r#"#include "zlm_lib.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_log(void *context, const char *text) {
  (void)context;
  fputs(text, stdout);
}

static uint64_t word(const char *s) { return (uint64_t)strtoull(s, 0, 16); }

int main(int argc, char **argv) {
  zlm_limits limits;
  zlm_outcome out;
  uint64_t args[64];
  int64_t entry;
  int i;
  if (argc == 2 && strcmp(argv[1], "probe") == 0) {
    uint64_t one = 1;
    limits.steps = 1000; limits.depth = 10; limits.bytes = 10; limits.stack_bytes = 0;
    printf("count %llu\n", (unsigned long long)zlm_lib_entry_count());
    printf("first %s %lld\n", zlm_lib_entry_name(0), (long long)zlm_lib_entry_params(0));
    printf("past %d %lld\n", zlm_lib_entry_name(zlm_lib_entry_count()) == 0,
           (long long)zlm_lib_entry_params(zlm_lib_entry_count()));
    printf("unknown %lld\n", (long long)zlm_lib_find("Main.nothing"));
    printf("bad-entry %d\n", zlm_lib_call(zlm_lib_entry_count(), 0, 0, &limits, 0, 0, &out));
    printf("bad-count %d\n", zlm_lib_call(0, &one, zlm_lib_entry_params(0) + 1, &limits, 0, 0, &out));
    printf("no-limits %d\n", zlm_lib_call(0, &one, 1, 0, 0, 0, &out));
    return 0;
  }
  if (argc < 5 || argc - 5 > 64) return 2;
  entry = zlm_lib_find(argv[1]);
  if (entry < 0) return 3;
  limits.steps = word(argv[2]);
  limits.depth = word(argv[3]);
  limits.bytes = word(argv[4]);
  limits.stack_bytes = 0;
  for (i = 5; i < argc; i++) args[i - 5] = word(argv[i]);
  if (zlm_lib_call((uint64_t)entry, args, (uint64_t)(argc - 5), &limits, print_log, 0, &out) != 0)
    return 4;
  if (out.faulted) {
    printf("FAULT\t%s\t", out.function);
    if (out.block >= 0) printf("%lld", (long long)out.block); else fputs("-", stdout);
    fputs("\t", stdout);
    if (out.op >= 0) printf("%lld", (long long)out.op); else fputs("-", stdout);
    printf("\t%s\t%s\n", out.fault, out.detail);
  } else {
    printf("OK\t%llu\t%s\n", (unsigned long long)out.steps, out.rendered);
  }
  return 0;
}
"#;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("zlm-llvm-so-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Builds `lib{stem}.so` of `unit` and the host linked against it in `dir`.
fn build(dir: &Path, stem: &str, unit: &zlm_llvm::Lowered) -> PathBuf {
    let record = host_record();
    let obj = dir.join(format!("{stem}.o"));
    std::fs::write(&obj, object(unit, &record).unwrap()).unwrap();
    link_shared(&obj, &dir.join(format!("lib{stem}.so")), &record).unwrap();
    std::fs::write(dir.join("zlm_lib.h"), LIBRARY_H).unwrap();
    std::fs::write(dir.join("host.c"), HOST_C).unwrap();
    let host = dir.join(format!("host-{stem}"));
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o"])
        .arg(&host)
        .arg(dir.join("host.c"))
        .arg(format!("-I{}", dir.display()))
        .arg(format!("-L{}", dir.display()))
        .arg(format!("-l{stem}"))
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    host
}

fn call(host: &Path, entry: &str, args: &[u64], limits: Limits) -> Seen {
    let out = Command::new(host)
        .arg(entry)
        .arg(format!("{:x}", limits.steps))
        .arg(format!("{:x}", limits.depth))
        .arg(format!("{:x}", limits.bytes))
        .args(args.iter().map(|w| format!("{w:x}")))
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{entry}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    seen(
        parse_report(&String::from_utf8_lossy(&out.stdout)),
        "library",
    )
}

#[test]
fn every_example_function_called_through_the_c_interface_matches_the_interpreter() {
    let dir = scratch("examples");
    let limit_set = example_limits();
    let (mut compared, mut faulted, mut dropped) = (0, 0, 0);
    for file in EXAMPLES {
        let m = load(file, "exact");
        let checked = zlm::decode::from_model(&m, &[]).unwrap();
        let unit = lower(&checked, &Scope::Module).unwrap();
        let stem = file.trim_end_matches(".zlt");
        let host = build(&dir, stem, &unit);
        for entry in &unit.entries {
            let it = Interp::new(&checked).unwrap();
            let tys = it.params(it.find(entry).unwrap());
            for args in arg_vectors(&tys, 4) {
                for limits in limit_set {
                    let it = Interp::new(&checked).unwrap().with_limits(limits);
                    let want = interp_run(&it, entry, &args);
                    let got = call(&host, entry, &args, limits);
                    assert_eq!(got, want, "{file}:{entry} args {args:x?} limits {limits:?}");
                    match &want {
                        Seen::Fault(..) => faulted += 1,
                        Seen::Done(_, _, d) => dropped += usize::from(!d.is_empty()),
                    }
                    compared += 1;
                }
            }
        }
    }
    eprintln!("shared libraries: {compared} calls, {faulted} faults, {dropped} with drops");
    assert!(
        compared > 150 && faulted > 20 && dropped > 0,
        "{compared} {faulted} {dropped}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_c_interface_rejects_bad_calls_and_names_its_entries() {
    let dir = scratch("probe");
    let (_, unit) = loop_unit();
    let host = build(&dir, "loop", &unit);
    let out = Command::new(&host).arg("probe").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let want = format!(
        "count {}\nfirst {} {}\npast 1 -1\nunknown -1\nbad-entry -1\nbad-count -1\nno-limits -1\n",
        unit.entries.len(),
        unit.entries[0],
        unit.params[0]
    );
    assert_eq!(text, want);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_shared_library_needs_a_position_independent_record() {
    let dir = scratch("static");
    let (_, unit) = loop_unit();
    let mut record = host_record();
    record.relocation = "static".into();
    let obj = dir.join("loop.o");
    std::fs::write(&obj, object(&unit, &record).unwrap()).unwrap();
    let e = link_shared(&obj, &dir.join("libloop.so"), &record).unwrap_err();
    assert!(matches!(e, LlvmError::Record(_)), "{e}");
    assert_eq!(e.code(), "C0-EXEC-003");
    assert!(e.to_string().contains("pic"), "{e}");
    assert!(!dir.join("libloop.so").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
