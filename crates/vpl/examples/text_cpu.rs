//! Runs one phase repeatedly on a generated module, for `perf stat`:
//! `perf stat -e task-clock target/release/examples/text_cpu read 5`
//! (phases: gen, utf8, read, write, verify). `utf8` is the baseline of the
//! `text` bench (UTF-8 validation plus a byte scan); `gen` alone measures
//! the fixed setup cost to subtract.

#[path = "../benches/generate.rs"]
mod generate;

fn main() {
    let mut args = std::env::args().skip(1);
    let phase = args.next().unwrap_or_else(|| "read".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let text = generate::module_text(12 << 20);
    let module = (phase != "gen" && phase != "utf8")
        .then(|| vpl::text::read(text.as_bytes(), "gen").expect("valid"));
    let start = std::time::Instant::now();
    for _ in 0..n {
        match (phase.as_str(), &module) {
            ("read", _) => drop(std::hint::black_box(
                vpl::text::read(text.as_bytes(), "gen").unwrap(),
            )),
            ("write", Some(m)) => drop(std::hint::black_box(vpl::text::write(m).unwrap())),
            ("verify", Some(m)) => vpl::verify::verify(m).unwrap(),
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
