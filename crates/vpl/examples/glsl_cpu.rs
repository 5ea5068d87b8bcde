//! Runs one GLSL phase repeatedly on the generated benchmark module, for
//! CPU-time measurement on a shared machine:
//! `perf stat -e task-clock target/release/examples/glsl_cpu emit 10`
//! (phases: gen, emit = `compile_module`, compile = materialize + emit).
//! Subtract the `gen` run's task-clock to get the phase's CPU time.

#[path = "../benches/generate.rs"]
mod generate;

use vpl::backends::glsl;

fn main() {
    let mut args = std::env::args().skip(1);
    let phase = args.next().unwrap_or_else(|| "emit".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let text = generate::module_text(12 << 20);
    let module = vpl::text::read(text.as_bytes(), "gen").expect("valid");
    let published = vpl::VerifiedModule::new(&module).expect("publishes");
    let start = std::time::Instant::now();
    for _ in 0..n {
        match phase.as_str() {
            "emit" => drop(std::hint::black_box(
                glsl::compile_module(&module, glsl::VERSION_420).unwrap(),
            )),
            "compile" => drop(std::hint::black_box(
                glsl::compile(&published, glsl::VERSION_420).unwrap(),
            )),
            _ => {}
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{phase}: {:.1} MB x {n} in {secs:.2} s wall = {:.0} MB/s",
        published.text().len() as f64 / 1e6,
        published.text().len() as f64 * n as f64 / 1e6 / secs
    );
}
