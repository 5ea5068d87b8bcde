//! Wall time of each phase of the `irkit vpl glsl` pipeline on the large
//! generated module (best of 5): read, publish (print and read back),
//! compile, the output writes and the drops.
//!
//! `cargo run --release -p vpl --example pipeline_phases`

use std::time::Instant;
use vpl::backends::glsl;

#[path = "../benches/generate.rs"]
mod generate;

fn main() {
    let source = generate::module_text(12 << 20);
    let names = ["read", "publish", "compile", "write", "drop"];
    let mut best = [f64::INFINITY; 5];
    let dir = std::env::temp_dir().join(format!("vpl-phases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for _ in 0..5 {
        let t = Instant::now();
        let module = vpl::text::read_verified(source.as_bytes(), "gen").unwrap();
        best[0] = best[0].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let published = vpl::VerifiedModule::publish(&module).unwrap();
        best[1] = best[1].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let artifact = glsl::compile(&published, glsl::VERSION_420).unwrap();
        best[2] = best[2].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        std::fs::write(dir.join("p.vert"), artifact.vertex_code()).unwrap();
        std::fs::write(dir.join("p.frag"), artifact.fragment_code()).unwrap();
        std::fs::write(dir.join("p.reflect.json"), artifact.reflection_json()).unwrap();
        best[3] = best[3].min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        drop((module, published, artifact));
        best[4] = best[4].min(t.elapsed().as_secs_f64());
    }
    let _ = std::fs::remove_dir_all(&dir);
    for (name, secs) in names.iter().zip(best) {
        println!("{name:8} {:8.1} ms", secs * 1e3);
    }
}
