// expect: [9.0, 5.0, 14.0, 3.5, 1.0, -7.0, 1.0, 0.0, 12.5]
use tcc_rust_prelude::Vec;

fn half(x: f64) -> f64 {
    x / 2.0
}

async fn run() -> Vec<f64> {
    let a = 7.0;
    let b = 2.0;
    let mut out: Vec<f64> = Vec::new();
    out.push(a + b);
    out.push(a - b);
    out.push(a * b);
    out.push(half(a));
    out.push(a % b);
    out.push(-a);
    let mut acc = 10.0;
    acc += 2.5;
    let t = a > b && b >= 2.0;
    let f = !t || a < b;
    out.push(if t { 1.0 } else { 0.0 } + 0.0);
    out.push(if f { 1.0 } else { 0.0 });
    out.push(acc);
    out
}
