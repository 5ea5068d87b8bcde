//! Every verb of every system exits with the status docs/diagnostics.md ("Exit status") gives
//! it: 0 success, 1 invalid input (diagnostics printed), 2 usage, I/O or environment, 3 a
//! negative verdict about valid input. The verbs are the ones `--help` lists, so a new verb fails
//! this test until it has its cases here. Each verb is run with an unknown option (2) and with the
//! cases of its table: a missing input file (2), an input that does not read (1), and where it
//! is cheap here, a success (0) and a verdict (3). Verbs that need a server, a browser or LLVM
//! codegen are run only up to what fails before (a refused connection is 2).

mod common;
use common::{help_commands, irkit, repo_file, text};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Every `SYSTEM VERB` irkit's help lists.
fn verbs() -> BTreeSet<String> {
    let top = text(&irkit(&["--help"]).stdout);
    let mut verbs = BTreeSet::new();
    for system in help_commands(&top) {
        for verb in help_commands(&text(&irkit(&[&system, "--help"]).stdout)) {
            verbs.insert(format!("{system} {verb}"));
        }
    }
    verbs
}

/// A scratch directory for this process, the working directory of every run (outputs and the
/// local store land there).
fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("irkit-exit-codes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `irkit ARGS` in `dir` and returns its exit status (with its stderr for messages).
fn status(dir: &Path, args: &[String]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_irkit"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("irkit runs");
    (out.status.code(), text(&out.stderr))
}

/// One case: the arguments after `irkit SYSTEM VERB`, and the status they must exit with.
type Case = (u8, Vec<String>);

fn case(status: u8, args: &[&str]) -> Case {
    (status, args.iter().map(|a| a.to_string()).collect())
}

/// The cases of every verb. `bad` is a file no system reads (not UTF-8 VPL/ZLM text, not JSON,
/// not a container), `missing` a path that does not exist.
fn cases(dir: &Path) -> Vec<(&'static str, Vec<Case>)> {
    let bad = dir.join("bad.bin");
    std::fs::write(&bad, b"\x00\x01garbage{").unwrap();
    let bad = bad.to_str().unwrap().to_string();
    let bad = bad.as_str();
    let missing = dir.join("missing.file");
    let missing = missing.to_str().unwrap().to_string();
    let missing = missing.as_str();
    let vpl = repo_file("examples/vpl/loop_call.vpl");
    let vpl = vpl.as_str();
    let graph_bad = dir.join("graph.json");
    std::fs::write(&graph_bad, "{").unwrap();
    let graph_bad = graph_bad.to_str().unwrap().to_string();
    let graph_bad = graph_bad.as_str();
    let tcc = repo_file("examples/tcc/run/compute-loop.json");
    let tcc = tcc.as_str();
    let script = dir.join("script.json");
    std::fs::write(&script, "{}").unwrap();
    let script = script.to_str().unwrap().to_string();
    let script = script.as_str();
    let py_bad = dir.join("bad.py");
    std::fs::write(&py_bad, "def broken(:\n").unwrap();
    let py_bad = py_bad.to_str().unwrap().to_string();
    let py_bad = py_bad.as_str();
    let py = repo_file("examples/tcc/src/approval.py");
    let py = py.as_str();
    let rvn = |name: &str| repo_file(&format!("examples/rvnlib/{name}"));
    let (app, legacy, pkg_a, core_json) = (
        rvn("app.rvnlib"),
        rvn("legacy-v3.rvnlib"),
        rvn("pkg-a.rvnlib"),
        rvn("core.json"),
    );
    let (app, legacy, pkg_a, core_json) = (
        app.as_str(),
        legacy.as_str(),
        pkg_a.as_str(),
        core_json.as_str(),
    );
    let zlt = repo_file("examples/zlm/run/loop.zlt");
    let zlt = zlt.as_str();
    let no_server = "http://127.0.0.1:1";
    vec![
        (
            "vpl check",
            vec![case(0, &[vpl]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "vpl canon",
            vec![case(0, &[vpl]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "vpl glsl",
            vec![
                case(0, &[vpl, "-o", "glsl"]),
                case(1, &[bad, "-o", "glsl-bad"]),
                case(2, &[missing, "-o", "glsl-missing"]),
            ],
        ),
        (
            "vpl compile",
            vec![
                case(0, &[vpl, "--target", "wgsl", "-o", "wgsl"]),
                case(1, &[bad, "--target", "wgsl", "-o", "wgsl-bad"]),
                case(2, &[vpl, "--target", "wgls", "-o", "wgsl-typo"]),
            ],
        ),
        (
            "vpl render",
            vec![
                case(
                    0,
                    &[vpl, "--driver", "cpu", "--size", "4x4", "-o", "ok.png"],
                ),
                case(1, &[bad, "--driver", "cpu", "-o", "bad.png"]),
                case(2, &[missing, "--driver", "cpu", "-o", "missing.png"]),
            ],
        ),
        (
            "vpl graph",
            vec![case(1, &[graph_bad]), case(2, &[missing])],
        ),
        ("vpl playground", vec![case(2, &["--listen", "nohost:x"])]),
        (
            "tcc validate",
            vec![case(0, &[tcc]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "tcc hash",
            vec![case(0, &[tcc]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "tcc print",
            vec![case(0, &[tcc]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "tcc canon",
            vec![case(0, &[tcc]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "tcc compile",
            vec![
                case(0, &[py, "-o", "approval.json"]),
                case(1, &[py_bad]),
                case(2, &[missing]),
            ],
        ),
        (
            "tcc run",
            vec![
                case(0, &[tcc, "--args", "[3]"]),
                case(1, &[bad]),
                case(2, &[missing]),
            ],
        ),
        (
            "tcc step",
            vec![
                case(0, &[tcc, "--args", "[3]", "-o", "step.json"]),
                case(1, &[bad, "-o", "step-bad.json"]),
                case(2, &[missing, "-o", "step-missing.json"]),
            ],
        ),
        (
            "tcc simulate",
            vec![
                case(0, &[tcc, "--args", "[3]", "--script", script]),
                case(1, &[bad, "--script", script]),
                case(2, &[tcc, "--args", "[3]", "--script", missing]),
            ],
        ),
        (
            "tcc serve",
            vec![
                case(2, &["--listen", "nohost:x"]),
                case(2, &["--otlp-endpoint", "collector:4318"]),
                case(2, &["--retention", "7x", "--listen", "127.0.0.1:0"]),
                case(2, &["--archive-dir", "arch", "--listen", "127.0.0.1:0"]),
            ],
        ),
        ("tcc register", vec![case(2, &[tcc, "--server", no_server])]),
        (
            "tcc start",
            vec![
                case(0, &["--local", tcc, "--args", "[3]"]),
                case(1, &["--local", bad]),
                // PROGRAM is a file or a registered program's name: a path that is
                // neither is an unknown name given as an argument.
                case(1, &["--local", missing]),
                case(2, &["prog", "--server", no_server]),
                case(2, &["--local", tcc, "--traceparent", "00-zz"]),
            ],
        ),
        ("tcc status", vec![case(2, &["x", "--server", no_server])]),
        ("tcc result", vec![case(2, &["x", "--server", no_server])]),
        (
            "tcc send",
            vec![case(2, &["x", "ev", "--server", no_server])],
        ),
        ("tcc cancel", vec![case(2, &["x", "--server", no_server])]),
        (
            "tcc terminate",
            vec![case(2, &["x", "--server", no_server])],
        ),
        (
            "tcc resume",
            vec![
                // An unknown execution of the local store: a coded refusal.
                case(1, &["nope", "--local"]),
                case(2, &["x", "--server", no_server]),
                case(2, &["--program", "p", "--server", no_server]),
                case(2, &[]),
            ],
        ),
        (
            "tcc pause",
            vec![
                case(2, &["x", "--server", no_server]),
                case(2, &["--program", "p", "--server", no_server]),
                case(2, &[]),
            ],
        ),
        ("tcc delete", vec![case(2, &["x", "--server", no_server])]),
        ("tcc ls", vec![case(2, &["--server", no_server])]),
        (
            "tcc schedule",
            vec![
                case(1, &["create", "n", "p", "--cron", "61 * * * *"]),
                case(1, &["create", "n", "p", "--every", "10x"]),
                case(1, &["create", "a/b", "p", "--every", "1s"]),
                case(2, &["create", "n", "p"]),
                case(
                    2,
                    &["create", "n", "p", "--every", "1s", "--server", no_server],
                ),
                case(2, &["ls", "--server", no_server]),
                case(2, &["pause", "n", "--server", no_server]),
                case(2, &["resume", "n", "--server", no_server]),
                case(2, &["delete", "n", "--server", no_server]),
            ],
        ),
        (
            "tcc limit",
            vec![
                case(1, &["set", "prog:x", "--max-concurrent", "2"]),
                case(1, &["set", "program:x", "--max-concurrent", "0"]),
                case(1, &["set", "program:x", "--rate", "fast"]),
                case(1, &["set", "program:x"]),
                case(1, &["delete", "nope"]),
                case(
                    2,
                    &[
                        "set",
                        "program:x",
                        "--max-concurrent",
                        "2",
                        "--server",
                        no_server,
                    ],
                ),
                case(2, &["ls", "--server", no_server]),
                case(2, &["delete", "program:x", "--server", no_server]),
            ],
        ),
        (
            "rvn inspect",
            vec![case(0, &[app]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "rvn verify",
            vec![case(0, &[app]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "rvn link",
            vec![
                case(0, &[pkg_a, "-o", "linked.rvnlib"]),
                case(1, &[bad, "-o", "linked-bad.rvnlib"]),
                case(2, &[missing, "-o", "linked-missing.rvnlib"]),
            ],
        ),
        (
            "rvn diff",
            vec![
                case(0, &[app, app]),
                case(1, &[bad, app]),
                case(2, &[missing, app]),
                case(3, &[legacy, app]),
            ],
        ),
        (
            "rvn calls",
            vec![
                case(0, &[app, "Shade"]),
                case(1, &[bad, "Shade"]),
                case(1, &[app, "Shdae"]),
                case(2, &[missing, "Shade"]),
            ],
        ),
        (
            "rvn keys",
            vec![case(0, &[app]), case(1, &[bad]), case(2, &[missing])],
        ),
        (
            "rvn pack",
            vec![
                case(0, &[core_json, "-o", "packed.rvnlib"]),
                case(1, &[graph_bad, "-o", "packed-bad.rvnlib"]),
                case(2, &[missing, "-o", "packed-missing.rvnlib"]),
            ],
        ),
        (
            "zlm asm",
            vec![
                case(0, &[zlt, "-o", "loop.zlm"]),
                case(1, &[graph_bad, "-o", "bad.zlm"]),
                case(2, &[missing, "-o", "missing.zlm"]),
            ],
        ),
        (
            "zlm dis",
            vec![case(0, &[zlt]), case(1, &[graph_bad]), case(2, &[missing])],
        ),
        (
            "zlm validate",
            vec![case(0, &[zlt]), case(1, &[graph_bad]), case(2, &[missing])],
        ),
        (
            "zlm ids",
            vec![case(0, &[zlt]), case(1, &[graph_bad]), case(2, &[missing])],
        ),
        (
            "zlm run",
            vec![
                case(0, &[zlt, "--entry", "Main.sum", "--args", "3"]),
                case(1, &[graph_bad, "--entry", "Main.sum"]),
                case(1, &[zlt, "--entry", "Main.smu", "--args", "3"]),
                case(2, &[missing, "--entry", "Main.sum"]),
                case(3, &[zlt, "--entry", "Main.sum", "--args", "-1"]),
                case(0, &[zlt, "--entry", "Main.sum", "--json-args", "[3]"]),
                case(1, &[zlt, "--entry", "Main.sum", "--json-args", "[true]"]),
                case(1, &[zlt, "--entry", "Main.sum", "--json-args", "[3"]),
            ],
        ),
        (
            "zlm emit-c",
            vec![
                case(0, &[zlt, "-o", "c"]),
                case(1, &[graph_bad, "-o", "c-bad"]),
                case(2, &[missing, "-o", "c-missing"]),
            ],
        ),
        (
            "zlm build",
            vec![
                case(1, &[graph_bad, "-o", "bad.o"]),
                case(2, &[missing, "-o", "missing.o"]),
            ],
        ),
        (
            "zlm zli",
            vec![case(0, &[zlt]), case(1, &[graph_bad]), case(2, &[missing])],
        ),
        (
            "zlm reflect",
            vec![
                case(0, &[zlt, "--format", "json"]),
                case(1, &[graph_bad, "--format", "json"]),
                case(2, &[missing, "--format", "json"]),
            ],
        ),
        (
            "zlm address",
            vec![case(0, &[zlt]), case(1, &[graph_bad]), case(2, &[missing])],
        ),
    ]
}

#[test]
fn every_verb_exits_with_its_documented_status() {
    let dir = scratch();
    let table = cases(&dir);
    let listed = verbs();
    assert!(listed.len() > 30, "{listed:?}");
    let covered: BTreeSet<String> = table.iter().map(|(v, _)| v.to_string()).collect();
    let uncovered: Vec<_> = listed.difference(&covered).collect();
    let unknown: Vec<_> = covered.difference(&listed).collect();
    assert!(
        uncovered.is_empty() && unknown.is_empty(),
        "verbs without exit-code cases: {uncovered:?}; cases naming no verb: {unknown:?}"
    );
    let mut failures = Vec::new();
    for (verb, cases) in &table {
        let words: Vec<String> = verb.split(' ').map(str::to_string).collect();
        let usage = [words.clone(), vec!["--no-such-option".to_string()]].concat();
        let all = std::iter::once((2u8, usage)).chain(
            cases
                .iter()
                .map(|(expected, args)| (*expected, [words.clone(), args.clone()].concat())),
        );
        for (expected, args) in all {
            let (got, stderr) = status(&dir, &args);
            if got != Some(i32::from(expected)) {
                failures.push(format!(
                    "irkit {}: exit {got:?}, documented {expected}\n{stderr}",
                    args.join(" ")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let _ = std::fs::remove_dir_all(&dir);
}
