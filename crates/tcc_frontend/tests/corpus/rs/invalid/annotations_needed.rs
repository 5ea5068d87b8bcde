// rustc: E0282
use tcc_rust_prelude::Vec;

async fn run() -> f64 {
    let xs = Vec::new();
    xs.len()
}
