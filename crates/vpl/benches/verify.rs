//! Verifier benchmarks (issue 3).
//!
//! * `text_module`: the ~12 MB module generated for the text benchmark
//!   (`generate.rs`, shared with `benches/text.rs`): `read` vs `verify`.
//! * `large_module`: a generated module with many helpers (acyclic call
//!   chain), diamonds, loops, aggregate storage paths and outputs, at two
//!   sizes. `read` is the whole text reader (decode, parse, bind and
//!   verify); `verify` is the verifier alone on the read module. The
//!   verifier's share is `verify / read`; parsing costs `read - verify`.
//! * `deep_loops`: one function whose CFG is a loop nest as deep as the
//!   function is large (2 blocks per nesting level), at 1 000 and 10 000
//!   blocks: the growth of `verify` from 1k to 10k blocks shows whether
//!   verification is linear in the graph size regardless of nesting depth.
//!
//! Run: `cargo bench -p vpl --bench verify -- --warm-up-time 1 --measurement-time 3`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::fmt::Write as _;
use std::hint::black_box;

#[path = "generate.rs"]
mod generate;

const HEADER: &str = r#"(module 1
  (types
    (type Void void)
    (type Bool bool)
    (type Int int)
    (type Float float)
    (type Vec2 vector float 2)
    (type Vec4 vector float 4)
    (type Mat2 matrix 2 2)
    (type Cell record "Cell" (field "color" Vec4) (field "weight" Int))
    (type Cells array Cell 4)
    (type Floats array Float 4))
  (uniforms
    (scalar tint "tint" Vec4)
    (array weights "weights" Float 4))
"#;

/// A helper `h{i}` with `blocks` blocks: diamonds and a counted loop, local
/// aggregates with nested paths, output writes, and a call to `h{i-1}`.
fn helper(out: &mut String, i: usize, blocks: usize, output: &str) {
    let _ = write!(
        out,
        r#"      (function h{i} "helper{i}" Float
        (parameters (parameter p Float))
        (registers
          (register r0 Float) (register r1 Int) (register r2 Bool) (register r3 Vec4)
          (register r4 Cell) (register r5 Cells) (register r6 Float) (register r7 Mat2)
          (register r8 Vec2))
        (block b0
          (load r0 (parameter p))
          (copy r1 (int 0))
          (load r3 (uniform tint))
          (construct r4 r3 r1)
          (construct r5 r4 r4 r4 r4)
          (construct r7 (float 1.0))
          (construct r8 (float 0.5))
          (branch b1))
"#
    );
    let n = blocks.max(4);
    // Blocks b1..b(n-2) in groups of 3: test / body / join.
    let mut k = 1;
    while k + 3 < n {
        let (t, body, join) = (k, k + 1, k + 2);
        let next = k + 3;
        let _ = write!(
            out,
            r#"        (block b{t}
          (less r2 r1 (int 8))
          (branch_if r2 b{body} b{join}))
        (block b{body}
          (add r1 r1 (int 1))
          (multiply r0 r0 (float 1.5))
          (multiply r8 r7 r8)
          (store (member_ref (index_ref (local r5) (int 2)) "weight") r1)
          (load r6 (index_ref (uniform weights) r1))
          (add r0 r0 r6)
          (branch b{t}))
        (block b{join}
          (load r4 (index_ref (local r5) (int 1)))
          (member r3 r4 "color")
          (swizzle r6 r3 "x")
          (add r0 r0 r6)
          (store (stage {output}) r3)
          (branch b{next}))
"#
        );
        k = next;
    }
    let call = if i == 0 {
        String::new()
    } else {
        format!("\n          (call r0 h{} r0)", i - 1)
    };
    let _ = write!(
        out,
        r#"        (block b{k}{call}
          (return r0)))
"#
    );
}

fn stage(out: &mut String, kind: &str, helpers: usize, blocks: usize) {
    let (iface, output) = match kind {
        "vertex" => (r#"(out clip "clip" Vec4 -1 position)"#, "clip"),
        _ => (r#"(out color "color" Vec4 0 fragment_color)"#, "color"),
    };
    let _ = write!(
        out,
        "  ({kind} main\n    (interface {iface})\n    (functions\n"
    );
    for i in 0..helpers {
        helper(out, i, blocks, output);
    }
    let last = helpers.saturating_sub(1);
    let _ = write!(
        out,
        r#"      (function main "main" Void
        (parameters)
        (registers (register r0 Float) (register r1 Vec4))
        (block entry
          (copy r0 (float 1.0))
          (call r0 h{last} r0)
          (construct r1 r0)
          (store (stage {output}) r1)
          (return)))))
"#
    );
}

