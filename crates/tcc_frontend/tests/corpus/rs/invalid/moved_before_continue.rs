// rustc: E0382
fn take(s: String) -> f64 {
    if s == "x" { 1.0 } else { 2.0 }
}

async fn run() -> f64 {
    let s = String::from("x");
    let mut n = 0.0;
    loop {
        n += take(s);
        if n > 3.0 {
            continue;
        }
        break;
    }
    n
}
