// expect: [3.0, 30.0, 99.0, 2.0, 1.0]
use tcc_rust_prelude::Vec;

fn total_len(words: Vec<String>) -> f64 {
    let mut n = 0.0;
    for w in words {
        if w == "skip" {
            continue;
        }
        n += 1.0;
    }
    n
}

async fn run() -> Vec<f64> {
    let mut xs: Vec<f64> = Vec::new();
    xs.push(10.0);
    xs.push(20.0);
    xs.push(30.0);
    let mut out = Vec::new();
    out.push(xs.len());
    out.push(xs[2.0]);
    xs[1.0] = 99.0;
    out.push(xs[1.0]);
    let mut words = Vec::new();
    words.push(String::from("a"));
    words.push("skip".to_string());
    words.push(String::from("b"));
    out.push(total_len(words));
    let mut nested: Vec<Vec<f64>> = Vec::new();
    let mut inner = Vec::new();
    inner.push(1.0);
    nested.push(inner);
    out.push(nested.len());
    out
}
