use tcc_rust_prelude::{effect, Vec};

async fn run(items: Vec<f64>) -> Result<f64, String> {
    let mut total = 0.0;
    for item in items {
        let v: f64 = effect("charge", move || item).await?;
        total = total + v;
    }
    Ok(total)
}
