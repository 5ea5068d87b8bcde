// rustc: E0609
struct P {
    x: f64,
}

async fn run() -> f64 {
    let p = P { x: 1.0 };
    p.y
}
