// rustc: E0596
use tcc_rust_prelude::Vec;

async fn run() -> f64 {
    let xs: Vec<f64> = Vec::new();
    xs.push(1.0);
    xs.len()
}
