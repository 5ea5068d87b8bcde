//! Property tests: round trips of random valid programs, hash invariance
//! under input spelling, hash sensitivity to semantic change, and no panics
//! on arbitrary input, the streamed hash against SHA-256 of the canonical
//! bytes. Case counts are bounded to keep CI fast.

use proptest::prelude::*;
use serde_json::Value;
use tcc_ir::{
    Artifact, Constant, Envelope, FeatureSet, Function, Instruction, Program, RuntimeModule, Span,
    compute_hash, decode_artifact, encode_artifact, hash_input, validate,
};

fn constant() -> impl Strategy<Value = Constant> {
    prop_oneof![
        Just(Constant::Undefined),
        Just(Constant::Null),
        any::<bool>().prop_map(Constant::Bool),
        any::<f64>().prop_map(Constant::Number),
        prop::sample::select(vec![
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            1e21,
            1e-7,
            5e-324,
            f64::MAX,
            -1.5,
            42.0,
        ])
        .prop_map(Constant::Number),
        any::<String>().prop_map(Constant::String),
        prop::sample::select(vec!["NaN", "Infinity", "-0", "", "é\"\\\n\u{1}😀"])
            .prop_map(|s| Constant::String(s.to_string())),
    ]
}

/// Raw material for one instruction; operands are reduced into range later.
type RawIns = (usize, u32, u32, Constant, String, bool);

fn raw_ins() -> impl Strategy<Value = RawIns> {
    (
        0..tcc_ir::instruction::OP_NAMES.len(),
        any::<u32>(),
        any::<u32>(),
        constant(),
        any::<String>(),
        any::<bool>(),
    )
}

/// Builds a valid instruction from raw material, for a function of `len`
/// instructions and `locals` locals in a program with function ids `ids`.
fn make(raw: RawIns, len: u32, locals: u32, ids: &[u32]) -> Instruction {
    use Instruction as I;
    let (op, a, b, c, s, flag) = raw;
    let pc = a % len;
    let local = if locals == 0 { None } else { Some(a % locals) };
    let func = ids[(a as usize) % ids.len()];
    match tcc_ir::instruction::OP_NAMES[op] {
        "Jump" => I::Jump { target: pc },
        "JumpIfTrue" => I::JumpIfTrue { target: pc },
        "JumpIfFalse" => I::JumpIfFalse { target: pc },
        "Call" => I::Call { func, argc: b % 8 },
        "LoadLocal" => local.map_or(I::Nop, |local| I::LoadLocal { local }),
        "StoreLocal" => local.map_or(I::Nop, |local| I::StoreLocal { local }),
        "LoadConst" => I::LoadConst { value: c },
        "SetProp" => I::SetProp { key: s },
        "GetProp" => I::GetProp { key: s },
        "ArrayIndex" => I::ArrayIndex { index: b },
        "Effect" => I::Effect { has_input: flag },
        "Invoke" => I::Invoke { arg_count: b % 4 },
        "Fork" => I::Fork {
            count: 1 + b % 32,
            join_pc: pc,
        },
        "PushTry" => I::PushTry {
            catch: pc,
            finally: flag.then_some(b % len),
        },
        "NewEnv" => I::NewEnv { count: b % 16 },
        "NewClosure" => I::NewClosure { func },
        "LoadFunc" => I::LoadFunc { func },
        "EnvGet" => I::EnvGet { index: b },
        "EnvSet" => I::EnvSet { index: b },
        "EnvSlot" => I::EnvSlot { index: b },
        "CallClosure" => I::CallClosure { argc: b % 8 },
        "Nop" => I::Nop,
        "Return" => I::Return,
        "Pop" => I::Pop,
        "NewObject" => I::NewObject,
        "NewArray" => I::NewArray,
        "ArrayPush" => I::ArrayPush,
        "StrictEq" => I::StrictEq,
        "StrictNeq" => I::StrictNeq,
        "Lt" => I::Lt,
        "Le" => I::Le,
        "Gt" => I::Gt,
        "Ge" => I::Ge,
        "Not" => I::Not,
        "Sleep" => I::Sleep,
        "WaitForEvent" => I::WaitForEvent,
        "JoinAll" => I::JoinAll,
        "JoinAny" => I::JoinAny,
        "Throw" => I::Throw,
        "PopTry" => I::PopTry,
        "Add" => I::Add,
        "Sub" => I::Sub,
        "Mul" => I::Mul,
        "Div" => I::Div,
        "Rem" => I::Rem,
        "Neg" => I::Neg,
        "Pow" => I::Pow,
        "FloorDiv" => I::FloorDiv,
        "GetIndex" => I::GetIndex,
        "SetIndex" => I::SetIndex,
        "Length" => I::Length,
        "WatchIter" => I::WatchIter,
        "UnwatchIter" => I::UnwatchIter,
        "Same" => I::Same,
        "NewCell" => I::NewCell,
        other => unreachable!("op {other} not covered by the generator"),
    }
}

