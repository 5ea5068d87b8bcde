//! Unit tests of the GLSL backend: target restrictions (section 12.4),
//! location rules (12.2) and emission details (12.3).

use super::*;
use crate::VerifiedModule;

/// A valid module with placeholders: `{TYPES}`, `{UNIFORMS}`, `{VIFACE}`
/// (vertex interface), `{VREGS}`/`{VBODY}` (vertex registers and body),
/// `{FIFACE}`, `{FREGS}`, `{FBODY}`, `{FUNCS}` (extra fragment functions).
const TEMPLATE: &str = r#"(module 1
  (types
    (type V void)
    (type I int)
    (type F float)
    (type B bool)
    (type S sampler2D)
    (type V2 vector float 2)
    (type C vector float 4){TYPES})
  (uniforms{UNIFORMS})
  (vertex ve
    (interface (out pos "pos" C -1 position){VIFACE})
    (functions
      (function ve "vmain" V
        (parameters)
        (registers (register r0 C){VREGS})
        (block entry
          (construct r0 (float 1.0))
          (store (stage pos) r0){VBODY}
          (return)))))
  (fragment fe
    (interface (out color "color" C 0 fragment_color){FIFACE})
    (functions
      (function fe "fmain" V
        (parameters)
        (registers (register r0 C){FREGS})
        (block entry
          (construct r0 (float 0.0) (float 1.0) (float 0.0) (float 1.0)){FBODY}
          (store (stage color) r0)
          (return))){FUNCS})))
"#;

/// One test module: the template with its placeholders filled.
#[derive(Default)]
pub(super) struct Case<'a> {
    pub(super) types: &'a str,
    pub(super) uniforms: &'a str,
    pub(super) viface: &'a str,
    pub(super) vregs: &'a str,
    pub(super) vbody: &'a str,
    pub(super) fiface: &'a str,
    pub(super) fregs: &'a str,
    pub(super) fbody: &'a str,
    pub(super) funcs: &'a str,
}

impl Case<'_> {
    pub(super) fn text(&self) -> String {
        TEMPLATE
            .replace("{TYPES}", self.types)
            .replace("{UNIFORMS}", self.uniforms)
            .replace("{VIFACE}", self.viface)
            .replace("{VREGS}", self.vregs)
            .replace("{VBODY}", self.vbody)
            .replace("{FIFACE}", self.fiface)
            .replace("{FREGS}", self.fregs)
            .replace("{FBODY}", self.fbody)
            .replace("{FUNCS}", self.funcs)
    }

    pub(super) fn compile(&self) -> Result<ProgramArtifact, TargetError> {
        let text = self.text();
        let module = crate::text::read(text.as_bytes(), "case.vpl")
            .unwrap_or_else(|e| panic!("the case must be valid VPL: {e}\n{text}"));
        let checked = check_target(&module);
        let published = VerifiedModule::new(&module).expect("publishable");
        let compiled = match compile(&published, VERSION_420) {
            Ok(a) => Ok(a),
            Err(CompileError::Target(e)) => Err(e),
            Err(e) => panic!("{e}"),
        };
        if let Ok(a) = &compiled {
            glslang(a.vertex_code(), "vert");
            glslang(a.fragment_code(), "frag");
        }
        // check_target on the read module agrees with compile.
        assert_eq!(
            checked.as_ref().err().map(|e| e.kind),
            compiled.as_ref().err().map(|e| e.kind)
        );
        // The snapshot's error position maps to the read module's.
        if let (Err(c), Err(e)) = (&checked, &compiled) {
            let mapped = e.span.and_then(|s| published.source_span(&module, s));
            assert_eq!(mapped, c.span, "{e}");
            assert_eq!(c.message, e.message);
        }
        compiled
    }

    #[track_caller]
    pub(super) fn rejects(&self, kind: TargetErrorKind) -> TargetError {
        match self.compile() {
            Err(e) => {
                assert_eq!(e.kind, kind, "{e}");
                e
            }
            Ok(a) => panic!(
                "expected {kind}, compiled:\n{}\n{}",
                a.vertex_code(),
                a.fragment_code()
            ),
        }
    }
}

