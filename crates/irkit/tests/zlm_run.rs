//! `irkit zlm run`: results, drop logs, faults and exit codes.

use std::process::Command;

mod common;
use common::run_irkit;

fn irkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
}

fn example(name: &str) -> String {
    format!(
        "{}/../../examples/zlm/run/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn runs_text_modules_and_prints_the_drop_log() {
    let (code, stdout, stderr) = run_irkit([
        "zlm",
        "run",
        &example("own.zlt"),
        "--entry",
        "Main.demo",
        "--drops",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout,
        "Main.demo: drop t%0.9 : Box\nMain.demo: drop l1 : Pair\nMain.demo: drop l1.right : Box\nMain.demo: drop l0 : Box\n1\n"
    );
}

#[test]
fn runs_canonical_artifacts_with_arguments() {
    let dir = std::env::temp_dir().join(format!("irkit-zlm-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let art = dir.join("loop.zlm");
    let st = irkit()
        .args(["zlm", "asm", &example("loop.zlt"), "-o"])
        .arg(&art)
        .status()
        .unwrap();
    assert!(st.success());
    let (code, stdout, _) = run_irkit([
        "zlm",
        "run",
        art.to_str().unwrap(),
        "--entry",
        "sum",
        "--args",
        "100",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["result"], "4950");
    assert_eq!(v["type"], "Int64");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn faults_exit_one_with_a_coded_diagnostic() {
    let (code, stdout, _) = run_irkit([
        "zlm",
        "run",
        &example("faults.zlt"),
        "--entry",
        "Main.div",
        "--args",
        "1",
        "0",
        "--format",
        "json",
    ]);
    // A fault is a verdict about a valid module (exit 3), not invalid input (exit 1).
    assert_eq!(code, Some(3));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["kind"], "fault");
    assert_eq!(v["code"], "ZLM-FAULT-DIV-ZERO");
    assert!(
        v["message"]
            .as_str()
            .unwrap()
            .contains("Main.div block 0 op 2")
    );
}

#[test]
fn invalid_modules_never_run() {
    let src = std::fs::read_to_string(example("loop.zlt"))
        .unwrap()
        .replace("add Int64 %2.0 %2.1", "add Int32 %2.0 %2.1");
    let dir = std::env::temp_dir().join(format!("irkit-zlm-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("bad.zlt");
    std::fs::write(&f, src).unwrap();
    let (code, stdout, _) = run_irkit([
        "zlm",
        "run",
        f.to_str().unwrap(),
        "--entry",
        "Main.sum",
        "--args",
        "3",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    // The writer's typing table or the checked semantics reject it.
    assert!(v["code"] == "ZLM-C-TYPE" || v["code"] == "ZLM-SHAPE", "{v}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn usage_errors_exit_two_and_an_unknown_entry_one() {
    // An unknown entry is an unknown name given as an argument: invalid input, with its code.
    let (code, _, stderr) = run_irkit(["zlm", "run", &example("loop.zlt"), "--entry", "Main.nope"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("error[ZLM-ENTRY]"));
    let (code, _, _) = run_irkit([
        "zlm",
        "run",
        &example("loop.zlt"),
        "--entry",
        "Main.sum",
        "--args",
        "x",
    ]);
    assert_eq!(code, Some(2));
}

#[test]
fn prints_the_entry_contract_and_runs_the_sdk_facade() {
    let (code, stdout, _) = run_irkit([
        "zlm",
        "run",
        &example("loop.zlt"),
        "--entry",
        "Main.sum",
        "--args",
        "4",
        "--contracts",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        "contract: requires { (n >= 0i64); } ensures { (result >= 0i64); }\n6\n"
    );
    let (code, stdout, _) = run_irkit([
        "zlm",
        "run",
        &example("bytes.zlt"),
        "--entry",
        "Main.demo",
        "--args",
        "0",
        "2",
        "--drops",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout,
        "Main.demo: drop l0 : Bytes\nMain.demo: drop l0.storage : Array<Byte>\nOk(10)\n"
    );
}

#[test]
fn runs_break_continue_and_backedge_edges() {
    let (code, stdout, _) = run_irkit([
        "zlm",
        "run",
        &example("control.zlt"),
        "--entry",
        "Main.scan",
        "--args",
        "10",
        "4",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["result"], "3");
    assert_eq!(v["drops"].as_array().unwrap().len(), 5);
}

fn zlm_example(name: &str) -> String {
    format!("{}/../../examples/zlm/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn depth_exhaustion_is_the_depth_fault_not_a_host_stack_overflow() {
    let deep = example("deep.zlt");
    let args = [
        "zlm",
        "run",
        &deep,
        "--entry",
        "Main.down",
        "--format",
        "json",
    ];
    // Within the limit the recursion completes on the sized stack.
    let mut within = args.to_vec();
    within.extend(["--max-depth", "10000", "--args", "9000"]);
    let (code, stdout, stderr) = run_irkit(&within);
    assert_eq!(code, Some(0), "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["result"], "9000");
    // Past it: the documented fault, exit 3.
    for (depth, n) in [("10000", "1000000"), ("100000000", "1000000")] {
        let mut past = args.to_vec();
        past.extend(["--max-depth", depth, "--args", n]);
        let (code, stdout, stderr) = run_irkit(&past);
        assert_eq!(code, Some(3), "--max-depth {depth}: {stderr}");
        let d: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(d["code"], "ZLM-LIMIT-DEPTH", "{stdout}");
        assert_eq!(d["kind"], "fault");
    }
}

#[test]
fn imports_must_resolve_before_a_module_runs() {
    let dir = std::env::temp_dir().join(format!("irkit-zlm-deps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shapes = dir.join("shapes.zlm");
    let stale = dir.join("stale.zlm");
    let canvas = dir.join("canvas.zlm");
    let asm = |src: &std::path::Path, out: &std::path::Path| {
        let st = irkit()
            .args(["zlm", "asm"])
            .arg(src)
            .arg("-o")
            .arg(out)
            .status()
            .unwrap();
        assert!(st.success(), "{}", src.display());
    };
    asm(zlm_example("shapes.zlt").as_ref(), &shapes);
    asm(zlm_example("canvas.zlt").as_ref(), &canvas);
    // A provider whose public interface changed: the carried digest is stale.
    let text = std::fs::read_to_string(zlm_example("shapes.zlt")).unwrap();
    let changed = dir.join("stale.zlt");
    std::fs::write(&changed, text.replace("pfield 0 radius", "pfield 0 r")).unwrap();
    asm(&changed, &stale);
    let canvas_text = zlm_example("canvas.zlt");
    for target in [canvas.to_str().unwrap(), canvas_text.as_str()] {
        let cases: [(&[&std::path::Path], &str); 2] = [
            (&[], "was not supplied"),
            (&[stale.as_path()], "stale module-interface digest"),
        ];
        for (deps, why) in cases {
            for verb in ["validate", "run"] {
                let mut cmd = irkit();
                cmd.args(["zlm", verb, target, "--format", "json"]);
                if verb == "run" {
                    cmd.args(["--entry", "Canvas.widths"]);
                }
                for d in deps {
                    cmd.arg("--dep").arg(d);
                }
                let (code, stdout, _) = common::run_command(&mut cmd);
                if verb == "validate" && !target.ends_with(".zlm") {
                    continue; // validate reads artifacts only
                }
                assert_eq!(code, Some(1), "{verb} {target}: {stdout}");
                // One diagnostic line and no result: the module never ran.
                assert_eq!(stdout.lines().count(), 1, "{verb} {target}: {stdout}");
                let d: serde_json::Value = serde_json::from_str(&stdout).unwrap();
                assert_eq!(d["code"], "ZLM-IMPORT", "{stdout}");
                assert!(d["message"].as_str().unwrap().contains(why), "{stdout}");
            }
        }
        // With its exact provider the module validates and runs.
        let (code, stdout, stderr) = run_irkit([
            "zlm",
            "run",
            target,
            "--entry",
            "Canvas.widths",
            "--dep",
            shapes.to_str().unwrap(),
        ]);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stdout, "true\n");
    }
    let st = irkit()
        .args(["zlm", "validate"])
        .arg(&canvas)
        .arg("--dep")
        .arg(&shapes)
        .status()
        .unwrap();
    assert!(st.success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--json-args`: a record moved in, a byte slice lent and handed back, a
/// Result of a record out, all in the boundary's JSON form
/// (docs/zlm/boundary.md), identical on the interpreter and the C engine.
#[test]
fn typed_boundary_arguments_and_results_in_json() {
    let args = r#"[{"version": 2, "limit": 8, "tag": [5]}, [7, 1, 2]]"#;
    for engine in ["interp", "c"] {
        let (code, stdout, stderr) = run_irkit([
            "zlm",
            "run",
            &example("boundary.zlt"),
            "--entry",
            "Main.check",
            "--json-args",
            args,
            "--drops",
            "--engine",
            engine,
        ]);
        assert_eq!(code, Some(0), "{engine}: {stderr}");
        assert_eq!(
            stdout,
            "Main.check: drop p0 : Header\nMain.check: drop p0.tag : Array<Byte>\n\
             {\"Ok\":{\"version\":2,\"length\":3,\"first\":7}}\npayload: [7,1,2]\n",
            "{engine}"
        );
        let (code, stdout, _) = run_irkit([
            "zlm",
            "run",
            &example("boundary.zlt"),
            "--entry",
            "Main.check",
            "--json-args",
            args,
            "--format",
            "json",
            "--engine",
            engine,
        ]);
        assert_eq!(code, Some(0), "{engine}");
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["value"]["Ok"]["first"], 7, "{engine}");
        assert_eq!(v["returned"]["payload"], serde_json::json!([7, 1, 2]));
        assert_eq!(v["result"], "Ok(Summary(version: 2, length: 3, first: 7))");
        assert_eq!(v["steps"], 20, "{engine}");
    }
    // An Err with a payload, identical on both engines.
    let too_long = r#"[{"version": 2, "limit": 2, "tag": []}, [7, 1, 2]]"#;
    let outs: Vec<String> = ["interp", "c"]
        .iter()
        .map(|engine| {
            let (code, stdout, _) = run_irkit([
                "zlm",
                "run",
                &example("boundary.zlt"),
                "--entry",
                "Main.check",
                "--json-args",
                too_long,
                "--format",
                "json",
                "--engine",
                engine,
            ]);
            assert_eq!(code, Some(0), "{engine}");
            stdout
        })
        .collect();
    assert_eq!(outs[0], outs[1]);
    let v: serde_json::Value = serde_json::from_str(&outs[0]).unwrap();
    assert_eq!(
        v["value"],
        serde_json::json!({"Err": {"TooLong": {"length": 3, "limit": 2}}})
    );
}

#[test]
fn typed_boundary_rejections_are_coded_and_located() {
    let run = |args: &str| {
        run_irkit([
            "zlm",
            "run",
            &example("boundary.zlt"),
            "--entry",
            "Main.check",
            "--json-args",
            args,
            "--format",
            "json",
        ])
    };
    let (code, stdout, _) = run(r#"[{"version": 2, "limit": 8, "tag": [5]}, [7, 300]]"#);
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["code"], "ZLM-ARG-RANGE");
    assert!(v["message"].as_str().unwrap().contains("$[1][1]"), "{v}");
    let (code, stdout, _) = run("[{\"version\": 2,\n  \"limit\" 8}]");
    assert_eq!(code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["code"], "ZLM-ARG-SYNTAX");
    assert_eq!(
        (v["line"].as_u64(), v["column"].as_u64()),
        (Some(2), Some(11))
    );
    // The byte limit covers the arrays the host supplies, on every engine.
    for engine in ["interp", "c"] {
        let (code, _, stderr) = run_irkit([
            "zlm",
            "run",
            &example("boundary.zlt"),
            "--entry",
            "Main.check",
            "--json-args",
            "[{\"version\": 2, \"limit\": 8, \"tag\": [1, 2]}, [1, 2]]",
            "--engine",
            engine,
            "--max-bytes",
            "3",
        ]);
        assert_eq!(code, Some(2), "{engine}");
        assert!(
            stderr.contains("over the byte limit 3"),
            "{engine}: {stderr}"
        );
    }
}

/// An instance receiver crosses as the signature says: lent shared, handed back.
#[test]
fn typed_boundary_lends_an_instance_receiver() {
    for engine in ["interp", "c"] {
        let (code, stdout, stderr) = run_irkit([
            "zlm",
            "run",
            &example("own.zlt"),
            "--entry",
            "Box.at_least",
            "--json-args",
            r#"[{"v": 5}, 3]"#,
            "--engine",
            engine,
        ]);
        assert_eq!(code, Some(0), "{engine}: {stderr}");
        assert_eq!(stdout, "true\nself: {\"v\":5}\n", "{engine}");
    }
}
