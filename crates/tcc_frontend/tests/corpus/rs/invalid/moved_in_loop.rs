// rustc: E0382
use tcc_rust_prelude::Vec;

async fn run() -> f64 {
    let name = String::from("a");
    let mut names = Vec::new();
    for _ in 0..2 {
        names.push(name);
    }
    names.len()
}
