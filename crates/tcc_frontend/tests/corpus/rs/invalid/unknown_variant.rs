// rustc: E0599
enum Light {
    Red,
    Green,
}

async fn run() -> f64 {
    let l = Light::Blue;
    match l {
        Light::Red => 1.0,
        Light::Green => 2.0,
    }
}