fn span() -> impl Strategy<Value = Option<Span>> {
    prop::option::of(
        (
            any::<String>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
        )
            .prop_map(
                |(file, start_line, start_column, end_line, end_column)| Span {
                    file: file.into(),
                    start_line,
                    start_column,
                    end_line,
                    end_column,
                },
            ),
    )
}

type RawFn = (
    String,
    u32,
    u32,
    Vec<(RawIns, Option<Span>)>,
    Vec<Option<Constant>>,
);

fn raw_fn() -> impl Strategy<Value = RawFn> {
    (
        any::<String>(),
        0..6u32,
        0..4u32,
        prop::collection::vec((raw_ins(), span()), 1..24),
        prop::collection::vec(prop::option::of(constant()), 0..4),
    )
}

/// Random valid artifacts.
fn artifact() -> impl Strategy<Value = Artifact> {
    (
        prop::collection::btree_set(any::<u32>(), 1..5),
        prop::collection::vec(raw_fn(), 5),
        any::<String>(),
        "[a-z]{1,12}",
        any::<String>(),
        prop::sample::select(tcc_ir::LANGUAGE_SEMANTICS_VERSIONS.to_vec()),
        prop::sample::subsequence(tcc_ir::features::KNOWN_HOST_CAPABILITIES.to_vec(), 0..7),
        prop::collection::vec((any::<String>(), any::<String>()), 0..3),
        any::<prop::sample::Index>(),
    )
        .prop_map(
            |(ids, raw_fns, hash, frontend_id, frontend_version, lang, caps, modules, entry)| {
                let ids: Vec<u32> = ids.into_iter().collect();
                let functions = ids
                    .iter()
                    .zip(raw_fns)
                    .map(|(&id, (name, params, extra, body, defaults))| {
                        let len = body.len() as u32;
                        let local_count = params + extra;
                        let (instructions, spans) = body
                            .into_iter()
                            .map(|(raw, span)| (make(raw, len, local_count, &ids), span))
                            .unzip();
                        let mut defaults: Vec<Option<Constant>> =
                            defaults.into_iter().take(params as usize).collect();
                        defaults.resize(params as usize, None);
                        Function {
                            id,
                            name,
                            param_count: params,
                            local_count,
                            instructions,
                            spans,
                            param_defaults: defaults
                                .iter()
                                .any(Option::is_some)
                                .then_some(defaults),
                        }
                    })
                    .collect::<Vec<_>>();
                let mut features = vec!["ts.control_flow".to_string()];
                for f in [
                    "durable.concurrent_group",
                    "lang.compute",
                    "durable.effect",
                    "ts.exceptions",
                ] {
                    features.push(f.to_string());
                }
                Artifact {
                    envelope: Envelope {
                        artifact_hash: if hash.is_empty() { "h".into() } else { hash },
                        frontend_id,
                        frontend_version,
                        language_semantics_version: lang.to_string(),
                        engine_format_version: 1,
                        required_engine_features: features,
                        required_host_capabilities: caps.into_iter().map(String::from).collect(),
                        runtime_modules: modules
                            .into_iter()
                            .map(|(id, kind)| RuntimeModule { id, kind })
                            .collect(),
                    },
                    program: Program {
                        entry: *entry.get(&ids),
                        functions,
                    },
                }
            },
        )
}

/// A small deterministic generator (splitmix64) for the re-speller.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Re-spells JSON: shuffled keys, random whitespace, random `\u` escapes
/// (with surrogate pairs beyond the BMP). Numbers keep serde_json's spelling.
fn respell(v: &Value, rng: &mut Mix, out: &mut String) {
    let ws = |rng: &mut Mix, out: &mut String| {
        for _ in 0..rng.below(3) {
            out.push([' ', '\n', '\t', '\r'][rng.below(4)]);
        }
    };
    ws(rng, out);
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            for i in (1..keys.len()).rev() {
                keys.swap(i, rng.below(i + 1));
            }
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                respell_str(k, rng, out);
                ws(rng, out);
                out.push(':');
                respell(&m[k.as_str()], rng, out);
            }
            ws(rng, out);
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                respell(x, rng, out);
            }
            ws(rng, out);
            out.push(']');
        }
        Value::String(s) => respell_str(s, rng, out),
        other => out.push_str(&other.to_string()),
    }
    ws(rng, out);
}

