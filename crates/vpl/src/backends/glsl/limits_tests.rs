//! Unit tests of the section 13 hardware-limit checks: every limit of
//! every profile at its boundary and one past it.

use super::tests::Case;
use super::*;
use crate::VerifiedModule;
use crate::backends::naga_targets::{self, LowerErrorKind, Target};

/// The limit check of `profile` on `case` (GL 4.2 through [`compile`],
/// which also checks its agreement with [`check_target`]).
fn check(case: &Case, profile: Profile) -> Result<(), TargetError> {
    if profile == Profile::Gl42 {
        return case.compile().map(|_| ());
    }
    let text = case.text();
    let module =
        crate::text::read(text.as_bytes(), "case.vpl").unwrap_or_else(|e| panic!("{e}\n{text}"));
    let info = crate::verify::verify(&module).unwrap_or_else(|e| panic!("{e}\n{text}"));
    check_limits(&module, &info, profile)
}

/// `at` passes `profile`; `past` fails it with `kind`, at a position.
#[track_caller]
fn boundary(at: &Case, past: &Case, profile: Profile, kind: TargetErrorKind) {
    check(at, profile).unwrap_or_else(|e| panic!("{}: {e}", profile.name()));
    let e = check(past, profile).expect_err("one past the limit");
    assert_eq!(e.kind, kind, "{}: {e}", profile.name());
    assert!(e.span.is_some(), "{e}");
    assert!(e.message.contains(profile.name()), "{e}");
}

#[test]
fn vertex_attributes_at_and_past_the_limit() {
    for profile in Profile::ALL {
        assert_eq!(profile.limits().vertex_attributes, 16);
        let at = Case {
            viface: " (in a \"a\" C 15 none)",
            ..Case::default()
        };
        let past = Case {
            viface: " (in a \"a\" C 16 none)",
            ..Case::default()
        };
        boundary(&at, &past, profile, TargetErrorKind::VertexAttributeLimit);
        // A matrix takes one location per column.
        let at = Case {
            types: "\n    (type M matrix 4 4)",
            viface: " (in b \"b\" C -1 none) (in m \"m\" M 12 none)",
            ..Case::default()
        };
        let past = Case {
            types: "\n    (type M matrix 4 4)",
            viface: " (in b \"b\" C -1 none) (in m \"m\" M 13 none)",
            ..Case::default()
        };
        boundary(&at, &past, profile, TargetErrorKind::VertexAttributeLimit);
    }
}

#[test]
fn varyings_at_and_past_the_limit() {
    for (profile, limit) in [
        (Profile::Gl42, 15),
        (Profile::Es30, 15),
        (Profile::Vulkan10, 16),
    ] {
        assert_eq!(profile.limits().varying_locations, limit);
        let iface = |location: u64| format!(" (out v \"v\" C {location} none)");
        let (at_iface, past_iface) = (iface(limit - 1), iface(limit));
        let vbody = "\n          (store (stage v) r0)";
        let at = Case {
            viface: &at_iface,
            vbody,
            ..Case::default()
        };
        let past = Case {
            viface: &past_iface,
            vbody,
            ..Case::default()
        };
        boundary(&at, &past, profile, TargetErrorKind::VaryingLimit);
        // Unspecified locations are counted where allocation puts them:
        // an array of `limit` vectors fits, one more does not.
        let array = |n: u64| format!("\n    (type A array C {n})");
        let (at_types, past_types) = (array(limit), array(limit + 1));
        let out = " (out v \"v\" A -1 none)";
        let regs = " (register r1 A)";
        let body = |n: u64| {
            format!(
                "\n          (construct r1{})\n          (store (stage v) r1)",
                " r0".repeat(n as usize)
            )
        };
        let (at_body, past_body) = (body(limit), body(limit + 1));
        let at = Case {
            types: &at_types,
            viface: out,
            vregs: regs,
            vbody: &at_body,
            ..Case::default()
        };
        let past = Case {
            types: &past_types,
            viface: out,
            vregs: regs,
            vbody: &past_body,
            ..Case::default()
        };
        boundary(&at, &past, profile, TargetErrorKind::VaryingLimit);
    }
}

#[test]
fn draw_buffers_at_and_past_the_limit() {
    for (profile, limit) in [
        (Profile::Gl42, 8),
        (Profile::Es30, 4),
        (Profile::Vulkan10, 4),
    ] {
        assert_eq!(profile.limits().draw_buffers, limit);
        let iface = |location: u64| format!(" (out o \"o\" C {location} none)");
        let (at_iface, past_iface) = (iface(limit - 1), iface(limit));
        let fbody = "\n          (store (stage o) r0)";
        let at = Case {
            fiface: &at_iface,
            fbody,
            ..Case::default()
        };
        let past = Case {
            fiface: &past_iface,
            fbody,
            ..Case::default()
        };
        boundary(&at, &past, profile, TargetErrorKind::DrawBufferLimit);
    }
}

