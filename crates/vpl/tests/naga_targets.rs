//! The naga targets: every valid module of the corpora that the GLSL 4.20
//! backend accepts lowers for every naga target (naga's validator accepts
//! it, every writer writes, SPIR-V passes `spirv-val --target-env
//! vulkan1.1`, GLSL ES passes `glslangValidator` as ES 3.00, the WGSL is
//! read back and validated by naga with the same uniform layouts); what
//! GLSL 4.20 refuses is refused with the same code. Never a validation or
//! writer failure.

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
        root.join("tests/verify/valid"),
        root.join("../vpl_gl/tests/fixtures"),
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

/// Whether `e` is a target diagnostic (not a lowering defect).
fn is_target_diagnostic(e: &naga_targets::LowerError) -> bool {
    matches!(
        e.kind,
        LowerErrorKind::UnsupportedType
            | LowerErrorKind::UnsupportedUniform
            | LowerErrorKind::UnsupportedInstruction
            | LowerErrorKind::UnsupportedInterface
            | LowerErrorKind::Restriction(_)
    )
}

/// Compares the layout of two naga types (offsets, spans, strides),
/// ignoring names.
fn same_layout(
    a: &naga::Module,
    at: naga::Handle<naga::Type>,
    b: &naga::Module,
    bt: naga::Handle<naga::Type>,
) -> Result<(), String> {
    use naga::TypeInner as T;
    match (&a.types[at].inner, &b.types[bt].inner) {
        (
            T::Struct {
                members: ma,
                span: sa,
            },
            T::Struct {
                members: mb,
                span: sb,
            },
        ) => {
            if sa != sb || ma.len() != mb.len() {
                return Err(format!(
                    "struct span {sa} vs {sb}, {} vs {} members",
                    ma.len(),
                    mb.len()
                ));
            }
            for (x, y) in ma.iter().zip(mb) {
                if x.offset != y.offset {
                    return Err(format!(
                        "member {:?} at {} vs {}",
                        x.name, x.offset, y.offset
                    ));
                }
                same_layout(a, x.ty, b, y.ty)?;
            }
            Ok(())
        }
        (
            T::Array {
                base: ba,
                size: za,
                stride: sa,
            },
            T::Array {
                base: bb,
                size: zb,
                stride: sb,
            },
        ) => {
            if sa != sb || za != zb {
                return Err(format!("array stride {sa} vs {sb}"));
            }
            same_layout(a, *ba, b, *bb)
        }
        (x, y) if x == y => Ok(()),
        (x, y) => Err(format!("{x:?} vs {y:?}")),
    }
}

/// Reads the WGSL back with naga, validates it and checks that every
/// uniform buffer has the layout of the lowered module.
fn reread_wgsl(name: &str, published: &VerifiedModule, text: &str) {
    let reread = naga::front::wgsl::parse_str(text)
        .unwrap_or_else(|e| panic!("{name}: WGSL does not read back: {e}\n{text}"));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::empty(),
    )
    .validate(&reread)
    .unwrap_or_else(|e| panic!("{name}: re-read WGSL invalid: {e:?}\n{text}"));
    let lowered = naga_targets::lower(published).unwrap();
    for (_, g) in lowered.module.global_variables.iter() {
        if g.space != naga::AddressSpace::Uniform {
            continue;
        }
        let (_, other) = reread
            .global_variables
            .iter()
            .find(|(_, o)| o.binding == g.binding)
            .unwrap_or_else(|| panic!("{name}: uniform {:?} lost in WGSL", g.name));
        if let Err(e) = same_layout(&lowered.module, g.ty, &reread, other.ty) {
            panic!("{name}: WGSL layout of {:?} differs: {e}\n{text}", g.name);
        }
    }
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
        let glsl = vpl::backends::glsl::compile(&published, vpl::backends::glsl::VERSION_420);
        for target in Target::ALL {
            let result = naga_targets::compile(&published, target);
            match (&glsl, &result) {
                (Ok(_), Err(e)) => panic!(
                    "{name}: GLSL 4.20 accepts it, {} refuses it: {e}",
                    target.name()
                ),
                (Err(vpl::backends::glsl::CompileError::Target(g)), Err(e)) => assert_eq!(
                    e.kind.code(),
                    g.kind.code(),
                    "{name}: GLSL 4.20 and {} refuse it differently",
                    target.name()
                ),
                (Err(g), Ok(_)) => panic!(
                    "{name}: GLSL 4.20 refuses it ({g}), {} accepts it",
                    target.name()
                ),
                _ => {}
            }
            match result {
                Ok(output) => {
                    lowered += 1;
                    if target == Target::Wgsl {
                        reread_wgsl(
                            name,
                            &published,
                            std::str::from_utf8(&output.files[0].1).unwrap(),
                        );
                    }
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
                    is_target_diagnostic(&e),
                    "{name} for {}: {e}",
                    target.name()
                ),
            }
        }
    }
    assert!(lowered >= 5 * 30, "only {lowered} lowerings succeeded");
}

