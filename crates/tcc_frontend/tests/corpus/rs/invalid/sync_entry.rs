fn run() -> f64 {
    1.0
}
