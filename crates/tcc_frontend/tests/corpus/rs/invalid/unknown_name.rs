// rustc: E0425
async fn run() -> f64 {
    let a = 1.0;
    a + missing
}