/// A module with `helpers` helpers of `blocks` blocks per stage.
fn large_module(helpers: usize, blocks: usize) -> String {
    let mut s = String::from(HEADER);
    stage(&mut s, "vertex", helpers, blocks);
    stage(&mut s, "fragment", helpers, blocks);
    s.push_str(")\n");
    s
}

/// A fragment entry whose CFG is a loop nest of depth `depth`: level `k`
/// has a header `h{k}` (into level k+1 or its latch) and a latch `l{k}`
/// (back to `h{k}` or out to `l{k-1}`). `2 * depth + 2` blocks in all.
fn deep_loops(depth: usize) -> String {
    let mut s = String::from(HEADER);
    s.push_str(
        r#"  (vertex main
    (interface (out clip "clip" Vec4 -1 position))
    (functions
      (function main "main" Void (parameters) (registers (register r0 Vec4))
        (block b (construct r0 (float 1.0)) (store (stage clip) r0) (return)))))
  (fragment main
    (interface (out color "color" Vec4 0 fragment_color))
    (functions
      (function main "main" Void
        (parameters)
        (registers (register r0 Vec4) (register r1 Int) (register r2 Bool) (register r3 Float))
        (block entry
          (copy r1 (int 0))
          (copy r3 (float 0.0))
          (branch h0))
"#,
    );
    for k in 0..depth {
        let inner = if k + 1 < depth {
            format!("h{}", k + 1)
        } else {
            format!("l{k}")
        };
        let outer = if k == 0 {
            "done".to_string()
        } else {
            format!("l{}", k - 1)
        };
        let _ = write!(
            s,
            r#"        (block h{k}
          (add r1 r1 (int 1))
          (less r2 r1 (int 1000))
          (branch_if r2 {inner} l{k}))
        (block l{k}
          (add r3 r3 (float 0.5))
          (greater r2 r3 (float 2.0))
          (branch_if r2 h{k} {outer}))
"#
        );
    }
    s.push_str(
        r#"        (block done
          (construct r0 r3)
          (store (stage color) r0)
          (return))))))
"#,
    );
    s
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("text_module");
    group.sample_size(10);
    let text = generate::module_text(12 << 20);
    let module = vpl::text::read(text.as_bytes(), "text.vpl").expect("generated module verifies");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("read", |b| {
        b.iter(|| vpl::text::read(black_box(text.as_bytes()), "text.vpl").expect("reads"))
    });
    group.bench_function("verify", |b| {
        b.iter(|| vpl::verify::verify(black_box(&module)).expect("verifies"))
    });
    group.finish();

    let mut group = c.benchmark_group("large_module");
    for (helpers, blocks) in [(20, 100), (200, 100)] {
        let text = large_module(helpers, blocks);
        let module = vpl::text::read(text.as_bytes(), "large.vpl").expect("large module verifies");
        let id = format!("{helpers}x{blocks}");
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("read", &id), &text, |b, t| {
            b.iter(|| vpl::text::read(black_box(t.as_bytes()), "large.vpl").expect("reads"))
        });
        group.bench_with_input(BenchmarkId::new("verify", &id), &module, |b, m| {
            b.iter(|| vpl::verify::verify(black_box(m)).expect("verifies"))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("deep_loops");
    for depth in [499, 4999] {
        let text = deep_loops(depth);
        let module = vpl::text::read(text.as_bytes(), "loops.vpl").expect("loop nest verifies");
        let blocks = 2 * depth + 2;
        group.throughput(Throughput::Elements(blocks as u64));
        group.bench_with_input(BenchmarkId::new("read", blocks), &text, |b, t| {
            b.iter(|| vpl::text::read(black_box(t.as_bytes()), "loops.vpl").expect("reads"))
        });
        group.bench_with_input(BenchmarkId::new("verify", blocks), &module, |b, m| {
            b.iter(|| vpl::verify::verify(black_box(m)).expect("verifies"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
