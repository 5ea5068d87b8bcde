//! Decode+validate throughput on a generated module of at least 10 MB,
//! against two baselines measured in the same run:
//! (a) plain SHA-256 over the artifact bytes (issue 9's named baseline);
//! (b) SHA-256 over exactly the spec-mandated identity preimages (every
//!     distinct logical identity a validator must recompute; the floor).
//! After the criterion groups, a same-run summary prints both ratios from
//! interleaved rounds and the share of each decoding phase. The same
//! artifact is also measured with its ancillary source map and provenance
//! after the payload (docs/zlm/ancillary.md): decode+validate of the file
//! plus reading, hash-verifying and decoding the container's records.
//! On a loaded machine the one-thread figures that count are the thread CPU
//! times (`zlm decode CPU time` line), not the wall-clock ones.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::{Duration, Instant};
use zlm::decode::{Threads, decode, decode_with};
use zlm::hash::sha256;

#[path = "common/bench_module.rs"]
mod bench_module;
use bench_module::{annotated, artifact};

/// Every distinct identity preimage of the module (duplicates, such as one
/// constant used twice, are hashed once by a validator).
fn preimages(bytes: &[u8]) -> Vec<Vec<u8>> {
    let module = decode(bytes).expect("valid").into_module();
    let (_, facts) = zlm::ids::compute(&module, true).expect("ids");
    let mut seen = std::collections::BTreeSet::new();
    facts
        .iter()
        .filter(|f| seen.insert(f.digest))
        .map(|f| f.preimage())
        .collect()
}

/// Decode+validate of an annotated file and its verified source map.
fn decode_with_map(file: &[u8], threads: Threads) -> usize {
    let (checked, _) = decode_with(black_box(file), threads).expect("valid");
    let records = zlm::ancillary::Records::of_file(file)
        .expect("container")
        .expect("present");
    let map = records.source_map.expect("map").expect("verified");
    black_box(checked);
    map.functions.len()
}

fn hash_all(pre: &[Vec<u8>]) -> u8 {
    pre.iter().fold(0u8, |a, p| a ^ sha256(black_box(p))[0])
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// CPU time of the calling thread (`/proc/thread-self/schedstat`: time on
/// a CPU in nanoseconds), so a loaded machine's waiting is not counted.
/// `None` where the file is missing (not Linux).
fn thread_cpu() -> Option<Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos = text.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanos))
}

/// Wall time and, where available, thread CPU time of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration, Option<Duration>) {
    let cpu = thread_cpu();
    let t = Instant::now();
    let out = f();
    let wall = t.elapsed();
    let cpu = cpu.and_then(|before| Some(thread_cpu()? - before));
    (out, wall, cpu)
}

