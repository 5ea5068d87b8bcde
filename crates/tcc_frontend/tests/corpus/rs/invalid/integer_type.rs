async fn run() -> f64 {
    let n: i32 = 3;
    1.0
}
