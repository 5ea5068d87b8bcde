//! Codec benchmarks on a generated ~10 MB artifact.
//!
//! * `decode/serde_json_value` — baseline: parse the bytes into `serde_json::Value`.
//! * `decode/decode_validate` — `decode_artifact` + `validate` of the same bytes.
//!   Goal: at most 1.5× the baseline.
//! * `encode/canonical` and `encode/canonical_sha256` — canonical encoding alone
//!   and the full `compute_hash`, as throughput over the encoded size.
//!
//! Run: `cargo bench -p tcc_ir --bench codec -- --warm-up-time 1 --measurement-time 3`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tcc_ir::{
    Artifact, Constant, Envelope, FeatureSet, Function, Instruction, Program, Span, compute_hash,
    decode_artifact, encode_artifact, validate,
};

/// A deterministic artifact of roughly `target` encoded bytes, shaped like
/// frontend output: every instruction has a span, a mix of every group.
fn generate(target: usize) -> Artifact {
    let per_function = 8_000u32;
    let mut functions = Vec::new();
    let mut size = 0usize;
    let mut id = 0u32;
    while size < target {
        let mut instructions = Vec::with_capacity(per_function as usize);
        let mut spans = Vec::with_capacity(per_function as usize);
        for pc in 0..per_function {
            let ins = match pc % 16 {
                0 => Instruction::LoadLocal { local: pc % 8 },
                1 => Instruction::LoadConst {
                    value: Constant::Number(f64::from(pc) * 0.25),
                },
                2 => Instruction::Lt,
                3 => Instruction::JumpIfFalse {
                    target: (pc + 7) % per_function,
                },
                4 => Instruction::NewObject,
                5 => Instruction::LoadConst {
                    value: Constant::String(format!("value-{pc}-é")),
                },
                6 => Instruction::SetProp {
                    key: "payload".into(),
                },
                7 => Instruction::LoadConst {
                    value: Constant::String("charge".into()),
                },
                8 => Instruction::Effect { has_input: true },
                9 => Instruction::StoreLocal { local: pc % 8 },
                10 => Instruction::Call { func: 0, argc: 1 },
                11 => Instruction::PushTry {
                    catch: (pc + 3) % per_function,
                    finally: None,
                },
                12 => Instruction::LoadConst {
                    value: Constant::Bool(pc % 3 == 0),
                },
                13 => Instruction::PopTry,
                14 => Instruction::Jump { target: pc / 2 },
                _ => Instruction::Pop,
            };
            instructions.push(ins);
            spans.push((pc % 5 != 0).then(|| Span {
                file: "src/workflows/checkout.ts".into(),
                start_line: pc / 4 + 1,
                start_column: pc % 80 + 1,
                end_line: pc / 4 + 1,
                end_column: pc % 80 + 12,
            }));
        }
        functions.push(Function {
            id,
            name: format!("fn_{id}"),
            param_count: 2,
            local_count: 8,
            instructions,
            spans,
            param_defaults: None,
        });
        id += 1;
        size = encode_artifact(&wrap(functions.clone())).len();
    }
    tcc_ir::encode::with_computed_hash(&wrap(functions))
}

fn wrap(functions: Vec<Function>) -> Artifact {
    Artifact {
        envelope: Envelope {
            artifact_hash: "x".into(),
            frontend_id: "typescript".into(),
            frontend_version: "26.10.0".into(),
            language_semantics_version: "ts.subset.v1".into(),
            engine_format_version: 1,
            required_engine_features: vec![
                "ts.control_flow".into(),
                "durable.effect".into(),
                "ts.exceptions".into(),
            ],
            required_host_capabilities: vec![
                "host.persist_checkpoint".into(),
                "host.effect".into(),
            ],
            runtime_modules: vec![],
        },
        program: Program {
            entry: 0,
            functions,
        },
    }
}

fn benches(c: &mut Criterion) {
    let artifact = generate(10 * 1024 * 1024);
    let bytes = encode_artifact(&artifact);
    let engine = FeatureSet::all_engine_features();
    let host = FeatureSet::all_host_capabilities();
    assert_eq!(validate(&artifact, &engine, &host), Ok(()));
    eprintln!(
        "artifact: {} bytes, {} functions, {} instructions",
        bytes.len(),
        artifact.program.functions.len(),
        artifact.program.total_instructions()
    );

    let mut group = c.benchmark_group("decode");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function(BenchmarkId::new("serde_json_value", "10MB"), |b| {
        b.iter(|| black_box(serde_json::from_slice::<serde_json::Value>(black_box(&bytes)).is_ok()))
    });
    group.bench_function(BenchmarkId::new("decode_validate", "10MB"), |b| {
        b.iter(|| {
            let a = decode_artifact(black_box(&bytes)).expect("decodes");
            black_box(validate(&a, &engine, &host).is_ok())
        })
    });
    group.finish();

    let mut group = c.benchmark_group("encode");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function(BenchmarkId::new("canonical", "10MB"), |b| {
        b.iter(|| black_box(encode_artifact(black_box(&artifact)).len()))
    });
    group.bench_function(BenchmarkId::new("canonical_sha256", "10MB"), |b| {
        b.iter(|| black_box(compute_hash(black_box(&artifact))))
    });
    group.finish();
}

criterion_group!(codec, benches);
criterion_main!(codec);
