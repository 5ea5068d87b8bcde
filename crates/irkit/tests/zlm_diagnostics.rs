//! `irkit zlm`: hand-written `.zlt` mistakes read in the text form's own terms, at the user's
//! line and column: syntax, type, shape, operand and ownership errors at `asm` time (through the
//! text's positions; a leak at the operation taking the exit edge, a double drop at its recipe),
//! the same rejection of an unchecked `.zlm` through its embedded source map, faults in words,
//! field names instead of hashes, values in constructor notation (`Box(v: 5)`). The transcript is a golden file
//! (`tests/golden/zlm-diagnostics.txt`, `IRKIT_BLESS=1` rewrites it). A property test feeds
//! mutated text and bytes and checks that no message carries Rust `Debug` text or a hash the
//! input did not spell.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn example(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/zlm/run")
        .join(name);
    std::fs::read_to_string(path).expect("example readable")
}

/// A scratch directory unique to this process and `tag`.
fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("irkit-zlm-golden-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `irkit zlm ARGS` in `dir`, so labels are the relative names given.
fn zlm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irkit"))
        .arg("zlm")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("irkit runs")
}

/// `source` with `from` replaced once by `to` (the mistake must apply).
fn mistake(source: &str, from: &str, to: &str) -> String {
    let changed = source.replacen(from, to, 1);
    assert_ne!(changed, source, "{from:?} not found");
    changed
}

/// One hand-written mistake: a file name, its text, a command that must
/// succeed first (empty for none), and the command whose diagnostics show it.
struct Mistake {
    name: &'static str,
    source: String,
    prepare: Vec<&'static str>,
    args: Vec<&'static str>,
}

impl Mistake {
    fn new(name: &'static str, source: String, args: Vec<&'static str>) -> Mistake {
        Mistake {
            name,
            source,
            prepare: Vec::new(),
            args,
        }
    }
}

/// The line of `source` (1-based) that starts with `start`, the `n`th such (from 1).
fn line_of(source: &str, start: &str, n: usize) -> u64 {
    let found = source
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with(start))
        .nth(n - 1)
        .unwrap_or_else(|| panic!("{start:?} #{n} not in the source"));
    1 + found.0 as u64
}

const LEAK_LINE: &str = "      place_drop - $l0 | path:l0 -\n";

/// drops.zlt without `field_replace`'s one recipe: `$l0` leaks at its return.
fn leaked() -> String {
    mistake(&example("drops.zlt"), LEAK_LINE, "")
}

/// drops.zlt with `field_replace`'s recipe written twice: a double drop.
fn dropped_twice() -> String {
    mistake(
        &example("drops.zlt"),
        LEAK_LINE,
        &format!("{LEAK_LINE}{LEAK_LINE}"),
    )
}

/// The hand-written mistakes, in the golden file's order.
fn mistakes() -> Vec<Mistake> {
    let faults = example("faults.zlt");
    let loop_ = example("loop.zlt");
    vec![
        Mistake::new(
            "e_syntax.zlt",
            mistake(
                &faults,
                "      div Int32 %0.0 %0.1",
                "      dvi Int32 %0.0 %0.1",
            ),
            vec!["asm", "e_syntax.zlt", "-o", "out.zlm"],
        ),
        Mistake::new(
            "e_type.zlt",
            mistake(
                &faults,
                "      add Int32 %0.0 %0.1",
                "      add Int64 %0.0 %0.1",
            ),
            vec!["asm", "e_type.zlt", "-o", "out.zlm"],
        ),
        Mistake::new(
            "e_operand.zlt",
            mistake(
                &faults,
                "      return - %0.2 | - -",
                "      return - %0.7 | - -",
            ),
            vec!["asm", "e_operand.zlt", "-o", "out.zlm"],
        ),
        Mistake::new(
            "e_leak.zlt",
            leaked(),
            vec!["asm", "e_leak.zlt", "-o", "out.zlm"],
        ),
        Mistake::new(
            "e_double_drop.zlt",
            dropped_twice(),
            vec!["validate", "e_double_drop.zlt"],
        ),
        // The same double drop assembled unchecked: the artifact's source map
        // points the rejection at the text's line.
        Mistake {
            name: "e_mapped.zlt",
            source: dropped_twice(),
            prepare: vec!["asm", "--no-check", "e_mapped.zlt", "-o", "e_mapped.zlm"],
            args: vec!["validate", "e_mapped.zlm"],
        },
        Mistake::new(
            "e_entry.zlt",
            loop_.clone(),
            vec!["run", "e_entry.zlt", "--entry", "Main.smu", "--args", "3"],
        ),
        Mistake::new(
            "e_contract.zlt",
            loop_,
            vec![
                "run",
                "e_contract.zlt",
                "--entry",
                "Main.sum",
                "--args",
                "-1",
            ],
        ),
        Mistake::new(
            "e_div.zlt",
            faults,
            vec![
                "run",
                "e_div.zlt",
                "--entry",
                "Main.div",
                "--args",
                "7",
                "0",
            ],
        ),
    ]
}