#[test]
fn glsl_restrictions_are_refused_with_their_code_and_a_position() {
    // An empty record (section 12.4) in a used register.
    let text = include_str!("../../../examples/vpl/minimal.vpl").replace(
        "(type Vec4 vector float 4))",
        "(type Vec4 vector float 4) (type Empty record \"E\"))",
    );
    let text = text.replacen(
        "(registers (register r0 Vec4))",
        "(registers (register r0 Vec4) (register r1 Empty))",
        1,
    );
    assert!(
        text.contains("(register r1 Empty)"),
        "the example changed shape"
    );
    let read = vpl::text::read_verified(text.as_bytes(), "empty.vpl").unwrap();
    let published = VerifiedModule::publish(&read).unwrap();
    for target in Target::ALL {
        let e = naga_targets::compile(&published, target).unwrap_err();
        assert_eq!(e.kind.code(), "empty-record");
        assert!(e.span.is_some());
    }
}

fn reflection(program: vpl::programs::Program, target: Target) -> serde_json::Value {
    let published = vpl::programs::create(program).unwrap();
    let output = naga_targets::compile(&published, target).unwrap();
    serde_json::from_str(&output.reflection).unwrap()
}

#[test]
fn uniform_buffers_are_std140_and_bound_alike_on_every_target() {
    use vpl::programs::Program;
    for target in Target::ALL {
        let r = reflection(Program::MeshAmbientColor, target);
        let material = &r["resources"][0];
        assert_eq!(material["name"], "material");
        assert_eq!(material["kind"], "uniform_buffer");
        assert_eq!(
            (material["group"].as_u64(), material["binding"].as_u64()),
            (Some(0), Some(0))
        );
        // Material { ambient_color: vec4, intensity: float }: std140, 32 bytes.
        assert_eq!(material["size"], 32);
        let fields = material["layout"]["fields"].as_array().unwrap();
        assert_eq!(fields[0]["layout"]["offset"], 0);
        assert_eq!(fields[1]["layout"]["offset"], 16);
        assert_eq!(fields[1]["layout"]["type"], "float");
    }
    let hlsl = reflection(Program::MeshAmbientColor, Target::Hlsl);
    assert_eq!(hlsl["resources"][0]["register"], "b0");
    let es = reflection(Program::MeshAmbientColor, Target::GlslEs300);
    let names = &es["resources"][0]["glsl_names"];
    assert!(names["fragment"].is_string(), "{es}");
}

#[test]
fn a_sampler_uniform_is_a_texture_and_sampler_pair() {
    use vpl::programs::Program;
    for target in Target::ALL {
        let r = reflection(Program::TextureAmbientColor, target);
        let resources = r["resources"].as_array().unwrap();
        assert_eq!(resources.len(), 2, "{r}");
        assert_eq!(resources[0]["kind"], "texture");
        assert_eq!(resources[0]["binding"], 0);
        assert_eq!(resources[0]["sampler_binding"], 1);
        assert_eq!(resources[1]["kind"], "sampler");
        assert_eq!(resources[1]["binding"], 1);
        assert_eq!(resources[1]["name"], "texture");
    }
    // GLSL ES combines them into one sampler2D, named for the host.
    let es = reflection(Program::TextureAmbientColor, Target::GlslEs300);
    let name = es["resources"][0]["glsl_names"]["fragment"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(es["resources"][1]["glsl_names"]["fragment"], name.as_str());
    assert_eq!(
        es["resources"][0]["glsl_names"]["vertex"],
        serde_json::Value::Null
    );
    let published = vpl::programs::create(Program::TextureAmbientColor).unwrap();
    let output = naga_targets::compile(&published, Target::GlslEs300).unwrap();
    let frag = String::from_utf8(output.files[1].1.clone()).unwrap();
    assert!(frag.contains(&format!("sampler2D {name};")), "{frag}");
    assert!(frag.starts_with("#version 300 es"), "{frag}");
}

mod robustness {
    //! Mutated valid modules: lowering never panics, and whatever reads
    //! either lowers for every target (naga's validator accepting it) or is
    //! refused with an `Unsupported*` target error.

    use super::*;
    use proptest::prelude::*;

    const SOURCES: [&str; 6] = [
        include_str!("naga/subset.vpl"),
        include_str!("glsl/general.vpl"),
        include_str!("../programs/texture-vertex-ambient-color.vpl"),
        include_str!("../../vpl_gl/tests/fixtures/sampler_wrap.vpl"),
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
                    Err(e) => prop_assert!(is_target_diagnostic(&e), "{}\n{}", e, text),
                }
            }
        }
    }
}

