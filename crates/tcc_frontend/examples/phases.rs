//! Times the compile phases on a generated source (profiling aid for the
//! compile benchmark): `cargo run --release -p tcc_frontend --example phases FILE`.

use std::time::Instant;

use tcc_frontend::{Language, LineIndex, codegen, python, typescript};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: phases FILE.py|FILE.ts");
        std::process::exit(2);
    };
    let src = std::fs::read_to_string(&path).unwrap_or_default();
    let lang = Language::from_path(std::path::Path::new(&path)).unwrap_or(Language::Python);
    let t = Instant::now();
    let module = match lang {
        Language::Python => python::lower(&src, "f"),
        Language::TypeScript => typescript::lower(&src, "f"),
        Language::Rust => tcc_frontend::rust::lower(&src, "f"),
    };
    let Ok(module) = module else {
        eprintln!("does not compile");
        std::process::exit(1);
    };
    let t_lower = t.elapsed();
    let t = Instant::now();
    let lines = LineIndex::new(&src);
    let funcs = codegen::generate(&module, lang.semantics(), "f", &lines).unwrap_or_default();
    let t_gen = t.elapsed();
    let n: usize = funcs.iter().map(|f| f.instructions.len()).sum();
    let t = Instant::now();
    let a = tcc_frontend::compile(&src, "f", lang);
    let t_all = t.elapsed();
    let t = Instant::now();
    let bytes = a.map(|a| tcc_ir::encode_artifact(&a).len()).unwrap_or(0);
    let t_enc = t.elapsed();
    println!(
        "parse+lower {:?}, codegen {:?} ({n} instructions), whole compile {:?}, one encode {:?} ({bytes} bytes)",
        t_lower, t_gen, t_all, t_enc
    );
}
