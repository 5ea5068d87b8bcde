//! Runs one phase repeatedly on a generated module, for `perf stat`:
//! `perf stat -e task-clock target/release/examples/text_cpu read 5`
//! (phases: gen, utf8, read, write, verify). `utf8` is the baseline of the
//! `text` bench (UTF-8 validation plus a byte scan); `gen` alone measures
//! the fixed setup cost to subtract.
//!
//! `text_cpu rounds 15` interleaves all phases in one process for that many
//! rounds and prints the fastest wall time of each with its ratio to the
//! UTF-8 baseline of the same run: on a shared machine the minimum over
//! interleaved rounds is the figure least disturbed by other load. These
//! are wall times: with two cores, read, write and verify use both.

#[path = "../benches/generate.rs"]
mod generate;

fn main() {
    let mut args = std::env::args().skip(1);
    let phase = args.next().unwrap_or_else(|| "read".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let text = generate::module_text(12 << 20);
    let module = (phase != "gen" && phase != "utf8")
        .then(|| vpl::text::read(text.as_bytes(), "gen").expect("valid"));
    if phase == "rounds" {
        rounds(&text, module.as_ref().expect("read"), n);
        return;
    }
    let start = std::time::Instant::now();
    for _ in 0..n {
        match (phase.as_str(), &module) {
            ("read", _) => drop(std::hint::black_box(
                vpl::text::read(text.as_bytes(), "gen").unwrap(),
            )),
            ("write", Some(m)) => drop(std::hint::black_box(vpl::text::write(m).unwrap())),
            ("verify", Some(m)) => drop(vpl::verify::verify(m).unwrap()),
            ("utf8", _) => {
                let s = std::str::from_utf8(std::hint::black_box(text.as_bytes())).unwrap();
                std::hint::black_box(s.bytes().filter(|&c| c == b'(').count());
            }
            _ => {}
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{phase}: {:.1} MB x {n} in {secs:.2} s wall = {:.0} MB/s",
        text.len() as f64 / 1e6,
        text.len() as f64 * n as f64 / 1e6 / secs
    );
}

/// Interleaved rounds of every phase; prints the minimum of each.
fn rounds(text: &str, module: &vpl::ir::Module, n: usize) {
    use std::hint::black_box;
    use std::time::Instant;
    let bytes = text.as_bytes();
    let mut best = [f64::INFINITY; 4];
    for _ in 0..n.max(1) {
        let t = Instant::now();
        for _ in 0..10 {
            let s = std::str::from_utf8(black_box(bytes)).unwrap();
            black_box(s.bytes().filter(|&c| c == b'(').count());
        }
        best[0] = best[0].min(t.elapsed().as_secs_f64() / 10.0);
        let t = Instant::now();
        drop(black_box(vpl::text::read(bytes, "gen").unwrap()));
        best[1] = best[1].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        drop(black_box(vpl::text::write(module).unwrap()));
        best[2] = best[2].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        vpl::verify::verify(black_box(module)).unwrap();
        best[3] = best[3].min(t.elapsed().as_secs_f64());
    }
    let mb = bytes.len() as f64 / 1e6;
    println!("{mb:.1} MB module, fastest of {n} interleaved rounds:");
    for (name, secs) in ["utf8", "read", "write", "verify"].iter().zip(best) {
        println!(
            "  {name:<6} {:8.2} ms {:8.0} MB/s {:6.1}x the utf8 baseline",
            secs * 1e3,
            mb / secs,
            secs / best[0]
        );
    }
}
