// rustc: E0308
async fn run() -> f64 {
    let x: f64 = 3;
    x
}
