// rustc: E0308
async fn run() -> f64 {
    if 1.0 > 0.0 {
        return String::from("no");
    }
    1.0
}
