// rustc: E0004
async fn run() -> f64 {
    let o = Some(1.0);
    match o {
        Some(v) => v,
    }
}
