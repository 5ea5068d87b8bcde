// rustc: E0382
fn take(s: String) -> f64 {
    if s == "x" { 1.0 } else { 2.0 }
}

async fn run() -> f64 {
    let s = String::from("x");
    let mut n = 0.0;
    while take(s) > n {
        n += 1.0;
    }
    n
}
