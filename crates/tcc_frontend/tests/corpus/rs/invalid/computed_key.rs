// rustc: E0277
use tcc_rust_prelude::effect;

async fn run() -> Result<f64, String> {
    let v: f64 = effect(2.0, || 1.0).await?;
    Ok(v)
}
