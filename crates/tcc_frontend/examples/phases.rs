//! Times the compile phases on a source (profiling aid for the compile
//! benchmark) in process CPU time, best of `N` runs each (default 5):
//! `cargo run --release -p tcc_frontend --example phases FILE [N]`;
//! `… FILE N compile` runs only the whole compile, `N` times.
//! Under valgrind the hash is slower than natively: valgrind does not
//! emulate the SHA extensions, so `sha2` falls back to its portable code.

use std::time::Duration;

use tcc_frontend::{Language, LineIndex, codegen, parse_only, python, typescript};

/// CPU time of this process (all threads): it does not grow when other
/// jobs share the cores, as wall time does.
fn cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

fn best<T>(n: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..n {
        let t = cpu_time();
        let v = f();
        best = best.min(cpu_time().saturating_sub(t));
        last = Some(v);
    }
    match last {
        Some(v) => (best, v),
        None => (best, f()),
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: phases FILE.py|FILE.ts [N [compile]]");
        std::process::exit(2);
    };
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5).max(1);
    let src = std::fs::read_to_string(&path).unwrap_or_default();
    let lang = Language::from_path(std::path::Path::new(&path)).unwrap_or(Language::Python);
    if args.next().as_deref() == Some("compile") {
        // Only the whole compile, `n` times (for a profiler).
        for _ in 0..n {
            drop(tcc_frontend::compile(&src, "f", lang));
        }
        return;
    }
    let (t_parse, _) = best(n, || parse_only(&src, lang));
    let (t_lower, module) = best(n, || match lang {
        Language::Python => python::lower(&src, "f"),
        Language::TypeScript => typescript::lower(&src, "f"),
        Language::Rust => tcc_frontend::rust::lower(&src, "f"),
    });
    let Ok(module) = module else {
        eprintln!("does not compile");
        std::process::exit(1);
    };
    let lines = LineIndex::new(&src);
    let (t_gen, funcs) = best(n, || {
        codegen::generate(&module, lang.semantics(), "f", &lines).unwrap_or_default()
    });
    let count: usize = funcs.iter().map(|f| f.instructions.len()).sum();
    let (t_all, artifact) = best(n, || tcc_frontend::compile(&src, "f", lang));
    let Ok(artifact) = artifact else {
        eprintln!("does not compile");
        std::process::exit(1);
    };
    let (t_hash, _) = best(n, || tcc_ir::compute_hash(&artifact));
    let (t_valid, _) = best(n, || {
        tcc_ir::validate(
            &artifact,
            &tcc_ir::FeatureSet::all_engine_features(),
            &tcc_ir::FeatureSet::all_host_capabilities(),
        )
    });
    let (t_enc, bytes) = best(n, || tcc_ir::encode_artifact(&artifact).len());
    let (t_drop, _) = best(n, || drop(artifact.clone()));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{count} instructions, {bytes} bytes; best of {n} (ms): parse {:.1}, parse+lower {:.1}, codegen {:.1}, hash {:.1}, validate {:.1}, encode {:.1}, clone+drop {:.1}; whole compile {:.1} = {:.2}x parse",
        ms(t_parse),
        ms(t_lower),
        ms(t_gen),
        ms(t_hash),
        ms(t_valid),
        ms(t_enc),
        ms(t_drop),
        ms(t_all),
        ms(t_all) / ms(t_parse)
    );
}
