async fn run() -> f64 {
    let mut n = 1.0;
    let mut bump = move || {
        n = n + 1.0;
        n
    };
    bump()
}
