//! Compile throughput on a generated 1 MB source, as a ratio to the parser
//! alone (target: compile ≤ 3× parse), for Python and TypeScript; and, in
//! the same run, the reference Python frontend (PyPI `tcc-engine` 26.10.4,
//! from IRKIT_TCC_REFERENCE_PYTHON or target/tcc-ref-venv) compiling the same
//! Python file (target: irkit ≥ 20× faster). Also in the same run, the floor
//! the spec sets: SHA-256 alone (`sha2`, and `ring` for comparison) over the
//! artifact's canonical bytes, the text the artifact hash digests. Run:
//! `cargo bench -p tcc_frontend --bench compile`.

use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use sha2::{Digest, Sha256};
use tcc_frontend::{Language, compile, parse_only};

/// About `bytes` of Python: helpers with loops, branches, arithmetic,
/// collections and calls, all inside the reference's subset too.
pub fn python_source(bytes: usize) -> String {
    let mut s = String::from("from tcc_engine.primitives import effect, program\n\n");
    let mut i = 0;
    while s.len() < bytes {
        s += &format!("def f{i}(a, b):\n    total = 0\n    items = []\n");
        for j in 0..4 {
            s += &format!(
                "    k{j} = 0\n    while k{j} < a:\n        k{j} = k{j} + 1\n        if k{j} % 3 == 0:\n            total = total + k{j} * b\n        elif k{j} % 5 == 0:\n            total = total - b // 2\n        else:\n            items.append({{\"k\": k{j}, \"sq\": k{j} * k{j}, \"tag\": \"item\"}})\n"
            );
        }
        s += "    d = {\"total\": total, \"n\": len(items), \"first\": items[0] if len(items) > 0 else None}\n    if total > 100 and b != 0:\n        return [d, total / b, a ** 2]\n    return [d, total, a - b]\n\n";
        i += 1;
    }
    s +=
        "@program\nasync def run():\n    r = await effect(\"start\", start)\n    return f0(3, 4)\n";
    s
}

/// The same shape in TypeScript.
pub fn typescript_source(bytes: usize) -> String {
    let mut s = String::from("import { effect } from \"@tcc-engine/primitives\";\n\n");
    let mut i = 0;
    while s.len() < bytes {
        s += &format!(
            "function f{i}(a: number, b: number) {{\n  let total = 0;\n  const items = [];\n"
        );
        for j in 0..4 {
            s += &format!(
                "  let k{j} = 0;\n  while (k{j} < a) {{\n    k{j} = k{j} + 1;\n    if (k{j} % 3 === 0) {{\n      total = total + k{j} * b;\n    }} else if (k{j} % 5 === 0) {{\n      total = total - b / 2;\n    }} else {{\n      items.push({{ k: k{j}, sq: k{j} * k{j}, tag: \"item\" }});\n    }}\n  }}\n"
            );
        }
        s += "  const d = { total: total, n: items.length, first: items.length > 0 ? items[0] : null };\n  if (total > 100 && b !== 0) {\n    return [d, total / b, a ** 2];\n  }\n  return [d, total, a - b];\n}\n\n";
        i += 1;
    }
    s += "export default async function run() {\n  const r = await effect(\"start\");\n  return f0(3, 4);\n}\n";
    s
}

const MB: usize = 1 << 20;

fn bench(c: &mut Criterion) {
    for (lang, src) in [
        (Language::Python, python_source(MB)),
        (Language::TypeScript, typescript_source(MB)),
    ] {
        compile(&src, "bench", lang).expect("generated source compiles");
        let mut g = c.benchmark_group(format!("{lang:?}"));
        g.throughput(Throughput::Bytes(src.len() as u64))
            .sample_size(10);
        g.bench_function("parse", |b| b.iter(|| parse_only(black_box(&src), lang)));
        g.bench_function("compile", |b| {
            b.iter(|| compile(black_box(&src), "bench", lang))
        });
        // The floor the spec sets: SHA-256 of the artifact's canonical bytes.
        let canonical = compile(&src, "bench", lang)
            .map(|a| tcc_ir::hash_input(&a))
            .unwrap_or_default();
        g.bench_function("sha256_of_canonical_artifact", |b| {
            b.iter(|| Sha256::digest(black_box(&canonical)))
        });
        g.finish();
    }
}

/// CPU time (user + system, all threads) of this process, from
/// `CLOCK_PROCESS_CPUTIME_ID`: unlike wall time it does not grow when other
/// jobs share the cores.
fn cpu_time() -> Option<Duration> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Some(Duration::new(
        u64::try_from(t.tv_sec).ok()?,
        u32::try_from(t.tv_nsec).ok()?,
    ))
}

