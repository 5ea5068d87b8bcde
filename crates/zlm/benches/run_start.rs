//! Starting a run (issue 17): decoding a large artifact with its imports
//! resolved, then preparing the interpreter (`Interp::new` on the checked
//! module, which re-validates nothing), against decoding and validating the
//! same bytes alone. The two are measured in alternating rounds in the same
//! run; the summary prints the ratio of their medians (target ≤ 1.1).

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use zlm::decode::{decode, decode_linked};
use zlm::interp::Interp;
use zlm::write::write;

#[path = "common/bench_module.rs"]
#[allow(dead_code)] // `annotated` is the decode benchmark's
mod bench_module;
use bench_module::artifact;

fn start(bytes: &[u8]) -> usize {
    let checked = decode_linked(bytes, &[]).expect("valid");
    start_prepared(&checked)
}

/// What starting a run cost before issue 17: decoding, then `Interp::new`
/// writing the canonical bytes again, recomputing every identity and
/// rerunning the semantic check before preparing the interpreter.
fn start_revalidating(bytes: &[u8]) -> usize {
    let checked = decode_linked(bytes, &[]).expect("valid");
    let m = checked.module();
    write(m).expect("write");
    let r = zlm::check::Resolved::new(m).expect("ids");
    zlm::check::check_resolved(&r).expect("check");
    start_prepared(&checked)
}

fn start_prepared(checked: &zlm::decode::Checked) -> usize {
    let it = Interp::new(checked).expect("runnable");
    it.resolved().module.declarations.len()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn bench(c: &mut Criterion) {
    let bytes = artifact();
    let mut g = c.benchmark_group("zlm_run_start");
    g.sample_size(10);
    g.bench_function("decode_validate", |b| {
        b.iter(|| decode(black_box(&bytes)).expect("valid"))
    });
    g.bench_function("decode_validate_and_prepare_run", |b| {
        b.iter(|| start(black_box(&bytes)))
    });
    g.finish();
    let (mut alone, mut started, mut before) = (Vec::new(), Vec::new(), Vec::new());
    let mut prepare = Vec::new();
    let checked = decode(&bytes).expect("valid");
    for _ in 0..11 {
        let t = Instant::now();
        black_box(start_prepared(black_box(&checked)));
        prepare.push(t.elapsed());
        let t = Instant::now();
        black_box(decode(black_box(&bytes)).expect("valid"));
        alone.push(t.elapsed());
        let t = Instant::now();
        black_box(start(black_box(&bytes)));
        started.push(t.elapsed());
        let t = Instant::now();
        black_box(start_revalidating(black_box(&bytes)));
        before.push(t.elapsed());
    }
    let (alone, started, before) = (median(alone), median(started), median(before));
    let prepare = median(prepare);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "zlm run start: {} artifact bytes | decode+validate {:.2} ms | + Interp::new {:.2} ms (ratio {:.3}) | revalidating as before {:.2} ms (ratio {:.3}) | Interp::new alone {:.2} ms (1 + {:.3})",
        bytes.len(),
        ms(alone),
        ms(started),
        started.as_secs_f64() / alone.as_secs_f64(),
        ms(before),
        before.as_secs_f64() / alone.as_secs_f64(),
        ms(prepare),
        prepare.as_secs_f64() / alone.as_secs_f64()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
