// rustc: E0506
async fn run() -> f64 {
    let mut x = 1.0;
    let f = || x;
    x = 2.0;
    f()
}
