// rustc: E0308
async fn run() -> f64 {
    let v = if 1.0 > 2.0 { 1.0 } else { false };
    v
}
