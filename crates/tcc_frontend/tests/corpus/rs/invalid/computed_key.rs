use tcc_rust_prelude::effect;

async fn run() -> Result<f64, String> {
    let key = "charge";
    let v: f64 = effect(key, || 1.0).await?;
    Ok(v)
}
