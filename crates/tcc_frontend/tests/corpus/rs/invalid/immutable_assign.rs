// rustc: E0384
async fn run() -> f64 {
    let x = 1.0;
    x = 2.0;
    x
}
