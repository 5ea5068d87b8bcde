// expect: [55.0, 120.0, 1.0]
use tcc_rust_prelude::Vec;

fn fib(n: f64) -> f64 {
    if n < 2.0 {
        n
    } else {
        fib(n - 1.0) + fib(n - 2.0)
    }
}

fn fact(n: f64) -> f64 {
    let mut acc = 1.0;
    let mut k = n;
    while k > 1.0 {
        acc = acc * k;
        k -= 1.0;
    }
    acc
}

fn nothing() {}

fn sign(x: f64) -> f64 {
    nothing();
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

async fn run() -> Vec<f64> {
    let mut out = Vec::new();
    out.push(fib(10.0));
    out.push(fact(5.0));
    out.push(sign(fact(3.0)));
    out
}
