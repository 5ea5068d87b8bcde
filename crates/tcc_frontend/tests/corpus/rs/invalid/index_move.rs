// rustc: E0507
use tcc_rust_prelude::Vec;

async fn run() -> f64 {
    let mut xs: Vec<String> = Vec::new();
    xs.push(String::from("a"));
    let first = xs[0.0];
    if first == "a" { 1.0 } else { 0.0 }
}