/// `count` sampler uniforms `s0…`, of which the fragment stage samples
/// the first `fragment` and the vertex stage the rest.
struct Samplers {
    uniforms: String,
    fregs: String,
    fbody: String,
    vregs: String,
    vbody: String,
}

fn samplers(count: usize, fragment: usize) -> Samplers {
    let mut s = Samplers {
        uniforms: String::new(),
        fregs: " (register r1 V2) (register r2 C)".into(),
        fbody: "\n          (construct r1 (float 0.5))".into(),
        vregs: " (register r1 V2) (register r2 C)".into(),
        vbody: "\n          (construct r1 (float 0.5))".into(),
    };
    for k in 0..count {
        s.uniforms
            .push_str(&format!("\n    (scalar s{k} \"s{k}\" S)"));
        let (regs, body) = if k < fragment {
            (&mut s.fregs, &mut s.fbody)
        } else {
            (&mut s.vregs, &mut s.vbody)
        };
        let r = 10 + k;
        regs.push_str(&format!(" (register r{r} S)"));
        body.push_str(&format!(
            "\n          (load r{r} (uniform s{k}))\n          (texture r2 r{r} r1)"
        ));
    }
    s
}

impl Samplers {
    fn case(&self) -> Case<'_> {
        Case {
            uniforms: &self.uniforms,
            fregs: &self.fregs,
            fbody: &self.fbody,
            vregs: &self.vregs,
            vbody: &self.vbody,
            ..Case::default()
        }
    }
}

#[test]
fn texture_units_at_and_past_the_limit() {
    let (at, past) = (samplers(16, 16), samplers(17, 17));
    for profile in Profile::ALL {
        assert_eq!(profile.limits().texture_units, 16);
        boundary(
            &at.case(),
            &past.case(),
            profile,
            TargetErrorKind::TextureUnitLimit,
        );
    }
    // The limit is per stage: 16 fragment and 8 vertex samplers fit the
    // GL profiles, whose stages count the samplers they use; the SPIR-V
    // target binds every sampler for both stages.
    let split = samplers(24, 16);
    check(&split.case(), Profile::Gl42).unwrap();
    check(&split.case(), Profile::Es30).unwrap();
    let e = check(&split.case(), Profile::Vulkan10).unwrap_err();
    assert_eq!(e.kind, TargetErrorKind::TextureUnitLimit, "{e}");
}

/// `count` uniforms declared by `decl(k)` and loaded in the fragment
/// stage by `load(k)` into register `r{10 + k}` of type `ty`.
fn uniforms(
    count: usize,
    ty: &str,
    decl: impl Fn(usize) -> String,
    load: impl Fn(usize) -> String,
) -> (String, String, String) {
    let (mut uniforms, mut regs, mut body) = (String::new(), String::new(), String::new());
    for k in 0..count {
        uniforms.push_str(&format!("\n    {}", decl(k)));
        regs.push_str(&format!(" (register r{} {ty})", 10 + k));
        body.push_str(&format!("\n          (load r{} {})", 10 + k, load(k)));
    }
    (uniforms, regs, body)
}

#[test]
fn uniform_components_at_and_past_the_gl_limit() {
    let make = |n: u64| {
        uniforms(
            1,
            "F",
            |_| format!("(array big \"big\" F {n})"),
            |_| "(index_ref (uniform big) (int 0))".into(),
        )
    };
    let ((au, ar, ab), (pu, pr, pb)) = (make(1024), make(1025));
    let at = Case {
        uniforms: &au,
        fregs: &ar,
        fbody: &ab,
        ..Case::default()
    };
    let past = Case {
        uniforms: &pu,
        fregs: &pr,
        fbody: &pb,
        ..Case::default()
    };
    boundary(&at, &past, Profile::Gl42, TargetErrorKind::UniformLimit);
    // A matrix counts 4 × min(rows, columns): 64 4×4 matrices fill 1024
    // components; one more scalar uniform crosses.
    let types = "\n    (type M matrix 4 4)";
    let (mu, mr, mb) = uniforms(
        1,
        "M",
        |_| "(array ms \"ms\" M 64)".into(),
        |_| "(index_ref (uniform ms) (int 0))".into(),
    );
    let at = Case {
        types,
        uniforms: &mu,
        fregs: &mr,
        fbody: &mb,
        ..Case::default()
    };
    let (su, sr, sb) = (
        format!("{mu}\n    (scalar one \"one\" F)"),
        format!("{mr} (register r1 F)"),
        format!("{mb}\n          (load r1 (uniform one))"),
    );
    let past = Case {
        types,
        uniforms: &su,
        fregs: &sr,
        fbody: &sb,
        ..Case::default()
    };
    boundary(&at, &past, Profile::Gl42, TargetErrorKind::UniformLimit);
    // Unused uniforms are not counted.
    Case {
        uniforms: &pu,
        ..Case::default()
    }
    .compile()
    .unwrap();
}

