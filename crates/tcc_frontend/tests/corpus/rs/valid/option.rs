// expect: [{"$tag": "Some", "$0": 4.0}, {"$tag": "None"}, {"$tag": "Some", "$0": 7.0}, {"$tag": "Some", "$0": -1.0}]
use tcc_rust_prelude::Vec;

fn find(xs: Vec<f64>, want: f64) -> Option<f64> {
    let mut i = 0.0;
    for x in xs {
        if x == want {
            return Some(i);
        }
        i += 1.0;
    }
    None
}

fn plus_one(o: Option<f64>) -> Option<f64> {
    let v = o?;
    Some(v + 1.0)
}

fn or_minus(o: Option<f64>) -> f64 {
    match o {
        Some(v) => v,
        None => -1.0,
    }
}

async fn run() -> Vec<Option<f64>> {
    let mut xs = Vec::new();
    for k in 0..6 {
        xs.push(k as f64 * 2.0);
    }
    let mut ys: Vec<f64> = Vec::new();
    ys.push(1.0);
    let mut out = Vec::new();
    out.push(plus_one(find(xs, 6.0)));
    out.push(plus_one(find(ys, 5.0)));
    out.push(Some(or_minus(Some(7.0))));
    out.push(Some(or_minus(None)));
    out
}
