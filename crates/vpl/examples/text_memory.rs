//! Peak memory of reading and writing a generated module, relative to the
//! input size (Linux: peak resident set from /proc/self/status).
//!
//! `cargo run --release -p vpl --example text_memory [MEGABYTES]`

#[path = "../benches/generate.rs"]
mod generate;

fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let mb: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(12);
    // The generator's text is already in canonical layout.
    let text = generate::module_text(mb << 20);
    let input = text.len() as f64;
    let before = peak_kib().unwrap_or(0);
    let start = std::time::Instant::now();
    let module = vpl::text::read(text.as_bytes(), "gen").expect("valid");
    let read_time = start.elapsed();
    let after_read = peak_kib().unwrap_or(0);
    let start = std::time::Instant::now();
    let written = vpl::text::write(&module).expect("writes");
    let write_time = start.elapsed();
    let after_write = peak_kib().unwrap_or(0);
    assert_eq!(written.len(), text.len());
    let kib = 1024.0;
    println!("input: {:.1} MB", input / 1e6);
    println!(
        "read:  {:.0} MB/s, peak growth {:.1} MB = {:.2}x input",
        input / 1e6 / read_time.as_secs_f64(),
        (after_read.saturating_sub(before)) as f64 * kib / 1e6,
        (after_read.saturating_sub(before)) as f64 * kib / input
    );
    println!(
        "write: {:.0} MB/s, peak growth over the read module {:.1} MB = {:.2}x input",
        input / 1e6 / write_time.as_secs_f64(),
        (after_write.saturating_sub(after_read)) as f64 * kib / 1e6,
        (after_write.saturating_sub(after_read)) as f64 * kib / input
    );
    println!(
        "peak resident set overall: {:.1} MB = {:.2}x input",
        after_write as f64 * kib / 1e6,
        after_write as f64 * kib / input
    );
}