#[test]
fn uniform_blocks_at_and_past_the_limit() {
    let types = "\n    (type R record \"R\" (field \"f\" F))";
    // GL 4.2: record uniforms are blocks.
    let records = |n| {
        uniforms(
            n,
            "F",
            |k| format!("(record u{k} \"u{k}\" R)"),
            |k| format!("(member_ref (uniform u{k}) \"f\")"),
        )
    };
    // The naga targets: every value uniform is a block.
    let scalars = |n| {
        uniforms(
            n,
            "F",
            |k| format!("(scalar u{k} \"u{k}\" F)"),
            |k| format!("(uniform u{k})"),
        )
    };
    for (profile, make) in [
        (
            Profile::Gl42,
            &records as &dyn Fn(usize) -> (String, String, String),
        ),
        (Profile::Es30, &scalars),
        (Profile::Vulkan10, &scalars),
    ] {
        assert_eq!(profile.limits().uniform_blocks, 12);
        let ((au, ar, ab), (pu, pr, pb)) = (make(12), make(13));
        let at = Case {
            types,
            uniforms: &au,
            fregs: &ar,
            fbody: &ab,
            ..Case::default()
        };
        let past = Case {
            types,
            uniforms: &pu,
            fregs: &pr,
            fbody: &pb,
            ..Case::default()
        };
        boundary(&at, &past, profile, TargetErrorKind::UniformLimit);
    }
    // GL 4.2: 13 scalars are default-block components, not blocks.
    let (u, r, b) = scalars(13);
    Case {
        uniforms: &u,
        fregs: &r,
        fbody: &b,
        ..Case::default()
    }
    .compile()
    .unwrap();
}

#[test]
fn uniform_block_size_at_and_past_the_limit() {
    // 1024 vec4 elements are exactly 16384 std140 bytes.
    let record =
        |n: u64| format!("\n    (type A array C {n})\n    (type R record \"R\" (field \"a\" A))");
    let (at_types, past_types) = (record(1024), record(1025));
    let (u, r, b) = uniforms(
        1,
        "C",
        |_| "(record big \"big\" R)".into(),
        |_| "(index_ref (member_ref (uniform big) \"a\") (int 0))".into(),
    );
    for profile in Profile::ALL {
        assert_eq!(profile.limits().uniform_block_bytes, 16384);
        let at = Case {
            types: &at_types,
            uniforms: &u,
            fregs: &r,
            fbody: &b,
            ..Case::default()
        };
        let past = Case {
            types: &past_types,
            uniforms: &u,
            fregs: &r,
            fbody: &b,
            ..Case::default()
        };
        boundary(&at, &past, profile, TargetErrorKind::UniformLimit);
    }
}

/// The naga targets check their own profile before lowering and report
/// the same code; GL 4.2 accepts what is within its larger limit.
#[test]
fn naga_targets_check_their_profiles() {
    let case = Case {
        fiface: " (out o \"o\" C 4 none)",
        fbody: "\n          (store (stage o) r0)",
        ..Case::default()
    };
    case.compile().unwrap();
    let text = case.text();
    let module = crate::text::read(text.as_bytes(), "case.vpl").unwrap();
    let published = VerifiedModule::new(&module).unwrap();
    for target in [Target::Spirv, Target::GlslEs300] {
        let e = naga_targets::compile(&published, target).unwrap_err();
        assert_eq!(
            e.kind,
            LowerErrorKind::Restriction(TargetErrorKind::DrawBufferLimit),
            "{e}"
        );
        assert_eq!(e.kind.code(), "limit-draw-buffers");
        let mapped = e.span.and_then(|s| published.source_span(&module, s));
        assert!(mapped.is_some(), "{e}");
    }
    for target in [Target::Wgsl, Target::Msl, Target::Hlsl] {
        assert_eq!(target.profile(), None);
        naga_targets::compile(&published, target).unwrap();
    }
}