/// No Rust `Debug` text in `message`, and no 64-hex hash unless `input` spelt it.
fn reads_as_the_text_form(message: &str, input: &str) -> Result<(), String> {
    for needle in ["{ ", "Some(", "None", "Local(", "Flow", "Recipe {"] {
        if message.contains(needle) && !input.contains(needle) {
            return Err(format!("{needle:?} in {message}"));
        }
    }
    let hex: Vec<char> = message.chars().collect();
    let mut run = 0usize;
    for (i, c) in hex.iter().enumerate() {
        run = if c.is_ascii_hexdigit() { run + 1 } else { 0 };
        if run == 64 {
            let hash: String = hex[i + 1 - 64..=i].iter().collect();
            if !input.contains(&hash) {
                return Err(format!("hash {hash} in {message}"));
            }
        }
    }
    Ok(())
}

#[test]
fn the_mistakes_read_as_the_golden_file() {
    let dir = scratch_dir("golden");
    let mut transcript = String::new();
    for Mistake {
        name,
        source,
        prepare,
        args,
    } in mistakes()
    {
        std::fs::write(dir.join(name), &source).unwrap();
        if !prepare.is_empty() {
            let run = zlm(&dir, &prepare);
            assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
            transcript.push_str(&format!("$ irkit zlm {}\nexit 0\n\n", prepare.join(" ")));
        }
        let run = zlm(&dir, &args);
        let stderr = text(&run.stderr);
        reads_as_the_text_form(&stderr, &source).unwrap();
        assert_ne!(run.status.code(), Some(0), "{name}: {stderr}");
        transcript.push_str(&format!(
            "$ irkit zlm {}\n{}exit {}\n\n",
            args.join(" "),
            stderr,
            run.status.code().unwrap_or(-1)
        ));
    }
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/zlm-diagnostics.txt");
    golden::assert_text(&golden, &transcript, "irkit zlm diagnostics");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The JSON diagnostic of `args` run on `name` holding `source`.
fn json_diagnostic(dir: &Path, name: &str, source: &str, args: &[&str]) -> serde_json::Value {
    std::fs::write(dir.join(name), source).unwrap();
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let run = zlm(dir, &all);
    let stdout = text(&run.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    serde_json::from_str(first).unwrap_or_else(|e| panic!("{e}: {stdout}{}", text(&run.stderr)))
}

#[test]
fn type_and_ownership_errors_in_text_have_their_line_and_column() {
    let dir = scratch_dir("lines");
    let faults = example("faults.zlt");
    let typed = mistake(
        &faults,
        "      add Int32 %0.0 %0.1",
        "      add Int64 %0.0 %0.1",
    );
    let d = json_diagnostic(&dir, "t.zlt", &typed, &["asm", "t.zlt", "-o", "t.zlm"]);
    assert_eq!(d["code"], "ZLM-SHAPE", "{d}");
    assert_eq!(d["kind"], "semantic", "{d}");
    assert_eq!(
        d["line"],
        line_of(&typed, "      add Int64 %0.0 %0.1", 1),
        "{d}"
    );
    assert_eq!(d["column"], 7, "{d}");
    assert!(!dir.join("t.zlm").exists());

    // An operand naming no operation: at the operation using it, and about
    // what the text means (no bytes were decoded).
    let operand = mistake(
        &faults,
        "      return - %0.2 | - -",
        "      return - %0.7 | - -",
    );
    let d = json_diagnostic(&dir, "o.zlt", &operand, &["asm", "o.zlt", "-o", "o.zlm"]);
    assert_eq!(d["code"], "ZLM-REF", "{d}");
    assert_eq!(d["kind"], "semantic", "{d}");
    assert_eq!(
        d["line"],
        line_of(&operand, "      return - %0.7", 1),
        "{d}"
    );
    assert_eq!(d["column"], 7, "{d}");

    // A leak: at the return whose exit edge leaves the owner alive.
    let leak = leaked();
    let d = json_diagnostic(&dir, "l.zlt", &leak, &["validate", "l.zlt"]);
    assert_eq!(d["code"], "ZLM-C-CLEANUP", "{d}");
    let field_replace = line_of(&leak, "  func message type field_replace", 1);
    let ret = leak
        .lines()
        .enumerate()
        .skip(field_replace as usize)
        .find(|(_, l)| l.starts_with("      return - "))
        .map(|(i, _)| 1 + i as u64)
        .unwrap();
    assert_eq!(d["line"], ret, "{d}");
    assert_eq!(d["column"], 7, "{d}");
    let message = d["message"].as_str().unwrap();
    assert!(
        message.contains("cleanup edge 0 (return) leaves live owners [$l0]"),
        "{message}"
    );

    // A double drop: at the second `place_drop`, the recipe that fails.
    let twice = dropped_twice();
    let d = json_diagnostic(&dir, "d.zlt", &twice, &["validate", "d.zlt"]);
    assert_eq!(d["code"], "ZLM-C-CLEANUP", "{d}");
    assert_eq!(d["line"], line_of(&twice, LEAK_LINE.trim_end(), 2), "{d}");
    assert_eq!(d["column"], 7, "{d}");
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("recipe %r0.1: drops $l0"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_artifact_rejection_is_located_through_its_source_map() {
    let dir = scratch_dir("mapped");
    let twice = dropped_twice();
    std::fs::write(dir.join("m.zlt"), &twice).unwrap();
    let asm = zlm(&dir, &["asm", "--no-check", "m.zlt", "-o", "m.zlm"]);
    assert_eq!(asm.status.code(), Some(0), "{}", text(&asm.stderr));
    let line = line_of(&twice, LEAK_LINE.trim_end(), 2);
    for verb in ["validate", "dis", "ids", "address"] {
        let run = zlm(&dir, &[verb, "m.zlm", "--format", "json"]);
        assert_eq!(run.status.code(), Some(1), "{verb}: {}", text(&run.stderr));
        let stdout = text(&run.stdout);
        let d: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
        assert_eq!(d["code"], "ZLM-C-CLEANUP", "{verb}: {d}");
        assert_eq!(d["kind"], "semantic", "{verb}: {d}");
        assert_eq!(d["label"], "m.zlt", "{verb}: {d}");
        assert_eq!(d["line"], line, "{verb}: {d}");
        assert_eq!(d["column"], 7, "{verb}: {d}");
    }
    // Without the map (the payload alone) the rejection is about the bytes.
    let asm = zlm(
        &dir,
        &[
            "asm",
            "--no-check",
            "--no-ancillary",
            "m.zlt",
            "-o",
            "bare.zlm",
        ],
    );
    assert_eq!(asm.status.code(), Some(0), "{}", text(&asm.stderr));
    let d = json_diagnostic(&dir, "m.zlt", &twice, &["validate", "bare.zlm"]);
    assert_eq!(d["label"], "bare.zlm", "{d}");
    assert!(d["line"].is_null(), "{d}");
    // The source file gone: still its line and column, without the snippet.
    std::fs::remove_file(dir.join("m.zlt")).unwrap();
    let run = zlm(&dir, &["validate", "m.zlm"]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(&format!("--> m.zlt:{line}:7")), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_json_names_a_record_type_and_a_fault_in_words() {
    let dir = scratch_dir("names");
    std::fs::write(dir.join("drops.zlt"), example("drops.zlt")).unwrap();
    let run = zlm(
        &dir,
        &[
            "run",
            "drops.zlt",
            "--entry",
            "Box.make",
            "--args",
            "5",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    let v: serde_json::Value = serde_json::from_str(text(&run.stdout).trim()).unwrap();
    assert_eq!(v["type"], "Box", "{v}");
    assert_eq!(v["result"], "Box(v: 5)", "{v}");
    let human = zlm(
        &dir,
        &["run", "drops.zlt", "--entry", "Box.make", "--args", "5"],
    );
    assert_eq!(text(&human.stdout), "Box(v: 5)\n");

    std::fs::write(dir.join("faults.zlt"), example("faults.zlt")).unwrap();
    let args = [
        "run",
        "faults.zlt",
        "--entry",
        "Main.add",
        "--args",
        "2147483647",
        "1",
    ];
    let d = json_diagnostic(&dir, "faults.zlt", &example("faults.zlt"), &args);
    assert_eq!(d["code"], "ZLM-FAULT-OVERFLOW", "{d}");
    let message = d["message"].as_str().unwrap();
    assert!(message.contains(": arithmetic overflow"), "{message}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One mutation of `source`: `kind` picks deleting a line, duplicating it, swapping it with the
/// next, replacing one of its words by another word of the file, or inserting a character.
fn mutate(source: &str, kind: u8, at: usize, other: usize, ch: char) -> String {
    let mut lines: Vec<String> = source.lines().map(str::to_string).collect();
    let i = at % lines.len();
    match kind % 5 {
        0 => {
            lines.remove(i);
        }
        1 => {
            let copy = lines[i].clone();
            lines.insert(i, copy);
        }
        2 => {
            let j = (i + 1) % lines.len();
            lines.swap(i, j);
        }
        3 => {
            let words: Vec<&str> = source.split_whitespace().collect();
            let replacement = words[other % words.len()];
            let mut line_words: Vec<&str> = lines[i].split(' ').collect();
            let k = other % line_words.len();
            line_words[k] = replacement;
            lines[i] = line_words.join(" ");
        }
        _ => {
            let chars: Vec<char> = lines[i].chars().collect();
            let k = other % (chars.len() + 1);
            let mut s: String = chars[..k].iter().collect();
            s.push(ch);
            s.extend(&chars[k..]);
            lines[i] = s;
        }
    }
    lines.join("\n") + "\n"
}

/// Runs `zlm validate` on `bytes` written to `name`: never a crash, and any message reads as the
/// text form.
fn validate_reads_well(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    input: &str,
) -> Result<(), TestCaseError> {
    std::fs::write(dir.join(name), bytes).unwrap();
    let run = zlm(dir, &["validate", name]);
    let code = run.status.code();
    prop_assert!(
        matches!(code, Some(0..=2)),
        "exit {code:?}: {}",
        text(&run.stderr)
    );
    if let Err(e) = reads_as_the_text_form(&text(&run.stderr), input) {
        return Err(TestCaseError::fail(e));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mutated_text_reads_as_the_text_form(
        file in 0usize..4,
        kind in any::<u8>(),
        at in any::<usize>(),
        other in any::<usize>(),
        ch in prop::sample::select(vec!['%', '$', '@', '.', ':', '|', '0', '9', 'x', ' ', '<', '{']),
    ) {
        let names = ["faults.zlt", "drops.zlt", "loop.zlt", "own.zlt"];
        let mutated = mutate(&example(names[file]), kind, at, other, ch);
        let dir = scratch_dir("prop-text");
        validate_reads_well(&dir, "m.zlt", mutated.as_bytes(), &mutated)?;
    }

    #[test]
    fn mutated_bytes_read_as_the_text_form(
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4),
    ) {
        let dir = scratch_dir("prop-bytes");
        std::fs::write(dir.join("drops.zlt"), example("drops.zlt")).unwrap();
        let asm = zlm(&dir, &["asm", "drops.zlt", "--no-ancillary", "-o", "drops.zlm"]);
        prop_assert_eq!(asm.status.code(), Some(0), "{}", text(&asm.stderr));
        let mut bytes = std::fs::read(dir.join("drops.zlm")).unwrap();
        for (at, value) in flips {
            let i = at % bytes.len();
            bytes[i] ^= value | 1;
        }
        validate_reads_well(&dir, "m.zlm", &bytes, "")?;
    }
}
