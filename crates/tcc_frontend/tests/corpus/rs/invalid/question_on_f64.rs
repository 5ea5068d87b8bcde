// rustc: E0277
fn twice(x: f64) -> Option<f64> {
    let y = x?;
    Some(y * 2.0)
}

async fn run() -> f64 {
    1.0
}