/// MSL and HLSL have no compiler here: their output (and every other
/// target's, with the reflection) is compared with reviewed goldens in
/// `tests/naga/golden/`. Regenerate after a reviewed change with
/// `IRKIT_BLESS=1 cargo test -p vpl --test all -- naga_targets::`.
#[test]
fn outputs_equal_the_goldens() {
    use vpl::programs::Program;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/naga/golden");
    let general = {
        let bytes = include_bytes!("glsl/general.vpl");
        let read = vpl::text::read_verified(bytes, "general.vpl").unwrap();
        VerifiedModule::publish(&read).unwrap()
    };
    let modules = [
        (
            "mesh-ambient-color",
            vpl::programs::create(Program::MeshAmbientColor).unwrap(),
        ),
        (
            "texture-ambient-color",
            vpl::programs::create(Program::TextureAmbientColor).unwrap(),
        ),
        ("general", general),
    ];
    for (name, published) in &modules {
        for target in [Target::Msl, Target::Hlsl, Target::Wgsl, Target::GlslEs300] {
            let output = naga_targets::compile(published, target).unwrap();
            let mut files = output.files.clone();
            files.push((
                format!("{}.reflect.json", target.name()),
                output.reflection.into_bytes(),
            ));
            for (ext, actual) in files {
                let path = dir.join(format!("{name}.{ext}"));
                if let Err(e) = golden::check_bytes(&path, &actual) {
                    panic!("{e}");
                }
            }
        }
    }
}

/// The deepest parenthesis nesting of `text`.
fn nesting(text: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Registers live as naga expressions within their block: a long chain of
/// single-use values is named every few links, so no writer nests (and
/// recurses) beyond a bound; a value computed from constants alone stays a
/// run-time value (an out-of-range index through a register is valid VPL,
/// undefined at run time, not a constant-expression error).
#[test]
fn long_chains_stay_shallow_and_constant_values_stay_run_time() {
    let mut chain = String::new();
    for i in 0..4000 {
        chain.push_str(&format!("          (add r0 r0 (float {}.5))\n", i % 7));
    }
    let text = format!(
        r#"(module 1
  (types
    (type t0 void)
    (type t1 float)
    (type t2 int)
    (type t3 vector float 4)
    (type t4 array t1 3))
  (uniforms)
  (vertex f0
    (interface
      (out s0 "p" t3 -1 position))
    (functions
      (function f0 "v" t0
        (parameters)
        (registers
          (register r0 t3))
        (block b0
          (construct r0 (float 1.0))
          (store (stage s0) r0)
          (return)))))
  (fragment f0
    (interface
      (out s0 "c" t3 0 fragment_color))
    (functions
      (function f0 "main" t0
        (parameters)
        (registers
          (register r0 t1)
          (register r1 t2)
          (register r2 t4)
          (register r3 t3))
        (block b0
          (copy r0 (float 0.0))
{chain}          (copy r1 (int 7))
          (construct r2 r0 r0 r0)
          (index r0 r2 r1)
          (construct r3 r0)
          (store (stage s0) r3)
          (return))))))
"#
    );
    let read = vpl::text::read_verified(text.as_bytes(), "chain").unwrap();
    let published = VerifiedModule::publish(&read).unwrap();
    for target in Target::ALL {
        let out = naga_targets::compile(&published, target)
            .unwrap_or_else(|e| panic!("{}: {e}", target.name()));
        if target == Target::Spirv {
            continue;
        }
        for (ext, bytes) in &out.files {
            let code = std::str::from_utf8(bytes).unwrap();
            let deepest = nesting(code);
            assert!(
                deepest < 64,
                "{}: {ext} nests {deepest} parentheses deep",
                target.name()
            );
            if target == Target::Wgsl {
                assert!(code.contains("let vpl_r0"), "no named link:\n{code}");
                reread_wgsl("chain", &published, code);
            }
        }
    }
}
