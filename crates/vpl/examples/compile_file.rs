//! The library steps of `irkit vpl compile FILE --target glsl-420`, once,
//! on a file: read and verify, publish (print, drop the module, read back),
//! compile, write the three outputs. Prints the resident set and its peak
//! after each step (Linux), for profiling the pipeline's memory and, under
//! callgrind, its instructions with line tables
//! (`cargo build --profile profiling -p vpl --example compile_file`).
//!
//! `compile_file FILE OUT_DIR`

use vpl::backends::glsl;

/// A `kB` field of /proc/self/status (Linux).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Prints the resident set and its peak so far.
fn report(step: &str) {
    let mib = |k: Option<u64>| k.unwrap_or(0) as f64 / 1024.0;
    println!(
        "{step:10} resident {:7.1} MiB  peak {:7.1} MiB",
        mib(status_kib("VmRSS:")),
        mib(status_kib("VmHWM:"))
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(file), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: compile_file FILE OUT_DIR");
        std::process::exit(2);
    };
    let bytes = std::fs::read(file).expect("reading the input");
    report("input");
    let verified = vpl::text::read_verified(&bytes, file).expect("a valid module");
    report("read");
    let published = vpl::VerifiedModule::publish_owned(verified).expect("publishing");
    report("publish");
    let artifact = glsl::compile(&published, glsl::VERSION_420).expect("compiling");
    report("compile");
    let out = std::path::Path::new(out);
    std::fs::write(out.join("gen.vert"), artifact.vertex_code()).expect("writing");
    std::fs::write(out.join("gen.frag"), artifact.fragment_code()).expect("writing");
    std::fs::write(out.join("gen.reflect.json"), artifact.reflection_json()).expect("writing");
    report("write");
}
