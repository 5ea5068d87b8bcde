async fn run() -> f64 {
    println!("hi");
    1.0
}
