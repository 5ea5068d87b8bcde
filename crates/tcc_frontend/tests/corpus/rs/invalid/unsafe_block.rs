async fn run() -> f64 {
    unsafe { 1.0 }
}
