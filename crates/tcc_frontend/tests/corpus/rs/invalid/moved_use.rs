// rustc: E0382
fn consume(s: String) -> f64 {
    if s == "x" { 1.0 } else { 0.0 }
}

async fn run() -> f64 {
    let s = String::from("x");
    let n = consume(s);
    n + consume(s)
}
