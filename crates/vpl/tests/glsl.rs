//! GLSL backend goldens (spec section 12): the four built-in programs, the
//! three example kinds and the general fixture are compiled, compared with
//! the reviewed files under `tests/glsl/` (vertex, fragment, reflection),
//! and every emitted shader is checked by the reference compiler
//! `glslangValidator -S vert|frag` (4.20 core rules).
//!
//! Regenerate after a reviewed change with `IRKIT_BLESS=1 cargo test -p vpl --test all -- glsl::`.

use std::path::{Path, PathBuf};
use std::process::Command;
use vpl::VerifiedModule;
use vpl::backends::glsl::{self, ProgramArtifact, VERSION_420};
use vpl::programs::{self, Program};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// Runs glslangValidator on one shader; panics with its output on failure.
pub fn glslang(code: &str, stage: &str, what: &str) {
    let dir = std::env::temp_dir().join(format!("vpl-glslang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{}.{stage}", what.replace(['/', ' '], "_")));
    std::fs::write(&file, code).unwrap();
    let output = Command::new("glslangValidator")
        .arg("-S")
        .arg(stage)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run glslangValidator (Debian package glslang-tools): {e}")
        });
    let _ = std::fs::remove_file(&file);
    assert!(
        output.status.success(),
        "glslangValidator rejected {what} ({stage}):\n{}\n{}\n--- code ---\n{code}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn check_golden(name: &str, artifact: &ProgramArtifact) {
    glslang(artifact.vertex_code(), "vert", name);
    glslang(artifact.fragment_code(), "frag", name);
    let dir = root().join("tests/glsl");
    for (ext, actual) in [
        ("vert", artifact.vertex_code().to_string()),
        ("frag", artifact.fragment_code().to_string()),
        ("reflect.json", artifact.reflection_json()),
    ] {
        let path = dir.join(format!("{name}.{ext}"));
        golden::assert_text(&path, &actual, name);
    }
}

fn compile_file(path: &Path) -> ProgramArtifact {
    let bytes = std::fs::read(path).unwrap();
    let module = vpl::text::read(&bytes, &path.display().to_string()).unwrap();
    let published = VerifiedModule::new(&module).unwrap();
    glsl::compile(&published, VERSION_420).unwrap()
}

#[test]
fn builtin_programs_match_goldens() {
    for program in Program::ALL {
        let published = programs::create(program).unwrap();
        let artifact = glsl::compile(&published, VERSION_420).unwrap();
        check_golden(program.name(), &artifact);
        // The embedded program equals its independently parsed source file.
        let file = root().join("programs").join(program.file_name());
        assert_eq!(compile_file(&file), artifact);
    }
}

#[test]
fn examples_match_goldens() {
    for name in ["minimal", "loop_call", "nested_storage"] {
        let path = root()
            .join("../../examples/vpl")
            .join(format!("{name}.vpl"));
        check_golden(name, &compile_file(&path));
    }
}

#[test]
fn fixtures_match_goldens() {
    for name in ["general", "locations", "std140"] {
        let path = root().join("tests/glsl").join(format!("{name}.vpl"));
        check_golden(name, &compile_file(&path));
    }
}

#[test]
fn compilation_is_deterministic_and_independent_of_the_source_module() {
    let published = programs::create(Program::TextureVertexAmbientColor).unwrap();
    let a = glsl::compile(&published, VERSION_420).unwrap();
    let b = glsl::compile(&published.clone(), VERSION_420).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.reflection_json(), b.reflection_json());
}

#[test]
fn only_version_420_is_implemented() {
    let published = programs::create(Program::MeshAmbientColor).unwrap();
    for version in [0, 330, 410, 430, 460] {
        match glsl::compile(&published, version) {
            Err(glsl::CompileError::Target(e)) => {
                assert_eq!(e.kind, glsl::TargetErrorKind::UnsupportedVersion)
            }
            other => panic!("version {version}: {other:?}"),
        }
    }
}

mod robustness {
    //! Mutated valid modules either compile deterministically or fail with
    //! a target error; the backend never panics, and `check_target` on the
    //! module as read agrees with `compile` on its publication.

    use super::*;
    use proptest::prelude::*;

    const SOURCES: [&str; 5] = [
        include_str!("glsl/general.vpl"),
        include_str!("glsl/locations.vpl"),
        include_str!("glsl/std140.vpl"),
        include_str!("../programs/texture-vertex-ambient-color.vpl"),
        include_str!("../../../examples/vpl/loop_call.vpl"),
    ];

    const WORDS: [&str; 14] = [
        "-1",
        "0",
        "1",
        "2",
        "3",
        "7",
        "16",
        "2147483647",
        "-2147483648",
        "int",
        "float",
        "bool",
        "sampler2D",
        "none",
    ];

    /// Byte ranges of the words (maximal runs outside whitespace, parentheses
    /// and quotes) of `text`.
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
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
        #[test]
        fn mutated_modules_never_panic_the_backend(
            source in 0..SOURCES.len(),
            edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0..WORDS.len()), 1..4),
        ) {
            let mut text = SOURCES[source].to_string();
            for (at, word) in edits {
                let spans = words(&text);
                let (s, e) = spans[at.index(spans.len())];
                text.replace_range(s..e, WORDS[word]);
            }
            let Ok(module) = vpl::text::read(text.as_bytes(), "mutated.vpl") else {
                return Ok(());
            };
            let checked = glsl::check_target(&module);
            let Ok(published) = VerifiedModule::new(&module) else {
                return Ok(());
            };
            let compiled = glsl::compile(&published, VERSION_420);
            match (&checked, &compiled) {
                (Ok(()), Ok(a)) => {
                    let again = glsl::compile(&published, VERSION_420).unwrap();
                    prop_assert_eq!(a, &again);
                    prop_assert_eq!(a.reflection_json(), again.reflection_json());
                }
                (Err(c), Err(glsl::CompileError::Target(t))) => {
                    prop_assert_eq!(c.kind, t.kind);
                    // Positions in the snapshot map to those in the text read.
                    let mapped = t.span.and_then(|s| published.source_span(&module, s));
                    prop_assert_eq!(mapped, c.span, "{}", t);
                }
                other => prop_assert!(false, "check_target and compile disagree: {other:?}"),
            }
        }
    }
}

#[test]
fn compile_module_equals_compile_on_a_materialized_module() {
    for program in Program::ALL {
        let published = programs::create(program).unwrap();
        let materialized = published.materialize().unwrap();
        assert_eq!(
            glsl::compile_module(&materialized, VERSION_420).unwrap(),
            glsl::compile(&published, VERSION_420).unwrap()
        );
    }
    let mut broken = programs::create(Program::MeshAmbientColor)
        .unwrap()
        .materialize()
        .unwrap();
    broken.fragment.entry = None;
    assert!(matches!(
        glsl::compile_module(&broken, VERSION_420),
        Err(glsl::CompileError::Verify(_))
    ));
}
