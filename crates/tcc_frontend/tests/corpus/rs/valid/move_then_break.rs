// expect: [1.0, 2.0]
use tcc_rust_prelude::Vec;

fn take(s: String) -> f64 {
    if s == "x" { 1.0 } else { 2.0 }
}

async fn run() -> Vec<f64> {
    let mut out = Vec::new();
    let first = String::from("x");
    loop {
        let n = take(first);
        out.push(n);
        break;
    }
    let second = String::from("y");
    let mut k = 0.0;
    while k < 5.0 {
        k += 1.0;
        if k > 1.0 {
            out.push(take(second));
            break;
        }
    }
    out
}
