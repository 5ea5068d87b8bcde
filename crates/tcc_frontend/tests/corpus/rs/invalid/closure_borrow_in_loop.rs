// rustc: E0506
async fn run() -> f64 {
    let mut n = 0.0;
    let step = || n + 1.0;
    while n < 3.0 {
        n = step();
    }
    n
}
