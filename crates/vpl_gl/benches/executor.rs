//! The CPU reference executor against llvmpipe, same draw, same run: a
//! 256×256 frame of the `texture-vertex-ambient-color` built-in (the 8×8
//! checkerboard, per-vertex colours), CPU `vpl::exec::draw` (two threads)
//! versus `vpl_gl::draw` with the program already linked (upload, draw,
//! read-back). The goal (issue 38) is the CPU within 5× of llvmpipe.
//!
//! After criterion's two measurements the bench prints the medians and
//! their ratio over alternated draws (CPU, llvmpipe, CPU, …), which a
//! changing machine load affects alike.
//!
//! `cargo bench -p vpl_gl --bench executor -- --warm-up-time 1 --measurement-time 3`
//! (in `vpl_gl` rather than `vpl`: `vpl` cannot depend on its GL harness).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use vpl::exec::{self, DrawRequest, Executable};
use vpl::programs::{self, Program};
use vpl_gl::{AttributeValue, RenderRequest, Texture};

/// Rounds of the alternated comparison (one CPU draw, one llvmpipe draw).
const ALTERNATED_ROUNDS: usize = 41;

/// CPU time of the whole process (every thread, llvmpipe's rasterizer
/// threads included): unlike wall time, it does not count the time other
/// processes on a loaded machine take from the draw.
#[allow(unsafe_code)] // one libc call (FFI), like the crate's EGL/GL bindings
fn process_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the call.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut now) };
    assert_eq!(status, 0, "clock_gettime(CLOCK_PROCESS_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn frame(c: &mut Criterion) {
    let published = programs::create(Program::TextureVertexAmbientColor).expect("built-in");
    let texture = Texture::checkerboard();
    let colors = AttributeValue::PerVertex([
        [1.0, 0.0, 0.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
        [1.0, 1.0, 1.0, 1.0],
    ]);
    let executable = Executable::new(&published).expect("compiles for the CPU");
    let mut cpu = DrawRequest::new(&executable, 256, 256);
    cpu.textures = vec![("texture".into(), texture.to_cpu())];
    cpu.attributes = vec![(2, colors.to_cpu())];

    let mut group = c.benchmark_group("texture-vertex-ambient-color 256x256");
    group.sample_size(20);
    group.bench_function("cpu_executor", |b| {
        b.iter(|| black_box(exec::draw(&executable, black_box(&cpu)).expect("draws")))
    });
    match vpl_gl::GlContext::new() {
        Ok(context) => {
            let artifact =
                vpl::backends::glsl::compile(&published, vpl::backends::glsl::VERSION_420)
                    .expect("compiles");
            let program = vpl_gl::LinkedProgram::build(&context, &artifact).expect("links");
            let mut request = RenderRequest::new(&artifact, 256, 256);
            request.textures = vec![("texture".into(), texture)];
            request.attributes = vec![(2, colors)];
            let reference = vpl_gl::draw(&program, &artifact, &request).expect("draws");
            let ours = vpl_gl::Image::from(exec::draw(&executable, &cpu).expect("draws"));
            assert_eq!(reference, ours, "the CPU frame differs from llvmpipe's");
            group.bench_function("llvmpipe", |b| {
                b.iter(|| {
                    black_box(
                        vpl_gl::draw(&program, &artifact, black_box(&request)).expect("draws"),
                    )
                })
            });
            // Alternated rounds in the same run: on a shared machine the
            // load changes between criterion's two measurements, so the
            // ratio is also taken from draws interleaved one by one.
            let (mut cpu_times, mut gl_times) = (Vec::new(), Vec::new());
            let (mut cpu_work, mut gl_work) = (Vec::new(), Vec::new());
            for _ in 0..ALTERNATED_ROUNDS {
                let (start, work) = (Instant::now(), process_cpu_time());
                black_box(exec::draw(&executable, black_box(&cpu)).expect("draws"));
                cpu_times.push(start.elapsed());
                cpu_work.push(process_cpu_time().saturating_sub(work));
                let (start, work) = (Instant::now(), process_cpu_time());
                black_box(vpl_gl::draw(&program, &artifact, black_box(&request)).expect("draws"));
                gl_times.push(start.elapsed());
                gl_work.push(process_cpu_time().saturating_sub(work));
            }
            let report = |what: &str, cpu: Duration, gl: Duration| {
                eprintln!(
                    "alternated, {ALTERNATED_ROUNDS} rounds, {what}: cpu_executor median {:.3} ms, \
                     llvmpipe median {:.3} ms, ratio {:.2}",
                    cpu.as_secs_f64() * 1e3,
                    gl.as_secs_f64() * 1e3,
                    cpu.as_secs_f64() / gl.as_secs_f64()
                )
            };
            report("wall time", median(&mut cpu_times), median(&mut gl_times));
            report(
                "process CPU time (all threads, llvmpipe's included)",
                median(&mut cpu_work),
                median(&mut gl_work),
            );
        }
        Err(e) => eprintln!("llvmpipe baseline skipped: {e}"),
    }
    group.finish();
}

criterion_group!(benches, frame);
criterion_main!(benches);
