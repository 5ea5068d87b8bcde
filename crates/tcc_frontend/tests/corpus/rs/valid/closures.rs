// expect: [12.0, 7.0, 3.0, 1.0]
use tcc_rust_prelude::Vec;

async fn run() -> Vec<f64> {
    let mut base = 2.0;
    let add = move |x: f64| x + base;
    base = 100.0;
    let scale = |x, k: f64| x * k;
    let name = String::from("id");
    let check = move |s: String| -> f64 {
        if s == "id" && name == "id" {
            1.0
        } else {
            0.0
        }
    };
    let mut out = Vec::new();
    out.push(scale(add(4.0), 2.0) - 0.0 * base);
    out.push(add(5.0));
    out.push(add(scale(0.5, 2.0)));
    out.push(check(String::from("id")));
    out
}
