// rustc: E0267
async fn run() -> f64 {
    break;
}
