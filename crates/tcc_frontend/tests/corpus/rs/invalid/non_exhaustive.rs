// rustc: E0004
enum Light {
    Red,
    Amber(f64),
    Green,
}

async fn run() -> f64 {
    let l = Light::Amber(2.0);
    match l {
        Light::Red => 1.0,
        Light::Green => 2.0,
    }
}
