// rustc: E0728
use tcc_rust_prelude::effect;

fn helper() -> Result<f64, String> {
    let v: f64 = effect("k", || 1.0).await?;
    Ok(v)
}

async fn run() -> Result<f64, String> {
    helper()
}