/// Best of `n` samples of `reps` runs each, per run, in CPU time where
/// available (else wall time).
fn best_of(n: usize, reps: u32, mut f: impl FnMut()) -> Duration {
    (0..n)
        .map(|_| {
            let (t, c) = (Instant::now(), cpu_time());
            for _ in 0..reps {
                f();
            }
            let d = match (c, cpu_time()) {
                (Some(a), Some(b)) => b.saturating_sub(a),
                _ => t.elapsed(),
            };
            d / reps
        })
        .min()
        .unwrap_or_default()
}

/// Parse and compile CPU times measured here, and the reference frontend's
/// compile CPU time of the same Python file (timed inside its interpreter).
fn ratios() {
    let src = python_source(MB);
    for (lang, text) in [
        (Language::Python, src.clone()),
        (Language::TypeScript, typescript_source(MB)),
    ] {
        let (rounds, reps) = if lang == Language::TypeScript {
            (15, 4)
        } else {
            (5, 1)
        };
        let artifact = compile(&text, "bench", lang).expect("generated source compiles");
        // The exact bytes the spec's artifact hash digests.
        let canonical = tcc_ir::hash_input(&artifact);
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        // Baseline and subjects alternate, so a change of load hits all.
        let (mut parse, mut full, mut sha, mut hash, mut ring_sha) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            parse.push(best_of(1, reps, || drop(parse_only(&text, lang))));
            full.push(best_of(1, 1, || drop(compile(&text, "bench", lang))));
            sha.push(best_of(1, 1, || {
                black_box(Sha256::digest(&canonical));
            }));
            hash.push(best_of(1, 1, || {
                black_box(tcc_ir::compute_hash(&artifact));
            }));
            ring_sha.push(best_of(1, 1, || {
                black_box(ring::digest::digest(&ring::digest::SHA256, &canonical));
            }));
        }
        let best = |v: &[Duration]| v.iter().copied().min().unwrap_or_default();
        let (parse, full, sha, hash, ring_sha) = (
            best(&parse),
            best(&full),
            best(&sha),
            best(&hash),
            best(&ring_sha),
        );
        println!(
            "{lang:?} {} bytes, {} instructions, canonical encoding {} bytes: CPU time parse {:.1} ms, compile {:.1} ms, compile/parse {:.2} (target <= 3); SHA-256 of the canonical bytes alone {:.1} ms = {:.2}x parse; encode+hash (compute_hash) {:.1} ms = {:.2}x parse; SHA-256 of the same bytes with ring {:.1} ms = {:.2}x parse",
            text.len(),
            artifact.program.total_instructions(),
            canonical.len(),
            ms(parse),
            ms(full),
            ms(full) / ms(parse),
            ms(sha),
            ms(sha) / ms(parse),
            ms(hash),
            ms(hash) / ms(parse),
            ms(ring_sha),
            ms(ring_sha) / ms(parse),
        );
    }
    let py = std::env::var_os("IRKIT_TCC_REFERENCE_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/tcc-ref-venv/bin/python")
        });
    if !py.exists() {
        println!(
            "reference frontend not installed: skipped the comparison (bash scripts/install-tcc-reference.sh)"
        );
        return;
    }
    let file = std::env::temp_dir().join(format!("irkit-bench-{}.py", std::process::id()));
    std::fs::write(&file, &src).expect("write bench source");
    let script = "import sys, time, tcc_engine\nsrc = open(sys.argv[1]).read()\nbest = 1e9\nfor _ in range(3):\n    t = time.process_time()\n    tcc_engine.artifact_json(tcc_engine.compile(src, 'bench.py'))\n    best = min(best, time.process_time() - t)\nprint(best)\n";
    let out = Command::new(&py)
        .arg("-c")
        .arg(script)
        .arg(&file)
        .output()
        .expect("reference runs");
    let _ = std::fs::remove_file(&file);
    let reference: f64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(f64::NAN);
    let ours = best_of(5, 2, || drop(compile(&src, "bench.py", Language::Python))).as_secs_f64();
    println!(
        "CPU time, reference Python frontend: {:.1} ms, irkit {:.1} ms: irkit is {:.1}x faster (target >= 20) {}",
        reference * 1e3,
        ours * 1e3,
        reference / ours,
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

criterion_group!(benches, bench);

fn main() {
    ratios();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
