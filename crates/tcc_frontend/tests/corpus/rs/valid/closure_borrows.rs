// expect: 17
async fn run() -> f64 {
    let mut x = 1.0;
    let f = || x + 1.0;
    let y = f() * 10.0;
    x = 2.0;
    let mut n = 0.0;
    let h = || x * 3.0;
    n += h();
    x += n;
    let mut total = y + x;
    loop {
        let g = || total;
        total = g() + 1.0;
        if total > 0.0 {
            break;
        }
    }
    let keep = move || x;
    x = 0.0;
    total + keep() - 20.0 + x
}
