// rustc: E0271
use tcc_rust_prelude::{effect, join, Vec};

async fn run() -> Result<f64, String> {
    let v: Vec<Vec<f64>> = join(join(effect("a", || 1.0), effect("b", || 2.0)), effect("c", || 3.0)).await?;
    Ok(v.len())
}