fn respell_str(s: &str, rng: &mut Mix, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        let must = c == '"' || c == '\\' || (c as u32) < 0x20;
        if must || rng.chance(30) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                if rng.chance(50) {
                    out.push_str(&format!("\\u{u:04x}"));
                } else {
                    out.push_str(&format!("\\u{u:04X}"));
                }
            }
        } else {
            out.push(c);
        }
    }
    out.push('"');
}

/// One semantic change; returns false when the change does not apply.
fn mutate(a: &mut Artifact, which: usize, pick: usize) -> bool {
    let f = pick % a.program.functions.len();
    let func = &mut a.program.functions[f];
    let pc = pick % func.instructions.len();
    match which % 8 {
        0 => {
            func.instructions[pc] = match &func.instructions[pc] {
                Instruction::LoadConst {
                    value: Constant::Number(n),
                } if *n == 0.0 => Instruction::LoadConst {
                    value: Constant::Number(-*n),
                },
                Instruction::LoadConst {
                    value: Constant::Number(n),
                } if n.is_nan() => Instruction::LoadConst {
                    value: Constant::String("NaN".into()),
                },
                Instruction::Nop => Instruction::Return,
                _ => Instruction::Nop,
            };
        }
        1 => func.name.push('x'),
        2 => func.local_count += 1,
        3 => a.envelope.frontend_version.push('\u{0}'),
        4 => {
            func.spans[pc] = match &func.spans[pc] {
                Some(_) => None,
                None => Some(Span::default()),
            }
        }
        5 => a
            .envelope
            .required_host_capabilities
            .push("host.timer".into()),
        6 => func.instructions.push(Instruction::Nop),
        _ => {
            if a.program.functions.len() < 2 {
                return false;
            }
            a.program.functions.swap(0, 1);
        }
    }
    true
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn valid_programs_round_trip_and_validate(a in artifact()) {
        let engine = FeatureSet::all_engine_features();
        let host = FeatureSet::all_host_capabilities();
        prop_assert_eq!(validate(&a, &engine, &host), Ok(()));
        let bytes = encode_artifact(&a);
        let back = decode_artifact(&bytes).expect("canonical bytes decode");
        prop_assert_eq!(&back, &a);
        prop_assert_eq!(encode_artifact(&back), bytes);
    }

    #[test]
    fn hash_ignores_key_order_whitespace_and_escapes(a in artifact(), seed in any::<u64>()) {
        let canonical = encode_artifact(&a);
        let value: Value = serde_json::from_slice(&canonical).expect("canonical bytes are JSON");
        let mut rng = Mix(seed);
        let mut text = String::new();
        respell(&value, &mut rng, &mut text);
        let back = decode_artifact(text.as_bytes()).expect("respelled JSON decodes");
        prop_assert_eq!(compute_hash(&back), compute_hash(&a));
        prop_assert_eq!(encode_artifact(&back), canonical);
    }

    #[test]
    fn hash_changes_with_any_semantic_change(a in artifact(), which in 0..8usize, pick in any::<usize>()) {
        let mut b = a.clone();
        if mutate(&mut b, which, pick) {
            prop_assert_ne!(&a, &b);
            prop_assert_ne!(compute_hash(&a), compute_hash(&b));
        }
        // The embedded hash itself never feeds the hash.
        let mut c = a.clone();
        c.envelope.artifact_hash.push('0');
        prop_assert_eq!(compute_hash(&a), compute_hash(&c));
    }

    #[test]
    fn canonical_objects_have_strictly_sorted_keys_and_no_whitespace(a in artifact()) {
        let bytes = encode_artifact(&a);
        let value: Value = serde_json::from_slice(&bytes).expect("canonical bytes are JSON");
        prop_assert!(keys_sorted(&value));
        // Compact: serde_json's compact writer agrees on everything except
        // number and escape spelling, so compare with strings and numbers blanked.
        prop_assert_eq!(skeleton(&String::from_utf8(bytes).unwrap()), skeleton(&value.to_string()));
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_artifact(&bytes);
    }

    #[test]
    fn corrupted_artifacts_never_panic(
        a in artifact(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0..3u8), 1..6),
    ) {
        let mut bytes = encode_artifact(&a);
        for (at, byte, kind) in edits {
            let i = at.index(bytes.len() + 1);
            match kind {
                0 if i < bytes.len() => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ if i < bytes.len() => { bytes.remove(i); }
                _ => {}
            }
        }
        if let Ok(decoded) = decode_artifact(&bytes) {
            let again = encode_artifact(&decoded);
            prop_assert_eq!(decode_artifact(&again).expect("re-encoding decodes"), decoded.clone());
            let engine = FeatureSet::all_engine_features();
            let host = FeatureSet::all_host_capabilities();
            let _ = tcc_ir::validate_all(&decoded, &engine, &host);
        }
    }
}