fn compile_text(text: &str) -> ProgramArtifact {
    let module = crate::text::read(text.as_bytes(), "test.vpl").expect("valid module");
    let published = VerifiedModule::new(&module).expect("publishable");
    let a = compile(&published, VERSION_420).unwrap();
    glslang(a.vertex_code(), "vert");
    glslang(a.fragment_code(), "frag");
    a
}

/// Checks one shader with the reference compiler (`glslangValidator -S`,
/// Debian package glslang-tools), which enforces the 4.20 core rules.
fn glslang(code: &str, stage: &str) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("vpl-unit-glslang-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("shader{n}.{stage}"));
    std::fs::write(&file, code).unwrap();
    let output = std::process::Command::new("glslangValidator")
        .arg("-S")
        .arg(stage)
        .arg(&file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run glslangValidator (glslang-tools): {e}"));
    let _ = std::fs::remove_file(&file);
    assert!(
        output.status.success(),
        "glslangValidator rejected the {stage} shader:\n{}\n{code}",
        String::from_utf8_lossy(&output.stdout)
    );
}

#[test]
fn template_compiles() {
    let a = Case::default().compile().unwrap();
    assert!(a.vertex_code().starts_with("#version 420 core\n"));
    assert!(!a.vertex_code().ends_with('\0'));
    assert_eq!(a.fragment_color_output(), "vpl_output0");
    assert_eq!(a.fragment_color_location(), 0);
    assert_eq!(
        a.fragment_interface()[0]
            .binding
            .gl_name_with_nul()
            .to_bytes_with_nul(),
        b"vpl_output0\0"
    );
}

#[test]
fn empty_records_are_rejected_when_used() {
    let types = "\n    (type E record \"Empty\")";
    // Declared but unused: fine.
    Case {
        types,
        ..Case::default()
    }
    .compile()
    .unwrap();
    let e = Case {
        types,
        fregs: " (register r1 E)",
        fbody: "\n          (construct r1)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::EmptyRecord);
    assert!(e.span.is_some());
}

#[test]
fn arrays_of_arrays_are_rejected() {
    Case {
        types: "\n    (type A array F 2)\n    (type AA array A 2)",
        uniforms: "\n    (array grid \"grid\" A 2)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::ArrayOfArrays);
}

#[test]
fn samplers_in_aggregates_are_rejected() {
    Case {
        types: "\n    (type R record \"R\" (field \"s\" S) (field \"f\" F))",
        fregs: " (register r1 R)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::SamplerInAggregate);
    Case {
        uniforms: "\n    (array images \"images\" S 2)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::SamplerInAggregate);
}

#[test]
fn array_lengths_beyond_gl_int_are_rejected() {
    Case {
        uniforms: "\n    (array big \"big\" F 2147483648)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::ArrayLength);
    // The largest GL int is accepted by the target (drivers decide).
    Case {
        uniforms: "\n    (array big \"big\" F 2147483647)",
        ..Case::default()
    }
    .compile()
    .unwrap();
}

#[test]
fn boolean_and_opaque_interface_types_are_rejected() {
    for (decl, body) in [
        (
            " (out flag \"flag\" B -1 none)",
            "\n          (store (stage flag) (bool true))",
        ),
        (" (in flag \"flag\" B 0 none)", ""),
    ] {
        Case {
            viface: decl,
            vbody: body,
            ..Case::default()
        }
        .rejects(TargetErrorKind::InterfaceType);
    }
    Case {
        types: "\n    (type BV vector bool 2)\n    (type R record \"R\" (field \"b\" BV))",
        fiface: " (out extra \"extra\" R 1 none)",
        fregs: " (register r1 BV) (register r2 R)",
        fbody: "\n          (construct r1 (bool true))\n          (construct r2 r1)\n          (store (stage extra) r2)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::InterfaceType);
    Case {
        uniforms: "\n    (scalar sampler \"sampler\" S)",
        fiface: " (in image \"image\" S -1 none)",
        viface: " (out image \"image\" S -1 none)",
        vregs: " (register r1 S)",
        vbody: "\n          (load r1 (uniform sampler))\n          (store (stage image) r1)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::InterfaceType);
}

#[test]
fn unsupported_interface_shapes_are_rejected() {
    // Attribute arrays and records.
    Case {
        types: "\n    (type A array F 2)",
        viface: " (in values \"values\" A 0 none)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::InterfaceShape);
    Case {
        types: "\n    (type R record \"R\" (field \"f\" F))",
        viface: " (in values \"values\" R 0 none)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::InterfaceShape);
    // Fragment outputs: no matrices, records or arrays of matrices.
    Case {
        types: "\n    (type M matrix 2 2)",
        fiface: " (out m \"m\" M 1 none)",
        fregs: " (register r1 M)",
        fbody: "\n          (construct r1 (float 1.0))\n          (store (stage m) r1)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::InterfaceShape);
    // Supported: matrix attributes, arrays of vectors as fragment outputs,
    // records and arrays as varyings.
    let a = Case {
        types: "\n    (type M matrix 4 3)\n    (type CA array C 2)\n    (type R record \"R\" (field \"a\" CA) (field \"i\" I))",
        viface: " (in m \"m\" M -1 none) (out r \"r\" R -1 none)",
        vregs: " (register r1 CA) (register r2 R)",
        vbody: "\n          (construct r1 r0 r0)\n          (construct r2 r1 (int 3))\n          (store (stage r) r2)",
        fiface: " (out more \"more\" CA -1 none) (in r \"r\" R -1 none)",
        fregs: " (register r1 CA)",
        fbody: "\n          (construct r1 r0 r0)\n          (store (stage more) r1)",
        ..Case::default()
    }
    .compile()
    .unwrap();
    assert!(
        a.vertex_code()
            .contains("layout(location = 0) in mat3x4 vpl_attribute0;")
    );
    assert!(
        a.vertex_code()
            .contains("layout(location = 0) flat out vpl_R0 vpl_varying0;")
    );
    assert!(
        a.fragment_code()
            .contains("layout(location = 0) flat in vpl_R0 vpl_varying0;")
    );
    assert!(
        a.fragment_code()
            .contains("layout(location = 1) out vec4 vpl_output1[2];")
    );
}

#[test]
fn location_overlaps_and_ranges_are_rejected() {
    Case {
        types: "\n    (type M matrix 4 4)",
        viface: " (in m \"m\" M 0 none) (in v \"v\" C 3 none)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::Location);
    Case {
        types: "\n    (type M matrix 2 2)",
        viface: " (in m \"m\" M 2147483647 none)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::Location);
    // Distinct explicit locations whose spans overlap.
    Case {
        types: "\n    (type CA array C 2)",
        fiface: " (out more \"more\" CA 1 none) (out x \"x\" C 2 none)",
        fregs: " (register r1 CA)",
        fbody: "\n          (construct r1 r0 r0)\n          (store (stage more) r1)\n          (store (stage x) r0)",
        ..Case::default()
    }
    .rejects(TargetErrorKind::Location);
}

#[test]
fn unspecified_locations_fill_the_lowest_free_span() {
    let a = Case {
        types: "\n    (type M matrix 3 3)\n    (type FA array F 3)",
        viface: " (in a \"a\" C 1 none) (in m \"m\" M -1 none) (in f \"f\" F -1 none) (in g \"g\" V2 -1 none) (in h \"h\" F -1 none)",
        ..Case::default()
    }
    .compile()
    .unwrap();
    let locations: Vec<i32> = a
        .vertex_interface()
        .iter()
        .map(|b| b.binding.location)
        .collect();
    // pos (built-in), a@1, m needs 3 → 2..5, f@0, g@5, h@6
    assert_eq!(locations, [-1, 1, 2, 0, 5, 6]);
    assert_eq!(a.vertex_interface()[0].binding.gl_name(), "gl_Position");
}

#[test]
fn fragment_inputs_inherit_vertex_output_locations() {
    let a = Case {
        viface: " (out a \"a\" C -1 none) (out b \"b\" V2 7 none) (out c \"c\" C -1 none)",
        vbody: "\n          (store (stage a) r0)\n          (store (stage c) r0)\n          (construct r1 (float 0.5))\n          (store (stage b) r1)",
        vregs: " (register r1 V2)",
        fiface: " (in c \"c\" C -1 none) (in renamed \"renamed\" V2 7 none) (in p \"p\" C -1 position)",
        ..Case::default()
    }
    .compile()
    .unwrap();
    let vertex: Vec<(String, i32)> = a
        .vertex_interface()
        .iter()
        .map(|b| (b.binding.gl_name().to_string(), b.binding.location))
        .collect();
    assert_eq!(
        vertex,
        [
            ("gl_Position".into(), -1),
            ("vpl_varying0".into(), 0),
            ("vpl_varying7".into(), 7),
            ("vpl_varying1".into(), 1)
        ]
    );
    let fragment: Vec<(String, i32)> = a
        .fragment_interface()
        .iter()
        .map(|b| (b.binding.gl_name().to_string(), b.binding.location))
        .collect();
    assert_eq!(
        fragment,
        [
            ("vpl_output0".into(), 0),
            ("vpl_varying1".into(), 1),
            ("vpl_varying7".into(), 7),
            ("gl_FragCoord".into(), -1)
        ]
    );
}

const SAMPLE: &str =
    "\n          (construct r9 (float 0.5) (float 0.5))\n          (texture r0 r1 r9)";

#[test]
fn sampler_registers_alias_uniforms_and_parameters() {
    let a = Case {
        uniforms: "\n    (scalar image \"image\" S)",
        fregs: " (register r1 S) (register r2 S) (register r3 S) (register r9 V2)",
        fbody: "\n          (load r3 (uniform image))\n          (store (local r2) r3)\n          (copy r1 r2)\n          (construct r9 (float 0.5) (float 0.5))\n          (call r0 shade r1 r9)",
        funcs: "\n      (function shade \"shade\" C\n        (parameters (parameter s S) (parameter uv V2))\n        (registers (register r0 S) (register r1 V2) (register r2 C))\n        (block entry\n          (load r0 (parameter s))\n          (load r1 (parameter uv))\n          (texture r2 r0 r1)\n          (return r2)))",
        ..Case::default()
    }
    .compile()
    .unwrap();
    let f = a.fragment_code();
    assert!(
        f.contains("layout(binding = 0) uniform sampler2D vpl_u0;"),
        "{f}"
    );
    assert!(f.contains("vpl_r0 = vpl_f1(vpl_u0, vpl_r9);"), "{f}");
    assert!(f.contains("vpl_r2 = texture(vpl_p0, vpl_r1);"), "{f}");
    assert!(
        !f.contains("sampler2D vpl_r"),
        "sampler registers are not locals:\n{f}"
    );
    assert_eq!(a.uniforms()[0].texture_unit, 0);
    assert_eq!(a.uniforms()[0].block_binding, -1);
}

#[test]
fn sampler_alias_violations_are_rejected() {
    let base = Case {
        uniforms: "\n    (scalar image \"image\" S) (scalar other \"other\" S)",
        fregs: " (register r1 S) (register r2 S) (register r9 V2)",
        ..Case::default()
    };
    // Two definitions.
    let body = format!(
        "\n          (load r1 (uniform image))\n          (load r1 (uniform other)){SAMPLE}"
    );
    Case {
        fbody: &body,
        ..base
    }
    .rejects(TargetErrorKind::SamplerAlias);
    // A cycle (in an unreachable block, so definite assignment allows it).
    let cycle = format!(
        "\n      (function dead \"dead\" V\n        (parameters)\n        (registers (register r0 C) (register r1 S) (register r2 S) (register r9 V2))\n        (block entry (return))\n        (block loop\n          (copy r1 r2)\n          (copy r2 r1){SAMPLE}\n          (return)))"
    );
    Case {
        funcs: &cycle,
        ..base
    }
    .rejects(TargetErrorKind::SamplerAlias);
    // A used register without definition (unreachable use).
    let undefined = format!(
        "\n      (function dead \"dead\" V\n        (parameters)\n        (registers (register r0 C) (register r1 S) (register r9 V2))\n        (block entry (return))\n        (block never{SAMPLE}\n          (return)))"
    );
    Case {
        funcs: &undefined,
        ..base
    }
    .rejects(TargetErrorKind::SamplerAlias);
    // Unused sampler declarations need no definition.
    Case { ..base }.compile().unwrap();
    // Sampler returns.
    Case {
        funcs: "\n      (function pick \"pick\" S\n        (parameters (parameter s S))\n        (registers (register r0 S))\n        (block entry (load r0 (parameter s)) (return r0)))",
        ..base
    }
    .rejects(TargetErrorKind::SamplerReturn);
    // Writing sampler parameter storage.
    Case {
        funcs: "\n      (function poke \"poke\" V\n        (parameters (parameter s S))\n        (registers (register r0 S))\n        (block entry (load r0 (parameter s)) (store (parameter s) r0) (return)))",
        ..base
    }
    .rejects(TargetErrorKind::SamplerParameterMutation);
}

#[test]
fn literals_and_operators_are_spelled_exactly() {
    let a = Case {
        fregs: " (register r1 I) (register r2 F) (register r3 B)",
        fbody: "\n          (copy r1 (int -2147483648))\n          (subtract r1 r1 (int -5))\n          (copy r2 (float -0.0))\n          (multiply r2 r2 (float 0.1))\n          (equal r3 r1 (int 2147483647))",
        ..Case::default()
    }
    .compile()
    .unwrap();
    let f = a.fragment_code();
    assert!(f.contains("vpl_r1 = (-2147483647 - 1);"), "{f}");
    assert!(f.contains("vpl_r1 = vpl_r1 - (-5);"), "{f}");
    assert!(f.contains("vpl_r2 = (-0.00000000e0);"), "{f}");
    assert!(f.contains("vpl_r2 = vpl_r2 * 1.00000001e-1;"), "{f}");
    assert!(f.contains("vpl_r3 = vpl_r1 == 2147483647;"), "{f}");
}

#[test]
fn matrix_products_keep_their_order() {
    let a = Case {
        types: "\n    (type M matrix 4 4)",
        vregs: " (register r1 M) (register r2 M) (register r3 M)",
        vbody: "\n          (construct r1 (float 2.0))\n          (construct r2 (float 3.0))\n          (multiply r3 r1 r2)\n          (multiply r3 r3 r1)\n          (multiply r0 r3 r0)",
        ..Case::default()
    }
    .compile()
    .unwrap();
    let v = a.vertex_code();
    let first = v.find("vpl_r3 = vpl_r1 * vpl_r2;").unwrap();
    let second = v.find("vpl_r3 = vpl_r3 * vpl_r1;").unwrap();
    let third = v.find("vpl_r0 = vpl_r3 * vpl_r0;").unwrap();
    assert!(first < second && second < third);
}

/// Diagonal constructions of non-square matrices are spelled out in full
/// (Mesa folds a constant `mat4x2(s)` wrongly: `docs/vpl/glsl-backend.md`,
/// oracle seed 2783); square ones keep the scalar form.
#[test]
fn non_square_diagonal_matrices_are_spelled_out() {
    let a = Case {
        types: "\n    (type M24 matrix 2 4) (type M32 matrix 3 2) (type M44 matrix 4 4)",
        fregs: " (register r1 M24) (register r2 M32) (register r3 M44) (register r4 I)",
        fbody: "\n          (construct r1 (float 1.3125))\n          (copy r4 (int 3))\n          (construct r2 r4)\n          (construct r3 (float 2.0))",
        ..Case::default()
    }
    .compile()
    .unwrap();
    let f = a.fragment_code();
    let z = "0.00000000e0";
    let s = "1.31250000e0";
    assert!(
        f.contains(&format!(
            "vpl_r1 = mat4x2({s}, {z}, {z}, {s}, {z}, {z}, {z}, {z});"
        )),
        "{f}"
    );
    assert!(
        f.contains(&format!(
            "vpl_r2 = mat2x3(vpl_r4, {z}, {z}, {z}, vpl_r4, {z});"
        )),
        "{f}"
    );
    assert!(f.contains("vpl_r3 = mat4(2.00000000e0);"), "{f}");
}

#[test]
fn display_names_never_reach_the_glsl() {
    let a = Case {
        types: "\n    (type R record \"main(); } void gl_\" (field \"*/ discard; /*\" F))",
        uniforms: "\n    (record evil \"gl_Position; uniform\" R)",
        ..Case::default()
    }
    .compile()
    .unwrap();
    for code in [a.vertex_code(), a.fragment_code()] {
        assert!(!code.contains("discard"), "{code}");
        assert!(!code.contains("uniform\""), "{code}");
        assert!(!code.contains("main();"), "{code}");
    }
    // The reflection JSON escapes them.
    let json = a.reflection_json();
    assert!(json.contains(r#""name": "gl_Position; uniform""#), "{json}");
}

#[test]
fn one_block_functions_are_direct_and_graphs_use_dispatch() {
    let a = compile_text(include_str!("../../../../../examples/vpl/loop_call.vpl"));
    let f = a.fragment_code();
    assert!(
        f.contains("int vpl_block = 0;\n    for (;;) {\n        switch (vpl_block) {"),
        "{f}"
    );
    assert!(
        f.contains("vpl_block = vpl_r2 ? 2 : 3;\n            break;"),
        "{f}"
    );
    let helper = &f[f.find("int vpl_f1(int vpl_p0) {").unwrap()..];
    assert!(
        !helper[..helper.find("\n}\n").unwrap()].contains("switch"),
        "{helper}"
    );
    assert!(f.ends_with("void main() {\n    vpl_f0();\n}\n"));
    // Forward declarations precede every definition.
    assert!(f.find("int vpl_f1(int vpl_p0);").unwrap() < f.find("void vpl_f0() {").unwrap());
}

#[test]
fn entry_is_the_selected_function_not_the_first() {
    let text = Case {
        funcs: "\n      (function other \"main\" V (parameters) (registers (register r0 C))\n        (block entry (construct r0 (float 1.0)) (store (stage color) r0) (return)))",
        ..Case::default()
    }
    .text()
    .replace("(fragment fe", "(fragment other");
    let a = compile_text(&text);
    assert!(
        a.fragment_code()
            .ends_with("void main() {\n    vpl_f1();\n}\n")
    );
}

#[test]
fn whole_block_uniform_loads_construct_a_record() {
    let a = Case {
        types: "\n    (type R record \"R\" (field \"c\" C) (field \"f\" F))",
        uniforms: "\n    (scalar k \"k\" F) (record m \"m\" R) (record n \"n\" R)",
        fregs: " (register r1 R)",
        fbody: "\n          (load r1 (uniform n))\n          (member r0 r1 \"c\")",
        ..Case::default()
    }
    .compile()
    .unwrap();
    let f = a.fragment_code();
    assert!(
        f.contains("vpl_r1 = vpl_R0(vpl_u2.vpl_m0, vpl_u2.vpl_m1);"),
        "{f}"
    );
    assert!(
        f.contains("layout(std140, binding = 1) uniform vpl_Block2 {"),
        "{f}"
    );
    let bindings: Vec<i32> = a.uniforms().iter().map(|u| u.block_binding).collect();
    assert_eq!(bindings, [-1, 0, 1]);
}

/// Emission on two threads (large stages) gives exactly the code of
/// emission on one.
#[test]
fn parallel_emission_equals_sequential_emission() {
    let text = crate::text::generate::module_text(1 << 20);
    let module = crate::text::read_verified(text.as_bytes(), "gen.vpl").unwrap();
    let published = VerifiedModule::publish(&module).unwrap();
    let parallel = compile(&published, VERSION_420).unwrap();
    let sequential = compile_verified_with(published.module(), published.info(), false).unwrap();
    assert_eq!(parallel, sequential);
    assert!(parallel.fragment_code().len() > 1 << 20);
}
