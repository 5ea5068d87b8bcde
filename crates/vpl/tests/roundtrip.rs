//! Round-trip properties of the canonical text (section 11) over generated
//! valid modules, and robustness of the reader on arbitrary input.

mod common;

use proptest::prelude::*;
use vpl::ir::{InstructionKind, Literal, Module, TypeInner, Value};

/// A generated record declaration.
#[derive(Debug, Clone)]
struct RecordSpec {
    name: String,
    /// Field type choices: 0 float, 1 int, 2 vec4, 3 the previous record,
    /// 4 an array of the previous record.
    fields: Vec<(String, u8)>,
}

#[derive(Debug, Clone)]
struct ModuleSpec {
    records: Vec<RecordSpec>,
    /// Which record each record uniform uses (index into `records`).
    record_uniforms: Vec<(String, usize)>,
    floats: Vec<f32>,
    ints: Vec<i32>,
    helper: String,
    branch: bool,
}

fn name() -> impl Strategy<Value = String> {
    // Arbitrary Unicode including controls and quotes, made nonempty.
    prop_oneof![
        any::<String>(),
        "[a-z\"'\\\\ ]{0,6}",
        Just("same".to_string())
    ]
    .prop_map(|s| if s.is_empty() { "_".to_string() } else { s })
}

fn finite_float() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>()
            .prop_map(f32::from_bits)
            .prop_filter("finite", |f| f.is_finite()),
        Just(-0.0f32),
        Just(0.0f32),
        Just(f32::from_bits(1)),
        Just(f32::MAX),
        Just(f32::MIN_POSITIVE),
        (-1000i32..1000).prop_map(|i| i as f32 / 8.0),
    ]
}

fn module_spec() -> impl Strategy<Value = ModuleSpec> {
    let record = (name(), prop::collection::vec((name(), 0u8..5), 0..4))
        .prop_map(|(name, fields)| RecordSpec { name, fields });
    (
        prop::collection::vec(record, 0..4),
        prop::collection::vec((name(), any::<prop::sample::Index>()), 0..5),
        prop::collection::vec(finite_float(), 1..12),
        prop::collection::vec(any::<i32>(), 0..4),
        name(),
        any::<bool>(),
    )
        .prop_map(|(records, uniforms, floats, ints, helper, branch)| {
            let record_uniforms = if records.is_empty() {
                Vec::new()
            } else {
                uniforms
                    .into_iter()
                    .map(|(n, i)| (n, i.index(records.len())))
                    .collect()
            };
            ModuleSpec {
                records,
                record_uniforms,
                floats,
                ints,
                helper,
                branch,
            }
        })
}