/// Whether every object's keys are in strictly increasing byte order.
fn keys_sorted(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            let keys: Vec<&[u8]> = m.keys().map(|k| k.as_bytes()).collect();
            keys.windows(2).all(|w| w[0] < w[1]) && m.values().all(keys_sorted)
        }
        Value::Array(a) => a.iter().all(keys_sorted),
        _ => true,
    }
}

/// JSON text with every string literal replaced by `S` and every number by
/// `N`, leaving the structure and any whitespace between tokens.
fn skeleton(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        _ => {}
                    }
                }
                out.push('S');
            }
            '-' | '0'..='9' => {
                while matches!(chars.peek(), Some('0'..='9' | '.' | 'e' | 'E' | '+' | '-')) {
                    chars.next();
                }
                out.push('N');
            }
            c => out.push(c),
        }
    }
    out
}

#[test]
fn negative_zero_and_nan_string_change_the_hash() {
    let with = |c: Constant| Artifact {
        envelope: Envelope {
            artifact_hash: "x".into(),
            frontend_id: "f".into(),
            language_semantics_version: "ts.subset.v1".into(),
            engine_format_version: 1,
            ..Envelope::default()
        },
        program: Program {
            entry: 0,
            functions: vec![Function {
                instructions: vec![Instruction::LoadConst { value: c }],
                spans: vec![None],
                ..Function::default()
            }],
        },
    };
    let zero = compute_hash(&with(Constant::Number(0.0)));
    let neg_zero = compute_hash(&with(Constant::Number(-0.0)));
    let nan = compute_hash(&with(Constant::Number(f64::NAN)));
    let nan_string = compute_hash(&with(Constant::String("NaN".into())));
    assert_ne!(zero, neg_zero);
    assert_ne!(nan, nan_string);
    // Every NaN payload is the same constant.
    let other_nan = f64::from_bits(f64::NAN.to_bits() ^ 1);
    assert!(other_nan.is_nan());
    assert_eq!(compute_hash(&with(Constant::Number(other_nan))), nan);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// `compute_hash` encodes and digests in blocks, with spans written from
    /// a per-file cache: it must equal SHA-256 of the whole canonical text,
    /// across many 64 KiB blocks, strings longer than a block, and spans
    /// that switch between files (shared and separately allocated).
    #[test]
    fn streamed_hash_is_the_sha256_of_the_canonical_bytes(
        a in artifact(),
        copies in 0..300usize,
        long in prop::sample::select(vec![0usize, 1, 65_535, 65_536, 70_001, 200_000]),
    ) {
        use sha2::{Digest, Sha256};
        let mut a = a;
        let functions = a.program.functions.clone();
        for _ in 0..copies {
            a.program.functions.extend(functions.iter().cloned());
        }
        let shared: std::sync::Arc<str> = "shared.ts".into();
        for (i, f) in a.program.functions.iter_mut().enumerate() {
            for (pc, s) in f.spans.iter_mut().enumerate() {
                if let Some(s) = s {
                    match (i + pc) % 3 {
                        0 => s.file = shared.clone(),
                        1 => s.file = "shared.ts".into(),
                        _ => {}
                    }
                }
            }
        }
        if let Some(f) = a.program.functions.first_mut() {
            f.name = "\u{e9}\n".repeat(long / 3);
        }
        let expected: String = Sha256::digest(hash_input(&a))
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        prop_assert_eq!(compute_hash(&a), expected);
    }
}
