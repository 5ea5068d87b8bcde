//! The command-line pipelines on the large generated module (about 12 MB
//! of VPL text), measured in the same run and alternating, so that load
//! from other processes falls on every pipeline alike:
//!
//! * `check` — what `irkit vpl check FILE` does: read (decode, parse,
//!   bind, verify);
//! * `fmt` — what `irkit vpl canon FILE -o OUT` does: read, write the
//!   canonical text (print and read back through the verifier), save it;
//! * `glsl` — what `irkit vpl glsl FILE -o DIR` does: read, publish (print
//!   and read back), compile the snapshot, save the two shaders and the
//!   reflection;
//! * `glslang` — `glslangValidator` parsing and checking the two shaders
//!   `glsl` emitted (skipped when it is not installed).
//!
//! Each round runs every pipeline once, in that order; the medians and the
//! ratios to `check` (and of `glsl` to `glslang`) are printed at the end,
//! then criterion measures `check` and `glsl` on their own.
//!
//! `cargo bench -p vpl --bench pipeline`

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};
use vpl::backends::glsl;

#[path = "generate.rs"]
mod generate;

/// Rounds of the alternating measurement.
const ROUNDS: usize = 7;

fn check(bytes: &[u8]) {
    drop(black_box(vpl::text::read(bytes, "bench.vpl").unwrap()));
}

fn fmt(bytes: &[u8], dir: &Path) {
    let module = vpl::text::read_verified(bytes, "bench.vpl").unwrap();
    let text = vpl::text::write_verified(&module).unwrap();
    std::fs::write(dir.join("bench.fmt.vpl"), text).unwrap();
}

fn glsl(bytes: &[u8], dir: &Path) {
    let module = vpl::text::read_verified(bytes, "bench.vpl").unwrap();
    let published = vpl::VerifiedModule::publish(&module).unwrap();
    let artifact = glsl::compile(&published, glsl::VERSION_420).unwrap();
    std::fs::write(dir.join("bench.vert"), artifact.vertex_code()).unwrap();
    std::fs::write(dir.join("bench.frag"), artifact.fragment_code()).unwrap();
    std::fs::write(dir.join("bench.reflect.json"), artifact.reflection_json()).unwrap();
}

/// Runs glslangValidator on the emitted shaders; false when it is missing.
fn glslang(dir: &Path) -> bool {
    ["bench.vert", "bench.frag"].iter().all(|f| {
        std::process::Command::new("glslangValidator")
            .arg(dir.join(f))
            .stdout(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64()
}

fn pipelines(c: &mut Criterion) {
    let source = generate::module_text(12 << 20);
    let bytes = source.as_bytes();
    let dir = std::env::temp_dir().join(format!("vpl-pipeline-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    glsl(bytes, &dir);
    let have_glslang = glslang(&dir);
    eprintln!(
        "input {} bytes of VPL; output {} + {} bytes of GLSL; glslangValidator {}",
        bytes.len(),
        std::fs::metadata(dir.join("bench.vert")).map_or(0, |m| m.len()),
        std::fs::metadata(dir.join("bench.frag")).map_or(0, |m| m.len()),
        if have_glslang { "found" } else { "missing" }
    );
    let mut times: [Vec<Duration>; 4] = Default::default();
    for _ in 0..ROUNDS {
        let t = Instant::now();
        check(bytes);
        times[0].push(t.elapsed());
        let t = Instant::now();
        fmt(bytes, &dir);
        times[1].push(t.elapsed());
        let t = Instant::now();
        glsl(bytes, &dir);
        times[2].push(t.elapsed());
        if have_glslang {
            let t = Instant::now();
            glslang(&dir);
            times[3].push(t.elapsed());
        }
    }
    let [check_t, fmt_t, glsl_t, glslang_t] = times.map(|v| match v.is_empty() {
        true => f64::NAN,
        false => median(v),
    });
    eprintln!(
        "medians of {ROUNDS} alternating rounds: check {check_t:.3} s, fmt {fmt_t:.3} s, glsl {glsl_t:.3} s, glslang {glslang_t:.3} s"
    );
    eprintln!(
        "ratios: fmt/check {:.2}, glsl/check {:.2}, glsl/glslang {:.3}",
        fmt_t / check_t,
        glsl_t / check_t,
        glsl_t / glslang_t
    );

    let mut group = c.benchmark_group("pipeline");
    group.sample_size(10);
    group.bench_function("check", |b| b.iter(|| check(bytes)));
    group.bench_function("glsl", |b| b.iter(|| glsl(bytes, &dir)));
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, pipelines);
criterion_main!(benches);
