//! The naga targets: every valid module of the corpora either lowers
//! (naga's validator accepts it, every writer writes, SPIR-V passes
//! `spirv-val --target-env vulkan1.1`, GLSL ES passes `glslangValidator`)
//! or is refused with an `Unsupported*` target error; never a validation
//! or writer failure.

use std::path::{Path, PathBuf};
use vpl::VerifiedModule;
use vpl::backends::naga_targets::{self, LowerErrorKind, Target};

/// Valid modules: the examples, the built-in programs, the GLSL test
/// modules, the `ok` cases of the file corpus and the shared corpus.
fn valid_modules() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [
        root.join("../../examples/vpl"),
        root.join("programs"),
        root.join("tests/glsl"),
        root.join("tests/corpus"),
        root.join("tests/naga"),
        root.join("../../../shared/corpus/vpl-arcadia"),
    ] {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            files.extend(
                entries
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|e| e == "vpl")),
            );
        }
    }
    files.sort();
    files
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            vpl::text::read(&bytes, "x").ok()?;
            Some((p.display().to_string(), bytes))
        })
        .collect()
}

fn tool(name: &str) -> bool {
    std::process::Command::new(name)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vpl-naga-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn every_valid_module_lowers_or_is_refused_with_a_target_diagnostic() {
    let modules = valid_modules();
    assert!(modules.len() >= 10, "corpora missing: {}", modules.len());
    let spirv_val = tool("spirv-val");
    let glslang = tool("glslangValidator");
    let mut lowered = 0;
    for (name, bytes) in &modules {
        let read = vpl::text::read_verified(bytes, name).unwrap();
        let published = VerifiedModule::publish(&read).unwrap();
        for target in Target::ALL {
            match naga_targets::compile(&published, target) {
                Ok(output) => {
                    lowered += 1;
                    assert!(!output.files.is_empty());
                    let reflection: serde_json::Value =
                        serde_json::from_str(&output.reflection).unwrap();
                    assert_eq!(reflection["target"], target.name());
                    assert_eq!(reflection["entry_points"].as_array().unwrap().len(), 2);
                    // Deterministic.
                    assert_eq!(naga_targets::compile(&published, target).unwrap(), output);
                    for (ext, contents) in &output.files {
                        let path = scratch(&format!("m.{ext}"));
                        std::fs::write(&path, contents).unwrap();
                        if target == Target::Spirv && spirv_val {
                            let out = std::process::Command::new("spirv-val")
                                .args(["--target-env", "vulkan1.1"])
                                .arg(&path)
                                .output()
                                .unwrap();
                            assert!(
                                out.status.success(),
                                "{name}: spirv-val: {}",
                                String::from_utf8_lossy(&out.stderr)
                            );
                        }
                        if target == Target::GlslEs300 && glslang {
                            let stage = if ext.ends_with("vert") {
                                "vert"
                            } else {
                                "frag"
                            };
                            let out = std::process::Command::new("glslangValidator")
                                .args(["-S", stage])
                                .arg(&path)
                                .output()
                                .unwrap();
                            assert!(
                                out.status.success(),
                                "{name}: glslangValidator: {}\n{}",
                                String::from_utf8_lossy(&out.stdout),
                                String::from_utf8_lossy(contents)
                            );
                        }
                    }
                }
                Err(e) => assert!(
                    matches!(
                        e.kind,
                        LowerErrorKind::UnsupportedType
                            | LowerErrorKind::UnsupportedUniform
                            | LowerErrorKind::UnsupportedInstruction
                            | LowerErrorKind::UnsupportedInterface
                    ),
                    "{name} for {}: {e}",
                    target.name()
                ),
            }
        }
    }
    assert!(lowered >= 5 * 8, "only {lowered} lowerings succeeded");
}

#[test]
fn unsupported_constructs_are_refused_with_a_position() {
    let published = vpl::programs::create(vpl::programs::Program::MeshAmbientColor).unwrap();
    let e = naga_targets::compile(&published, Target::Wgsl).unwrap_err();
    assert_eq!(e.kind, LowerErrorKind::UnsupportedUniform);
    assert_eq!(e.kind.code(), "naga-unsupported-uniform");
    assert!(e.span.is_some());
}

mod robustness {
    //! Mutated valid modules: lowering never panics, and whatever reads
    //! either lowers for every target (naga's validator accepting it) or is
    //! refused with an `Unsupported*` target error.

    use super::*;
    use proptest::prelude::*;

    const SOURCES: [&str; 3] = [
        include_str!("naga/subset.vpl"),
        include_str!("../../../examples/vpl/loop_call.vpl"),
        include_str!("../../../examples/vpl/minimal.vpl"),
    ];

    const WORDS: [&str; 12] = [
        "-1", "0", "1", "2", "3", "int", "float", "bool", "none", "position", "r0", "r1",
    ];

    fn words(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in text.char_indices() {
            let boundary = c.is_whitespace() || matches!(c, '(' | ')' | '"');
            match (start, boundary) {
                (None, false) => start = Some(i),
                (Some(s), true) => {
                    out.push((s, i));
                    start = None;
                }
                _ => {}
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]
        #[test]
        fn mutated_modules_never_break_the_lowering(
            source in 0..SOURCES.len(),
            edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0..WORDS.len()), 1..4),
        ) {
            let mut text = SOURCES[source].to_string();
            for (at, word) in edits {
                let spans = words(&text);
                let (s, e) = spans[at.index(spans.len())];
                text.replace_range(s..e, WORDS[word]);
            }
            let Ok(read) = vpl::text::read_verified(text.as_bytes(), "mutated.vpl") else {
                return Ok(());
            };
            let published = VerifiedModule::publish(&read).unwrap();
            for target in [Target::Spirv, Target::Wgsl] {
                match naga_targets::compile(&published, target) {
                    Ok(a) => prop_assert_eq!(naga_targets::compile(&published, target).unwrap(), a),
                    Err(e) => prop_assert!(
                        matches!(
                            e.kind,
                            LowerErrorKind::UnsupportedType
                                | LowerErrorKind::UnsupportedUniform
                                | LowerErrorKind::UnsupportedInstruction
                                | LowerErrorKind::UnsupportedInterface
                        ),
                        "{}\n{}", e, text
                    ),
                }
            }
        }
    }
}