/// Escapes a string for VPL text using single quotes and `\u` escapes,
/// a different spelling from the writer's.
fn lit(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

impl ModuleSpec {
    /// Display names made unique where the spec requires it.
    fn field_name(&self, r: usize, f: usize) -> String {
        format!("{}#{f}", self.records[r].fields[f].0)
    }

    fn text(&self) -> String {
        let mut s = String::from(
            "(module 1\n (types (type V void) (type I int) (type F float) (type Bo bool) (type C vector float 4)\n",
        );
        for (i, r) in self.records.iter().enumerate() {
            s.push_str(&format!("  (type R{i} record {}", lit(&r.name)));
            for (f, (_, choice)) in r.fields.iter().enumerate() {
                let ty = match (choice, i) {
                    (0, _) | (3 | 4, 0) => "F".to_string(),
                    (1, _) => "I".to_string(),
                    (2, _) => "C".to_string(),
                    (3, _) => format!("R{}", i - 1),
                    _ => format!("A{}", i - 1),
                };
                s.push_str(&format!(" (field {} {ty})", lit(&self.field_name(i, f))));
            }
            s.push_str(")\n");
            // Declared after its use: a forward reference.
            s.push_str(&format!("  (type A{i} array R{i} 2)\n"));
        }
        s.push_str(" )\n (uniforms");
        for (k, (n, r)) in self.record_uniforms.iter().enumerate() {
            s.push_str(&format!(" (record u{k} {} R{r})", lit(&format!("{n}#{k}"))));
        }
        s.push_str(")\n");
        s.push_str(" (vertex v (interface (out p \"p\" C -1 position)) (functions (function v \"v\" V (parameters) (registers (register r0 C)) (block b (construct r0 (float 1.0)) (store (stage p) r0) (return)))))\n");
        s.push_str(" (fragment main (interface (out c \"c\" C 0 fragment_color)) (functions\n");
        s.push_str("  (function main \"main\" V (parameters)\n   (registers (register r0 C) (register r1 F) (register r2 I) (register r3 Bo)");
        for (k, (_, r)) in self.record_uniforms.iter().enumerate() {
            s.push_str(&format!(" (register r{} R{r})", 10 + k));
        }
        s.push_str(")\n   (block entry\n");
        for (k, f) in self.floats.iter().enumerate() {
            // `{:e}` spells every float with an exponent, unlike the writer.
            if k == 0 {
                s.push_str(&format!("    (copy r1 (float {f:e}))\n"));
            } else {
                s.push_str(&format!("    (add r1 r1 (float {f:e}))\n"));
            }
        }
        for i in &self.ints {
            s.push_str(&format!("    (copy r2 (int {i}))\n"));
        }
        for (k, _) in self.record_uniforms.iter().enumerate() {
            s.push_str(&format!("    (load r{} (uniform u{k}))\n", 10 + k));
        }
        s.push_str("    (call r1 helper r1)\n");
        if self.branch {
            s.push_str("    (less r3 r1 (float 0.5))\n    (branch_if r3 low high))\n");
            s.push_str("   (block high (copy r1 (float 1.0)) (branch out))\n");
            s.push_str("   (block low (branch out))\n");
            s.push_str("   (block out\n");
        }
        s.push_str(
            "    (construct r0 r1 r1 r1 (float 1.0))\n    (store (stage c) r0)\n    (return)))\n",
        );
        s.push_str(&format!(
            "  (function helper {} F (parameters (parameter x F)) (registers (register r0 F))\n   (block b (load r0 (parameter x)) (add r0 r0 (float 1.0)) (return r0))))))\n",
            lit(&format!("{}#helper", self.helper))
        ));
        s
    }
}

/// Display names in text order.
fn display_names(m: &Module) -> Vec<String> {
    let mut names = Vec::new();
    for u in &m.uniforms {
        names.push(u.name.clone());
        if let Some(TypeInner::Record(r)) = m.types.inner(u.ty) {
            names.push(r.name.clone());
            names.extend(r.fields.iter().map(|f| f.name.clone()));
        }
    }
    for stage in m.stages() {
        names.extend(stage.interface.iter().map(|v| v.name.clone()));
        names.extend(stage.functions.iter().map(|(_, f)| f.name.clone()));
    }
    names
}

/// Which uniforms share a type (record identity).
fn sharing(m: &Module) -> Vec<Vec<bool>> {
    m.uniforms
        .iter()
        .map(|a| m.uniforms.iter().map(|b| a.ty == b.ty).collect())
        .collect()
}

/// Float literal bits of the fragment stage, in text order.
fn float_bits(m: &Module) -> Vec<u32> {
    let mut bits = Vec::new();
    for stage in [&m.fragment] {
        for (_, f) in stage.functions.iter() {
            for (_, b) in f.blocks.iter() {
                for i in &b.instructions {
                    for op in i.kind.operands() {
                        if let Value::Constant(c) = op.value
                            && let Literal::Float(v) = c.value
                        {
                            bits.push(v.to_bits());
                        }
                    }
                }
            }
        }
    }
    bits
}

/// An error's line and column agree with its byte offset, which ends a
/// valid UTF-8 prefix of the input.
fn check_position(bytes: &[u8], e: &vpl::text::Error) -> Result<(), TestCaseError> {
    let offset = e.position.offset as usize;
    prop_assert!(offset <= bytes.len());
    let prefix = std::str::from_utf8(&bytes[..offset]);
    prop_assert!(prefix.is_ok(), "offset {} is not after valid UTF-8", offset);
    let (_, line, column) = common::position(prefix.unwrap(), offset);
    prop_assert_eq!(
        (e.position.line, e.position.column),
        (line, column),
        "{}",
        e
    );
    // The message speaks the user's terms: no Rust `Debug` text.
    for leak in ["Some(", "Local(", "Handle(", "Span {", "Subject", "Place {"] {
        prop_assert!(!e.message.contains(leak), "`{}` in: {}", leak, e.message);
    }
    Ok(())
}

fn read(text: &str) -> Module {
    vpl::text::read(text.as_bytes(), "gen.vpl").unwrap_or_else(|e| panic!("{e}\n{text}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn writing_is_a_fixed_point_and_preserves_names_identity_and_bits(spec in module_spec()) {
        let text = spec.text();
        let m1 = read(&text);
        let w1 = vpl::text::write(&m1).unwrap();
        let m2 = read(&w1);
        let w2 = vpl::text::write(&m2).unwrap();
        prop_assert_eq!(&w1, &w2);
        prop_assert_eq!(display_names(&m1), display_names(&m2));
        prop_assert_eq!(sharing(&m1), sharing(&m2));
        prop_assert_eq!(float_bits(&m1), float_bits(&m2));
        let generated: Vec<u32> = spec.floats.iter().map(|f| f.to_bits()).collect();
        let read_bits = float_bits(&m1);
        prop_assert_eq!(&read_bits[..generated.len()], &generated[..]);
        // Generated record names really reach the module.
        for r in &spec.records {
            prop_assert!(m1.types.iter().any(|(_, t)| matches!(&t.inner, TypeInner::Record(x) if x.name == r.name)));
        }
        // Publication snapshots the same text.
        let published = vpl::VerifiedModule::new(&m1).unwrap();
        prop_assert_eq!(published.text(), w1.as_str());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        if let Err(e) = vpl::text::read(&bytes, "bytes") {
            check_position(&bytes, &e)?;
        }
    }

    #[test]
    fn mutated_modules_never_panic(
        spec in module_spec(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>(), 0usize..8), 1..6),
    ) {
        let mut bytes = spec.text().into_bytes();
        for (at, op, byte, len) in edits {
            let i = at.index(bytes.len() + 1);
            match op {
                0 => { bytes.insert(i, byte); }
                1 => { let end = (i + len).min(bytes.len()); bytes.drain(i..end); }
                2 => { if i < bytes.len() { bytes[i] = byte; } }
                _ => {
                    let end = (i + len * 4).min(bytes.len());
                    let chunk = bytes[i..end].to_vec();
                    bytes.splice(i..i, chunk);
                }
            }
        }
        match vpl::text::read(&bytes, "mutated") {
            Ok(m) => {
                let w1 = vpl::text::write(&m).unwrap();
                prop_assert_eq!(vpl::text::write(&read(&w1)).unwrap(), w1);
            }
            Err(e) => check_position(&bytes, &e)?,
        }
    }

    #[test]
    fn token_soup_never_panics(tokens in prop::collection::vec(prop::sample::select(vec![
        "(", ")", "(", ")", "module", "1", "types", "type", "T", "int", "vector", "float", "4", "record",
        "\"n\"", "field", "array", "uniforms", "scalar", "vertex", "fragment", "interface", "out", "in",
        "-1", "0", "position", "fragment_color", "functions", "function", "f", "parameters", "parameter",
        "registers", "register", "r0", "r1", "block", "b", "return", "branch", "branch_if", "discard",
        "copy", "load", "store", "add", "construct", "call", "void", "texture", "swizzle", "member",
        "index", "local", "stage", "uniform", "member_ref", "index_ref", "(int 1)", "(float 1.5)",
        "(bool true)", "\"x\"", "2", "matrix", "sampler2D",
    ]), 0..200)) {
        let text = tokens.join(" ");
        if let Err(e) = vpl::text::read(text.as_bytes(), "soup") {
            check_position(text.as_bytes(), &e)?;
        }
    }
}

#[test]
fn the_generator_covers_every_instruction_it_claims() {
    let spec = ModuleSpec {
        records: vec![RecordSpec {
            name: "R".into(),
            fields: vec![("a".into(), 2)],
        }],
        record_uniforms: vec![("u".into(), 0)],
        floats: vec![-0.0, 1.5],
        ints: vec![3],
        helper: "h".into(),
        branch: true,
    };
    let m = read(&spec.text());
    let f = &m.fragment.functions[m.fragment.entry.unwrap()];
    assert_eq!(f.blocks.len(), 4);
    let loads = f
        .blocks
        .iter()
        .flat_map(|(_, b)| b.instructions.iter())
        .filter(|i| matches!(i.kind, InstructionKind::Load { .. }))
        .count();
    assert_eq!(loads, 1);
    assert_eq!(float_bits(&m)[0], 0x8000_0000);
}
