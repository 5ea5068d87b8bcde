// rustc: E0277
use tcc_rust_prelude::effect;

async fn run() -> f64 {
    let v: f64 = effect("k", || 1.0).await?;
    v
}
