// rustc: E0277
fn half(x: f64) -> Result<f64, String> {
    Ok(x / 2.0)
}

async fn run() -> f64 {
    let h = half(4.0)?;
    h
}
