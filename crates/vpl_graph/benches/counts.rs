//! Where a 500-node graph's compilation goes, against `vpl check` of the
//! generated text: each phase's median time and its heap allocations, and
//! the two sides as separate functions for an instruction count under
//! callgrind (noise-free, unlike wall time on a shared machine).
//!
//! ```sh
//! cargo bench -p vpl_graph --bench counts            # phases: time, allocations
//! valgrind --tool=callgrind --callgrind-out-file=cg.out target/release/deps/counts-HASH
//! callgrind_annotate --inclusive=yes cg.out | grep -E 'counts::(compile|check)_side'
//! ```
//!
//! The ratio of the two sides' inclusive instruction counts is the
//! noise-free form of the bound `compile < 2x check` (`docs/vpl/graph.md`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[path = "../tests/common/mod.rs"]
mod common;

/// The system allocator, counting allocations.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is System's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const ROUNDS: usize = 50;

#[inline(never)]
fn compile_side(json: &str) -> usize {
    match vpl_graph::compile(black_box(json), "bench", vpl_graph::Options::default()) {
        Ok(c) => c.text.len(),
        Err(_) => 0,
    }
}

#[inline(never)]
fn check_side(text: &str) -> bool {
    vpl::text::read(black_box(text.as_bytes()), "bench").is_ok()
}

/// Times and allocations of one phase over the rounds.
#[derive(Default)]
struct Phase {
    times: Vec<f64>,
    allocations: u64,
    faults: u64,
}

impl Phase {
    fn run<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let a = ALLOCATIONS.load(Ordering::Relaxed);
        let faults = minor_faults();
        let t = Instant::now();
        let out = f();
        self.times.push(t.elapsed().as_secs_f64() * 1e3);
        self.faults += minor_faults() - faults;
        self.allocations = ALLOCATIONS.load(Ordering::Relaxed) - a;
        out
    }
    fn median(&mut self) -> f64 {
        self.times.sort_by(f64::total_cmp);
        self.times[self.times.len() / 2]
    }
}

/// The process's minor page faults so far (Linux `/proc/self/stat`; 0
/// elsewhere).
fn minor_faults() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1;
            after.split_whitespace().nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}

fn main() {
    use vpl_graph::{build, check, emit, lower, resources, typing};
    // Cargo passes `--bench`; under callgrind, `ROUNDS` is still small.
    let doc = common::sized(0x5eed, 500);
    let json = doc.to_string();
    let text = vpl_graph::compile(&json, "bench", vpl_graph::Options::default())
        .expect("the benchmark graph compiles")
        .text;
    assert!(check_side(&text), "the generated text verifies");
    // A fingerprint of the generated texts (this graph, the examples and
    // generated graphs), to compare the output of two compiler versions.
    let mut fingerprint = std::collections::hash_map::DefaultHasher::new();
    let examples =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/vpl/graphs");
    let mut inputs = vec![json.clone()];
    for name in ["textured_tint", "checker", "subgraph_twice"] {
        inputs.push(
            std::fs::read_to_string(examples.join(format!("{name}.json"))).unwrap_or_default(),
        );
    }
    inputs.extend((1..=40u64).map(|seed| common::Gen::document(seed, 5).to_string()));
    let mut bytes = 0;
    for input in &inputs {
        for annotate in [false, true] {
            let out = vpl_graph::compile(input, "bench", vpl_graph::Options { annotate })
                .map(|c| c.text)
                .unwrap_or_else(|e| e.to_string());
            bytes += out.len();
            std::hash::Hash::hash(&out, &mut fingerprint);
        }
    }
    eprintln!(
        "generated text of {} graphs: {bytes} bytes, fingerprint {:016x}",
        inputs.len() * 2,
        std::hash::Hasher::finish(&fingerprint)
    );
    let names = [
        "json",
        "check",
        "typing",
        "resources",
        "lower",
        "print",
        "build",
        "verify",
    ];
    let mut phases: Vec<Phase> = names.iter().map(|_| Phase::default()).collect();
    let (mut compile, mut checking) = (Phase::default(), Phase::default());
    let mut faults = (0u64, 0u64);
    for _ in 0..ROUNDS {
        let parsed = phases[0].run(|| vpl_graph::parse(&json).expect("parses"));
        let checked = phases[1].run(|| check::check(&parsed).expect("checks"));
        let types = phases[2].run(|| typing::infer(&checked).expect("types"));
        let res = phases[3].run(|| resources::collect(&checked).expect("resources"));
        let (program, _) = phases[4].run(|| lower::lower(&checked, &types, &res, false, false));
        let printed = phases[5].run(|| emit::print(&program, &checked.records));
        let module = phases[6].run(|| build::module(&program, &checked.records).expect("builds"));
        let verified = phases[7].run(|| vpl::verify::Verified::new(module).is_ok());
        assert!(verified && printed == text);
        let f0 = minor_faults();
        black_box(compile.run(|| compile_side(&json)));
        let f1 = minor_faults();
        black_box(checking.run(|| check_side(&text)));
        let f2 = minor_faults();
        faults.0 += f1 - f0;
        faults.1 += f2 - f1;
    }
    let (c, k) = (compile.median(), checking.median());
    eprintln!(
        "{ROUNDS} rounds: compile median {c:.3} ms ({} allocations), check median {k:.3} ms ({} allocations): {:.2}x",
        compile.allocations,
        checking.allocations,
        c / k
    );
    eprintln!(
        "  minor page faults per round: compile {:.1}, check {:.1}",
        faults.0 as f64 / ROUNDS as f64,
        faults.1 as f64 / ROUNDS as f64
    );
    for (name, p) in names.iter().zip(&mut phases) {
        eprintln!(
            "  {name:<10} {:.3} ms  {:>6} allocations  {:>6.1} page faults",
            p.median(),
            p.allocations,
            p.faults as f64 / ROUNDS as f64
        );
    }
}