fn bench(c: &mut Criterion) {
    let bytes = artifact();
    // `ZLM_DECODE_LOOP=N`: only N one-thread decodes (for a profiler).
    if let Some(n) = std::env::var("ZLM_DECODE_LOOP")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
    {
        for _ in 0..n {
            black_box(decode_with(black_box(&bytes), Threads::One).expect("valid"));
        }
        return;
    }
    let pre = preimages(&bytes);
    let pre_bytes: usize = pre.iter().map(Vec::len).sum();
    let with_map = annotated(&bytes);
    let mut g = c.benchmark_group("zlm");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.sample_size(10);
    g.bench_function("sha256_baseline", |b| b.iter(|| sha256(black_box(&bytes))));
    g.bench_function("identity_preimages_sha256", |b| b.iter(|| hash_all(&pre)));
    g.bench_function("decode_validate_1_thread", |b| {
        b.iter(|| decode_with(black_box(&bytes), Threads::One).expect("valid"))
    });
    g.bench_function("decode_validate_2_threads", |b| {
        b.iter(|| decode_with(black_box(&bytes), Threads::Two).expect("valid"))
    });
    g.bench_function("decode_validate_with_source_map_2_threads", |b| {
        b.iter(|| decode_with_map(&with_map, Threads::Two))
    });
    g.finish();

    // Same-run summary from interleaved rounds (medians).
    let rounds = 9;
    let (mut sha, mut ids, mut one, mut two) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut phases1, mut phases2) = (Vec::new(), Vec::new());
    let (mut map1, mut map2) = (Vec::new(), Vec::new());
    // Thread CPU time of the one-thread measurements (a loaded machine's
    // waiting excluded): preimage hashing, decode, decode with the map.
    let (mut ids_cpu, mut one_cpu, mut map1_cpu) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (_, wall, cpu) = timed(|| black_box(decode_with_map(&with_map, Threads::One)));
        map1.push(wall);
        map1_cpu.extend(cpu);
        let t = Instant::now();
        black_box(decode_with_map(&with_map, Threads::Two));
        map2.push(t.elapsed());
        let t = Instant::now();
        black_box(sha256(black_box(&bytes)));
        sha.push(t.elapsed());
        let (_, wall, cpu) = timed(|| black_box(hash_all(&pre)));
        ids.push(wall);
        ids_cpu.extend(cpu);
        let (decoded, wall, cpu) =
            timed(|| decode_with(black_box(&bytes), Threads::One).expect("valid"));
        one.push(wall);
        one_cpu.extend(cpu);
        phases1.push(decoded.1);
        drop(decoded);
        let t = Instant::now();
        let (_, p) = decode_with(black_box(&bytes), Threads::Two).expect("valid");
        two.push(t.elapsed());
        phases2.push(p);
    }
    if ids_cpu.len() == rounds {
        let (ids_cpu, one_cpu, map1_cpu) = (median(ids_cpu), median(one_cpu), median(map1_cpu));
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "zlm decode CPU time (thread, medians): sha256(identity preimages) {:.2} ms | decode+validate 1 thread {:.2} ms = {:.2}x | with the source map {:.2} ms = {:.2}x",
            ms(ids_cpu),
            ms(one_cpu),
            one_cpu.as_secs_f64() / ids_cpu.as_secs_f64(),
            ms(map1_cpu),
            map1_cpu.as_secs_f64() / ids_cpu.as_secs_f64()
        );
    }
    let (sha, ids, one, two) = (median(sha), median(ids), median(one), median(two));
    let (map1, map2) = (median(map1), median(map2));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "zlm decode summary: {} artifact bytes, {} identity-preimage bytes ({:.2}x)",
        bytes.len(),
        pre_bytes,
        pre_bytes as f64 / bytes.len() as f64
    );
    println!(
        "  sha256(artifact) {:.2} ms | sha256(identity preimages) {:.2} ms | decode+validate 1 thread {:.2} ms | 2 threads {:.2} ms",
        ms(sha),
        ms(ids),
        ms(one),
        ms(two)
    );
    for (name, dec) in [("1 thread ", one), ("2 threads", two)] {
        println!(
            "  {name}: ratio (a) decode+validate / sha256(artifact) = {:.1}x, (b) / sha256(identity preimages) = {:.2}x",
            dec.as_secs_f64() / sha.as_secs_f64(),
            dec.as_secs_f64() / ids.as_secs_f64()
        );
    }
    println!(
        "  with the source map ({} bytes after the payload): 1 thread {:.2} ms, 2 threads {:.2} ms",
        with_map.len() - bytes.len(),
        ms(map1),
        ms(map2)
    );
    for (name, dec) in [("1 thread  + map", map1), ("2 threads + map", map2)] {
        println!(
            "  {name}: ratio (b) decode+validate+map / sha256(identity preimages) = {:.2}x",
            dec.as_secs_f64() / ids.as_secs_f64()
        );
    }
    let pick = |phases: &[zlm::decode::Phases], f: fn(&zlm::decode::Phases) -> Duration| {
        median(phases.iter().map(f).collect())
    };
    let line = |name: &str, d: Duration, total: Duration| {
        println!(
            "    {name:<44} {:>8.2} ms  {:>5.1}%  ({:.1}x sha256(artifact))",
            ms(d),
            100.0 * d.as_secs_f64() / total.as_secs_f64(),
            d.as_secs_f64() / sha.as_secs_f64()
        );
    };
    println!("  phase split, 1 thread (phases sum to the total):");
    line("structural decode", pick(&phases1, |p| p.structural), one);
    line(
        "identity recomputation",
        pick(&phases1, |p| p.identities),
        one,
    );
    line("model validation", pick(&phases1, |p| p.model), one);
    line("canonical comparison", pick(&phases1, |p| p.canonical), one);
    line(
        "semantic check (zlm::check)",
        pick(&phases1, |p| p.semantic),
        one,
    );
    println!(
        "  2 threads: structural decode (both threads), then the body thread beside the calling thread:"
    );
    line("structural decode", pick(&phases2, |p| p.structural), two);
    line(
        "body thread: waves 1-11 + function bodies",
        pick(&phases2, |p| p.identities),
        two,
    );
    let calling = |p: &zlm::decode::Phases| p.shared + p.model + p.canonical + p.semantic;
    line(
        "calling thread: all of the following",
        pick(&phases2, calling),
        two,
    );
    line(
        "  identity share (constants, 3/8 of ops)",
        pick(&phases2, |p| p.shared),
        two,
    );
    line("  model validation", pick(&phases2, |p| p.model), two);
    line(
        "  canonical comparison",
        pick(&phases2, |p| p.canonical),
        two,
    );
    line(
        "  semantic check (zlm::check)",
        pick(&phases2, |p| p.semantic),
        two,
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
