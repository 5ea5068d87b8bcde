// rustc: E0382
async fn run() -> f64 {
    let s = String::from("a");
    let f = move || if s == "a" { 1.0 } else { 0.0 };
    let t = s;
    f()
}
